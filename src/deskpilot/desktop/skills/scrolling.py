"""Scrolling a window's main content or one element, and telling whether anything moved.

With an element that offers scroll actions (Chromium's ``scrollDown``… on an ``overflow``
area) those are used: no focus, no pointer, about a page each. Otherwise the wheel turns over
the element's (or the main area's) visible centre, with the window activated for it.

Whether anything moved is judged on the scrolled area's content — where its first children
are, and the values of its scroll bars — or on its picture, where the content shows moved (rows
found again at another offset: :mod:`.shift`), never on its pixels merely changing, so a ticking
clock is not movement. The picture counts because the tree can trail it: Chromium sends no
event when a page scrolls, and under load its children's extents followed a scroll more than
1.5 s late (a scroll said "nothing moved" while the page had moved). An area without children
is judged on its own pixels. After a move the reader waits until the content is still and the
accessibility tree shows it — unless the area has no children, and so nothing in the tree to
move.

One scroll moves at most about one view, keeping a part of the old view in sight: a scroll
action (about 80% of a page) once; wheel notches no more than fit in 75% of the view, a notch
counted at the larger of 120 px (Chromium's, the largest seen) and GTK's ``view ** (2/3)``.
Content is never skipped between two reads; more scrolls move further.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, Node, Rect, ScrollDirection, Snapshot, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.aiming import visible_center
from deskpilot.desktop.skills.pixels import Pixels
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.desktop.skills.reading import Reading
from deskpilot.desktop.skills.shift import content_offset
from deskpilot.errors import ActionFailed, DesktopError, NotAnswering

if TYPE_CHECKING:
    from PIL import Image

#: Roles of areas that scroll, to pick the window's main one (the largest on screen).
SCROLLISH = frozenset(
    {"scroll-pane", "document-web", "document-text", "document-frame", "text", "list",
     "list-box", "table", "tree", "tree-table", "viewport", "canvas"}
)  # fmt: skip
#: Children whose positions make an area's content signature.
SIGNATURE_CHILDREN = 32
#: Pixels one wheel notch scrolls at most, as seen (Chromium: 120 px in a 690 px view; GTK's
#: grows with the view, ``view ** (2/3)``).
NOTCH_PX = 120
#: One scroll moves at most this share of the view, so what was at its far edge stays in
#: sight (no content skipped between two reads).
VIEW_SHARE = 0.75
_ACTION_OF = {"down": "scrolldown", "up": "scrollup", "left": "scrollleft", "right": "scrollright"}

Signature = tuple[object, ...]


class Scrolling:
    """Scrolling, judged on content."""

    def __init__(self, ports: Ports, reading: Reading, raw: RawInput, pixels: Pixels) -> None:
        self.a11y = ports.a11y
        self.input = ports.input
        self.reading = reading
        self.raw = raw
        self.pixels = pixels

    async def scroll(
        self,
        window: WindowInfo,
        direction: ScrollDirection,
        steps: int,
        key: ElementKey | None = None,
    ) -> tuple[ActionOutcome, bool]:
        snap = await self.reading.snapshot(window, timeout=2.0, fresh=True)
        if snap.unanswered:  # a frozen app cannot scroll: say so rather than "nothing moved"
            raise NotAnswering(f"{window.app.name} did not answer before scrolling")
        area = snap.find(key) if key is not None else main_area(window, snap)
        if key is not None and area is None:
            raise ActionFailed("the element is not in the window any more; read it again")
        before = await self._content(window, area)
        # what a person sees: the tree can trail it (the area's picture, when the tree judges)
        picture = None if area is None or _by_pixels(before) else await self._picture(window, area)
        before_tree = _layout(snap)
        outcome = None
        if key is not None and area is not None:
            outcome = await self._scroll_by_actions(area, direction, steps)
        if outcome is None:
            outcome = await self._wheel_over(window, area, direction, steps)
        moved = await self._moves(window, area, before, picture, direction in ("up", "down"))
        if moved:
            await self._until_still(window, area)  # smooth scrolling
            if area is None or not _by_pixels(before):
                # an area with no accessible children (a text view, a canvas: judged on its
                # pixels) has nothing in the tree that could follow: waiting for it would
                # only time out
                await self._tree_follows(window, before_tree)
        return outcome, moved

    async def _scroll_by_actions(
        self, area: Node, direction: ScrollDirection, steps: int
    ) -> ActionOutcome | None:
        """Scroll with the element's own scroll actions, if it has them (no focus needed)."""
        names = await self.a11y.action_names(area.key)
        wanted = _ACTION_OF[direction]
        if wanted not in names:
            return None
        # one action moves most of a page already: one per scroll (no content skipped)
        await self.a11y.do_action(area.key, names.index(wanted))
        name = {"down": "scrollDown", "up": "scrollUp", "left": "scrollLeft"}.get(
            direction, "scrollRight"
        )
        return ActionOutcome("atspi", f"AT-SPI action '{name}'")

    async def _wheel_over(
        self, window: WindowInfo, area: Node | None, direction: ScrollDirection, steps: int
    ) -> ActionOutcome:
        rect = area.bounds if area is not None and area.bounds is not None else window.geometry
        seen = _intersection(rect, window.geometry) or rect
        steps = min(
            steps, notches_in_view(seen.width if direction in ("left", "right") else seen.height)
        )
        x, y = visible_center(rect, window.geometry) or window.geometry.center
        async with self.raw.session(window) as outcome:
            pointer = await self.input.pointer()
            await self.input.move(x, y)
            for _ in range(steps):
                await self.input.wheel(direction, 1)
                await asyncio.sleep(0.01)  # let the app process each notch
            await self.input.move(*pointer)
        return outcome.done(f"{steps} wheel steps {direction} at ({x}, {y})")

    # -- has anything moved? ---------------------------------------------------------------

    async def _content(self, window: WindowInfo, area: Node | None) -> Signature:
        """Where the area's content is: its first children's positions (live), else the
        pixels of the area (or of the window, when there is no area)."""
        if area is not None:
            positions = await self._child_positions(area.key)
            if positions:
                return positions
        rect = area.bounds if area is not None and area.bounds is not None else window.geometry
        return (await self._pixels_of(window, rect),)

    async def _child_positions(self, key: ElementKey) -> Signature:
        """Where the area's first children are, and the values of its scroll bars (a GTK
        scrolled window's children stay put while its scroll bars' values change)."""
        a11y = self.a11y
        try:
            count = await a11y.child_count(key)
            # by index, never all children: a spreadsheet has 2^31 cells
            kids = await asyncio.gather(
                *(a11y.child_at(key, i) for i in range(min(count, SIGNATURE_CHILDREN)))
            )
            rects, roles = await asyncio.gather(
                asyncio.gather(*(a11y.extents(k) for k in kids)),
                asyncio.gather(*(a11y.role(k) for k in kids)),
            )
            bars = [k for k, r in zip(kids, roles, strict=True) if r == "scroll-bar"]
            values = await asyncio.gather(*(a11y.value(k) for k in bars))
        except DesktopError:  # refused, not answering, or gone
            return ()
        if not any(r is not None for r in rects):
            return ()
        return (*rects, *values)

    async def _pixels_of(self, window: WindowInfo, rect: Rect) -> bytes:
        img = await self.pixels.capture_image(window)
        g = window.geometry
        box = (rect.x - g.x, rect.y - g.y, rect.x - g.x + rect.width, rect.y - g.y + rect.height)
        return img.crop(box).tobytes()

    async def _picture(self, window: WindowInfo, area: Node) -> Image.Image | None:
        """The area's part of the window's picture (None: it has no place on screen)."""
        rect = _intersection(area.bounds, window.geometry) if area.bounds is not None else None
        if rect is None:
            return None
        try:
            img = await self.pixels.capture_image(window)
        except DesktopError:
            return None
        g = window.geometry
        left, top = rect.x - g.x, rect.y - g.y
        return img.crop((left, top, left + rect.width, top + rect.height))

    async def _moves(
        self,
        window: WindowInfo,
        area: Node | None,
        before: Signature,
        picture: Image.Image | None,
        vertical: bool,
    ) -> bool:
        """Whether the content moves within a short while (apps scroll asynchronously): its
        children or scroll bars moved, or its picture shows it moved."""

        async def differs() -> bool:
            if (await self._content(window, area)) != before:
                return True
            if picture is None or area is None:
                return False
            now = await self._picture(window, area)
            return now is not None and content_offset(picture, now, vertical=vertical) != 0

        try:
            await async_wait_for(differs, timeout=1.5, what="the content to move", interval=0.05)
            return True
        except WaitTimeout:
            return False

    async def _until_still(self, window: WindowInfo, area: Node | None) -> None:
        """Wait until two looks 80 ms apart agree (the scroll animation has ended)."""
        last = {"seen": await self._content(window, area)}

        async def same() -> bool:
            await asyncio.sleep(0.08)
            now = await self._content(window, area)
            stable = now == last["seen"]
            last["seen"] = now
            return stable

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(same, timeout=2.0, what="the content to stop moving")

    async def _tree_follows(self, window: WindowInfo, before: frozenset[object]) -> None:
        """Wait (briefly) until the accessibility tree shows the new layout: Chromium's tree
        trails its pixels by a frame or more, and a read right away would show the old one."""

        last: dict[str, frozenset[object]] = {"layout": before}

        async def changed() -> bool:
            now = _layout(await self.reading.snapshot(window, timeout=2.0, fresh=True))
            settled = now != before and now == last["layout"]
            last["layout"] = now
            return settled

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(changed, timeout=1.5, what="the tree to follow the scroll")


def main_area(window: WindowInfo, snap: Snapshot) -> Node | None:
    """The largest scrollable-looking area of the window on screen (None: the window)."""
    best: Node | None = None
    for node in snap.nodes():
        b = node.bounds
        if node.role not in SCROLLISH or b is None or b.empty or not window.geometry.intersects(b):
            continue
        if best is None or best.bounds is None or b.width * b.height > _area(best.bounds):
            best = node
    return best


def notches_in_view(size: int) -> int:
    """Wheel notches that move a view of ``size`` pixels by at most :data:`VIEW_SHARE` of it
    (a notch: the larger of Chromium's step and GTK's, which grows with the view)."""
    notch = max(float(NOTCH_PX), max(size, 1) ** (2 / 3))
    return max(1, int(VIEW_SHARE * size // notch))


def _intersection(a: Rect, b: Rect) -> Rect | None:
    x, y = max(a.x, b.x), max(a.y, b.y)
    right, bottom = min(a.x + a.width, b.x + b.width), min(a.y + a.height, b.y + b.height)
    return Rect(x, y, right - x, bottom - y) if right > x and bottom > y else None


def _area(rect: Rect) -> int:
    return rect.width * rect.height


def _by_pixels(signature: Signature) -> bool:
    """Whether a content signature is the area's pixels (it has no children to place)."""
    return len(signature) == 1 and isinstance(signature[0], bytes)


def _layout(snap: Snapshot) -> frozenset[object]:
    """What is where in a read: the keys and bounds of its nodes."""
    return frozenset((n.key, n.bounds) for n in snap.nodes())
