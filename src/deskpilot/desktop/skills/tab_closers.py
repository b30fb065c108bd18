"""GTK 3 notebook tabs' close buttons: not on the accessibility bus, found where they are drawn.

GTK 3 exposes a notebook's tab as a ``page-tab`` node (GtkNotebookPageAccessible) whose
extents are those of the GtkLabel found in the tab's label widget and whose one child is the
page; the label widget itself, and a close button packed beside the label in it, are not on
the bus at all (gtk-3-24 ``gtk/a11y/gtknotebookpageaccessible.c``: ``get_extents`` asks the
label, ``ref_child`` gives the page, no Action interface; the notebook's own children are the
page tabs). Mousepad's, xfce4-terminal's and Inkscape's docked dialogs' tabs could only be
closed by a screenshot point or the app's shortcut.

**Read.** A page tab of that signature (none of its children lies inside it) in a row of tabs
is looked at on screen, right of its label: a *glyph* (pixels unlike the tab's background)
starting within :data:`GAP_PX` of the label's right edge, within the label's height, and ending
:data:`MARGIN_PX` before the next tab's label (or the tab list's edge) is read as a child of the
tab: ``button (drawn beside the tab's name: its close button; not on the accessibility bus)``,
with an ID of its own. Nothing is moved for it (no hover at read time).

**Act** (:mod:`.tab_closing`). The glyph is found again, the pointer hovers it, and the toolkit
must answer as a button does: it draws a button around it (prelight) — a box of changed pixels
holding the glyph, starting at most :data:`GAP_PX` right of the label and ending before the next
tab's label. Only then does the pointer click, at that box's centre: a point of the tab's own
label widget, never a neighbour's. Nothing reacting, or a box reaching past the gap, is a
failure that clicks nothing. The result says whether the tab is gone (a "save changes?" question
the app asks instead is reported by the action's window changes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from deskpilot.desktop.base import LiveElement, Node, Rect, WindowInfo
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.errors import DeskpilotError

if TYPE_CHECKING:
    from PIL import Image

    from deskpilot.desktop.skills.pixels import Pixels

#: What a drawn close button's key adds to its tab's object path (a path no app has).
SUFFIX = "/deskpilot-drawn-close"
#: What the read says of it (shown in parentheses after ``button``).
HINT = "drawn beside the tab's name: its close button; not on the accessibility bus"
#: How far right of the label's edge a close button may start (the label widget's spacing).
GAP_PX = 12
#: How far above and below the label a hovered button may reach (it is in the label's box).
BAND_PX = 3
#: How far before the next tab's label (or the tab list's edge) a glyph must end.
MARGIN_PX = 4
#: A glyph's size (px): smaller is a speck, larger is not an icon.
GLYPH_MIN, GLYPH_MAX = 5, 32
#: How far (largest channel difference) a pixel must be from the background to be drawn ink.
INK = 48
#: How long the toolkit has to draw a hovered button (GTK: the next frame).
PRELIGHT_S = 1.0
#: How long a closed tab has to leave the tab list.
GONE_S = 2.0


def drawn_close_key(tab: ElementKey) -> ElementKey:
    return (tab[0], tab[1] + SUFFIX)


def tab_of(key: ElementKey) -> ElementKey | None:
    """The tab a drawn close button's key belongs to; None for any other key."""
    bus, path = key
    return (bus, path[: -len(SUFFIX)]) if path.endswith(SUFFIX) else None


@dataclass(frozen=True)
class Strip:
    """Where a tab's close button may be drawn (screen coordinates)."""

    label: Rect  # the tab's label (the page tab's extents)
    end: int  # x where the next tab's label or the tab list ends


def strips(root: Node) -> dict[ElementKey, Strip]:
    """The GTK 3 page tabs under ``root`` (label extents, none of their children inside them)
    in rows of tabs, each with the strip right of its label."""
    found: dict[ElementKey, Strip] = {}
    for tablist in root.walk():
        if tablist.role != "page-tab-list" or tablist.bounds is None:
            continue
        shown = [t for t in tablist.children if t.bounds is not None and not t.bounds.empty]
        for tab in (t for t in shown if _gtk3_tab(t)):
            b = tab.bounds
            assert b is not None  # _gtk3_tab
            row = [o.bounds for o in shown if o is not tab and o.bounds is not None]
            if any(o.y >= b.y + b.height or o.y + o.height <= b.y for o in row):
                continue  # not a row of tabs side by side (tabs on the left or right)
            after = [o.x for o in row if o.x >= b.x + b.width]
            end = min(after, default=tablist.bounds.x + tablist.bounds.width)
            found[tab.key] = Strip(b, end)
    return found


def _gtk3_tab(node: Node) -> bool:
    b = node.bounds
    if node.role != "page-tab" or b is None or b.empty or "showing" not in node.states:
        return False
    return not any(
        c.bounds is not None and not c.bounds.empty and _inside(c.bounds, b)
        for c in node.walk()[1:]
    )


def _inside(inner: Rect, outer: Rect) -> bool:
    return (
        inner.x >= outer.x
        and inner.y >= outer.y
        and inner.x + inner.width <= outer.x + outer.width
        and inner.y + inner.height <= outer.y + outer.height
    )


def glyph(image: Image.Image, origin: tuple[int, int], strip: Strip) -> Rect | None:
    """The box (screen coordinates) of the first glyph drawn right of the strip's label, when
    it starts within GAP_PX of it, is icon-sized and ends MARGIN_PX before the strip's end."""
    lab = strip.label
    left, top = lab.x + lab.width - origin[0], lab.y - origin[1]
    right = min(strip.end - origin[0], image.width)
    if top < 0 or left < 0 or right - left < GLYPH_MIN or top + lab.height > image.height:
        return None
    box = ink(image.crop((left, top, right, top + lab.height)).convert("RGB"))
    if box is None:
        return None
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    if x0 > GAP_PX or not (GLYPH_MIN <= w <= GLYPH_MAX and GLYPH_MIN <= h <= GLYPH_MAX):
        return None
    if left + x1 > right - MARGIN_PX:
        return None  # it runs up to the next tab: not a button of this one's
    return Rect(left + x0 + origin[0], top + y0 + origin[1], w, h)


def ink(image: Image.Image) -> tuple[int, int, int, int] | None:
    """The box (x0, y0, x1, y1) of the first run of columns holding pixels unlike the strip's
    background (its most common colour), columns at most 2 px apart; None when all is
    background."""
    pixels = image.load()
    assert pixels is not None
    counts = image.getcolors(image.width * image.height) or []
    background = max(counts)[1] if counts else (0, 0, 0)
    first = last = -1
    rows: list[int] = []
    for x in range(image.width):
        hits = [y for y in range(image.height) if _far(pixels[x, y], background)]
        if hits:
            if first < 0:
                first = x
            elif x - last > 3:
                break
            last = x
            rows += hits
        elif first >= 0 and x - last > 3:
            break
    if first < 0:
        return None
    return first, min(rows), last + 1, max(rows) + 1


def _far(pixel: object, background: object) -> bool:
    a, b = pixel, background
    assert isinstance(a, tuple) and isinstance(b, tuple)
    return max(abs(int(p) - int(q)) for p, q in zip(a[:3], b[:3], strict=True)) >= INK


def add_drawn_closers(root: Node, image: Image.Image, origin: tuple[int, int]) -> int:
    """Add to each GTK 3 page tab under ``root`` the close button drawn beside its label
    (a child node, first); returns how many were found."""
    found = 0
    tabs = {n.key: n for n in root.walk() if n.role == "page-tab"}
    for key, strip in strips(root).items():
        box = glyph(image, origin, strip)
        if box is None:
            continue
        tab = tabs[key]
        button = Node(
            key=drawn_close_key(key),
            role="push-button",
            states=frozenset({"showing", "visible", "enabled", "sensitive"}),
            bounds=box,
            parent_key=key,
            hint=HINT,
        )
        tab.children.insert(0, button)
        found += 1
    return found


def changed_box(before: Image.Image, after: Image.Image) -> tuple[int, int, int, int] | None:
    """The box of pixels that differ between two images of the same place."""
    from PIL import ImageChops

    diff = ImageChops.difference(before.convert("RGB"), after.convert("RGB")).convert("L")
    return diff.point(lambda v: 255 if v >= INK // 2 else 0).getbbox()


def button_box(drawn: Rect, changed: Rect | None, strip: Strip) -> Rect | None:
    """The hovered button (screen coordinates), when what the hover changed is one: a box
    holding the glyph, starting at most GAP_PX right of the label, ending before the strip's
    end."""
    if changed is None:
        return None
    lab = strip.label
    right = lab.x + lab.width
    holds = _inside(drawn, changed)
    if not holds or changed.x < right - 1 or changed.x - right > GAP_PX:
        return None
    if changed.x + changed.width > strip.end - 1:
        return None
    return changed


async def find_drawn_closers(pixels: Pixels, window: WindowInfo, root: Node) -> int:
    """Add the drawn close buttons of the window's GTK 3 tabs to ``root`` (one capture, only
    when it has such tabs); how many were found."""
    if not strips(root):
        return 0
    try:
        image = await pixels.capture_image(window)
    except DeskpilotError:
        return 0  # minimized, or gone meanwhile: the read says what it can without them
    return add_drawn_closers(root, image, (window.geometry.x, window.geometry.y))


def drawn_live(key: ElementKey, tab: LiveElement | None) -> LiveElement | None:
    """A drawn close button as a live element: there while its tab is."""
    if tab is None or "defunct" in tab.states:
        return None
    states = frozenset({"showing", "visible", "enabled", "sensitive"} & tab.states)
    return LiveElement(
        key=key,
        pid=tab.pid,
        role="push-button",
        name="",
        parent_key=tab.key,
        states=states,
        bounds=None,
    )


def find(root: Node, key: ElementKey) -> Node | None:
    return next((n for n in root.walk() if n.key == key), None)
