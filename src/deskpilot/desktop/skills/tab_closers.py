"""GTK 3 notebook tabs' close buttons: not on the accessibility bus, found where they are drawn.

GTK 3 exposes a notebook's tab as a ``page-tab`` node (GtkNotebookPageAccessible) whose
extents are those of the GtkLabel found in the tab's label widget and whose one child is the
page; the label widget itself, and a close button packed beside the label in it, are not on
the bus at all (gtk-3-24 ``gtk/a11y/gtknotebookpageaccessible.c``: ``get_extents`` asks the
label, ``ref_child`` gives the page, no Action interface; the notebook's own children are the
page tabs). Mousepad's, xfce4-terminal's and Inkscape's docked dialogs' tabs could only be
closed by a screenshot point or the app's shortcut.

**Read.** A page tab of that signature (none of its children lies inside it) in a row of tabs
is looked at on screen, right of its label: the first *glyph* (icon-sized pixels unlike the
tab's background, within the label's height) there — right beside the label (Mousepad, whose
label fills the tab) or at the tab's far end (xfce4-terminal's) — is read as a child of the tab:
``button (drawn beside the tab's name: its close button; not on the accessibility bus)``, with
an ID of its own, unless it ends within :data:`LEAD_PX` of the next tab's label (that tab's own
icon, as gedit's tabs lead with one) or the tab list's edge. Nothing is moved for it (no hover
at read time).

**Act** (:mod:`.tab_closing`). The glyph is found again, the pointer hovers it, and the toolkit
must answer as a button does: it draws a button around it (prelight) — a box of changed pixels
holding the glyph, right of the label and ending before the next tab's label. Only then does the
pointer click, at that box's centre: a point of the tab's own label widget, never a neighbour's.
Nothing reacting, or a box reaching past the gap, is a failure that clicks nothing. The result
says whether the tab is gone (a "save changes?" question the app asks instead is reported by the
action's window changes)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
#: How far above and below the label a hovered button may reach (it is in the label's box).
BAND_PX = 3
#: How far before the next tab's label (or the tab list's edge) a glyph must end: nearer, it is
#: the next tab's leading icon.
LEAD_PX = 12
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
    it is icon-sized and ends LEAD_PX before the strip's end."""
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
    if not (GLYPH_MIN <= w <= GLYPH_MAX and GLYPH_MIN <= h <= GLYPH_MAX):
        return None
    if left + x1 > right - LEAD_PX:
        return None  # up against the next tab's label: its icon, not a button of this one's
    return Rect(left + x0 + origin[0], top + y0 + origin[1], w, h)


def ink(image: Image.Image) -> tuple[int, int, int, int] | None:
    """The box (x0, y0, x1, y1) of the first run of columns holding pixels unlike the strip's
    background (its most common colour), columns at most 3 px apart; None when all is
    background."""
    from PIL import Image as Images
    from PIL import ImageChops

    counts = image.getcolors(image.width * image.height) or []
    common = max(counts)[1] if counts else (0, 0, 0)
    background = tuple(common) if isinstance(common, tuple) else (common, common, common)
    r, g, b = ImageChops.difference(image, Images.new("RGB", image.size, background)).split()
    mask = ImageChops.lighter(ImageChops.lighter(r, g), b).point(lambda v: 255 if v >= INK else 0)
    data, width, height = mask.tobytes(), mask.width, mask.height
    first = last = -1
    for x in range(width):
        if data[x::width].count(0) == height:
            if first >= 0 and x - last > 3:
                break
            continue
        if first >= 0 and x - last > 3:
            break
        first = x if first < 0 else first
        last = x
    if first < 0:
        return None
    rows = mask.crop((first, 0, last + 1, height)).getbbox()
    assert rows is not None  # a column of the run has ink
    return first, rows[1], last + 1, rows[3]


def add_drawn_closers(root: Node, image: Image.Image, origin: tuple[int, int]) -> int:
    """Add to each GTK 3 page tab under ``root`` the close button drawn beside its label
    (a child node, first); returns how many were found."""
    return attach(root, {key: glyph(image, origin, s) for key, s in strips(root).items()})


def attach(root: Node, boxes: dict[ElementKey, Rect | None]) -> int:
    """Add a drawn close button (a child node, first) to each tab of ``boxes`` found drawn."""
    found = 0
    for tab in root.walk():
        box = boxes.get(tab.key) if tab.role == "page-tab" else None
        if box is None:
            continue
        button = Node(
            key=drawn_close_key(tab.key),
            role="push-button",
            states=frozenset({"showing", "visible", "enabled", "sensitive"}),
            bounds=box,
            parent_key=tab.key,
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
    holding the glyph, right of the label, ending before the strip's end."""
    if changed is None:
        return None
    lab = strip.label
    right = lab.x + lab.width
    holds = _inside(drawn, changed)
    if not holds or changed.x < right - 1:
        return None
    if changed.x + changed.width > strip.end - 1:
        return None
    return changed


class DrawnClosers:
    """The drawn close buttons of windows' GTK 3 tabs, found once while the tabs' strips hold
    still: a read of a window with such tabs takes a checksum of the strips, and one capture
    of the window only when they changed (~5 ms of CPU for Mousepad's 640x480)."""

    def __init__(self, pixels: Pixels) -> None:
        self.pixels = pixels
        #: window → the strips looked at, their pixels' checksum, what was found in them
        self._seen: dict[int, tuple[dict[ElementKey, Strip], int | None, dict[Any, Rect | None]]]
        self._seen = {}
        #: windows whose last read had such tabs (their pixels looked at on every read)
        self._watched: set[int] = set()

    def watches(self, handle: int) -> bool:
        """Whether the window's last read had GTK 3 tabs whose close buttons are looked for in
        its pixels (which a hover may change with no event)."""
        return handle in self._watched

    async def add(self, window: WindowInfo, root: Node) -> int:
        """Add the drawn close buttons of the window's GTK 3 tabs to ``root``; how many."""
        found = strips(root)
        if not found:
            self._seen.pop(window.handle, None)
            self._watched.discard(window.handle)
            return 0
        self._watched.add(window.handle)
        digest = self.pixels.grab.checksum(_region(found.values()))
        known = self._seen.get(window.handle)
        if known is not None and digest is not None and known[:2] == (found, digest):
            return attach(root, known[2])
        try:
            image = await self.pixels.capture_image(window)
        except DeskpilotError:
            return 0  # minimized, or gone meanwhile: the read says what it can without them
        origin = (window.geometry.x, window.geometry.y)
        boxes: dict[Any, Rect | None] = {k: glyph(image, origin, s) for k, s in found.items()}
        self._seen[window.handle] = (found, digest, boxes)
        return attach(root, boxes)


def _region(found: Iterable[Strip]) -> tuple[int, int, int, int]:
    """The screen region (left, top, width, height) holding every strip."""
    boxes = [
        (s.label.x + s.label.width, s.label.y, s.end, s.label.y + s.label.height) for s in found
    ]
    left, top = min(b[0] for b in boxes), min(b[1] for b in boxes)
    return left, top, max(b[2] for b in boxes) - left, max(b[3] for b in boxes) - top


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
