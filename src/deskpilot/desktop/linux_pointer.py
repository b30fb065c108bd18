"""Pointer actions aimed at a window: click, double-click, right-click, hover and drag by XTest.

Like typing, they activate the target window for the moment and re-activate the window that
was active before (:meth:`~deskpilot.desktop.linux_input.LinuxInput._raw_input`). The pointer
stays where the action left it (a hover must stay to keep its effect). A drag presses, moves
in small steps (pages start a drag only after the pointer has moved a few pixels, and
HTML5 drag and drop needs several motion events), then releases. :meth:`covering` tells
what covers an element of a web page where a person would click it (a modal, an overlay):
the element hit at those points is neither the element, nor inside it, nor around it.
"""

from __future__ import annotations

import asyncio

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.atspi import EVENTS_INCOMPLETE as WEB
from deskpilot.desktop.atspi_calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi_consts import NULL_PATH
from deskpilot.desktop.base import ActionOutcome, PointerAction, Rect, WindowInfo
from deskpilot.desktop.linux_input import LinuxInput
from deskpilot.errors import ActionFailed

#: Motion events between the press and the release of a drag.
DRAG_STEPS = 12
#: Pause between two motion events of a drag (the page handles each one).
DRAG_STEP_S = 0.02
#: How long a pointer action waits for its window to be on top at its point.
COVER_WAIT_S = 2.0

_VERB = {
    "click": "clicked",
    "double_click": "double-clicked",
    "right_click": "right-clicked",
    "hover": "moved the pointer",
}


def visible_center(rect: Rect, area: Rect) -> tuple[int, int] | None:
    """The centre of the part of ``rect`` inside ``area`` (None when they do not overlap)."""
    left, top = max(rect.x, area.x), max(rect.y, area.y)
    right = min(rect.x + rect.width, area.x + area.width)
    bottom = min(rect.y + rect.height, area.y + area.height)
    if right <= left or bottom <= top:
        return None
    return (left + right) // 2, (top + bottom) // 2


def _overlap(a: Rect, b: Rect) -> Rect | None:
    left, top = max(a.x, b.x), max(a.y, b.y)
    right, bottom = min(a.x + a.width, b.x + b.width), min(a.y + a.height, b.y + b.height)
    return Rect(left, top, right - left, bottom - top) if right > left and bottom > top else None


class LinuxPointer(LinuxInput):
    """Pointer input at points of a window."""

    async def element_point(self, window: WindowInfo, key: tuple[str, str]) -> tuple[int, int]:
        live = await self.a11y.inspect(key)
        if live is not None and "showing" not in live.states and "visible" in live.states:
            # out of its page's or list's view (Chromium): let the app scroll it in, as a
            # person would scroll before pointing at it
            await self.a11y.scroll_into_view(key)
        rect = await self.a11y.extents(key)
        if rect is None or rect.empty:
            raise ActionFailed("the element has no on-screen position to point at")
        text = await self.a11y.text_box(key)
        located = await self.a11y.locate(window)
        offset = located[2] if located is not None else (0, 0)
        rect = rect.offset(*offset)
        area = window.geometry
        if text is not None and text.offset(*offset).intersects(rect):
            # a wide item or tab: point at its text (where its link is), not at empty space
            point = visible_center(text.offset(*offset), _overlap(rect, area) or area)
            if point is not None:
                return point
        point = visible_center(rect, area)
        if point is None:
            raise ActionFailed("the element is outside the window's visible area; scroll first")
        return point

    async def point_at(
        self, window: WindowInfo, x: int, y: int, action: PointerAction = "click"
    ) -> ActionOutcome:
        self._inside(window, x, y)
        async with self._raw_input(window) as outcome:
            await self._on_top(window, x, y)
            if action == "hover":
                self.x.move(x, y)
            elif action == "double_click":  # two clicks apart (Chromium counts two sent in
                await self._click(x, y, "left", 2)  # the same instant as one)
            else:
                await self._click(x, y, "right" if action == "right_click" else "left")
        return outcome.done(f"{_VERB[action]} at ({x}, {y})")

    async def _on_top(self, window: WindowInfo, x: int, y: int) -> None:
        """Wait until the point shows ``window``, not a window over it; else ActionFailed.

        Active is not enough: the window that was over the point may still be there (it is
        closing, or the window manager has not raised ours yet) — two sessions clicking one
        spot in turn lost the second click to the first one's closing dialog. Asking for the
        activation again raises the window."""

        async def shows() -> bool:
            hit = await self.window_at(x, y)
            return hit is None or hit.xid == window.xid

        if await shows():
            return
        self.x.request_activate(window.xid)
        try:
            await async_wait_for(shows, timeout=COVER_WAIT_S, what="the window to be on top")
        except WaitTimeout:
            hit = await self.window_at(x, y)
            over = f"{hit.app.name} window {hit.stable_id}" if hit is not None else "a window"
            raise ActionFailed(
                f"the point ({x}, {y}) of window {window.stable_id} is covered by {over} "
                "that stays on top: nothing was clicked. Close or move it, or act on "
                "elements instead"
            ) from None

    async def drag_in(
        self, window: WindowInfo, start: tuple[int, int], end: tuple[int, int]
    ) -> ActionOutcome:
        for px, py in (start, end):
            self._inside(window, px, py)
        (x0, y0), (x1, y1) = start, end
        path = [
            (x0 + (x1 - x0) * i // DRAG_STEPS, y0 + (y1 - y0) * i // DRAG_STEPS)
            for i in range(DRAG_STEPS + 1)
        ]
        async with self._raw_input(window) as outcome:
            await self._on_top(window, x0, y0)
            self.x.move(x0, y0)
            self.x.button("left", True)
            try:
                for px, py in path[1:]:
                    await asyncio.sleep(DRAG_STEP_S)
                    self.x.move(px, py)
                await asyncio.sleep(DRAG_STEP_S)
            finally:
                self.x.button("left", False)
        return outcome.done(f"dragged from ({x0}, {y0}) to ({x1}, {y1})")

    async def covering(self, window: WindowInfo, key: tuple[str, str]) -> str | None:
        where = self.a11y.cache.located.get(window.xid)
        if where is None or (await self.a11y.bus.toolkit(where.bus)).casefold() not in WEB:
            return None  # only pages put overlays over their own content (toolkits: windows)
        rect = await self.a11y.extents(key)
        if rect is None or rect.empty:
            return None
        rect = rect.offset(*where.offset)
        points = [visible_center(rect, window.geometry)]
        text = await self.a11y.text_box(key)
        if text is not None:
            points.append(visible_center(text.offset(*where.offset), rect))
        mine = await self._lineage(key)
        if await self._in_popup(mine[1:3]):
            return None  # a <select>'s list pops up over the page, outside its hit test
        cover: tuple[str, str] | None = None
        for point in dict.fromkeys(p for p in points if p is not None):
            hit = await self.a11y.element_at(window, *point)
            if hit is None:
                return None
            top = await self._coverer(hit.key, key, mine)
            if top is None:
                return None  # a person reaches it at this point
            cover = cover or top
        return await self._describe_cover(cover) if cover is not None else None

    async def _lineage(self, key: tuple[str, str], limit: int = 40) -> list[tuple[str, str]]:
        """``key`` and its ancestors, innermost first (one Parent call a level)."""
        out = [key]
        for _ in range(limit):
            bus, path = out[-1]
            try:
                pbus, ppath = await self.a11y.bus.get_property(bus, path, "Accessible", "Parent")
            except (AtspiCallError, AtspiTimeout):
                break
            parent = (str(pbus), str(ppath))
            if not pbus or ppath == NULL_PATH or parent in out:
                break
            out.append(parent)
        return out

    async def _in_popup(self, ancestors: list[tuple[str, str]]) -> bool:
        """Whether these (the nearest ancestors of an element) include a combo box: its
        items are in a popup drawn over the page."""
        for bus, path in ancestors:
            try:
                role = await self.a11y.bus.call(bus, path, "Accessible", "GetRoleName")
            except (AtspiCallError, AtspiTimeout):
                return False
            if str(role[0]) == "combo box":
                return True
        return False

    async def _coverer(
        self, hit: tuple[str, str], target: tuple[str, str], mine: list[tuple[str, str]]
    ) -> tuple[str, str] | None:
        """None when the element hit is the target, inside it or one of its ancestors; else
        the outermost element above the hit that is not shared with the target (the overlay)."""
        chain = await self._lineage(hit)
        if target in chain or hit in mine:
            return None
        shared = next((i for i, k in enumerate(chain) if k in mine), len(chain))
        return chain[max(0, shared - 1)]

    async def _describe_cover(self, key: tuple[str, str]) -> str:
        live = await self.a11y.inspect(key)
        role = live.role if live is not None else "element"
        try:
            body = await self.a11y.bus.call(key[0], key[1], "Accessible", "GetAttributes")
            attrs = {str(k): str(v) for k, v in dict(body[0]).items()}
        except (AtspiCallError, AtspiTimeout):
            attrs = {}
        tag = attrs.get("tag", role)
        what = tag + "".join(f".{c}" for c in attrs.get("class", "").split()[:2])
        if "id" in attrs:
            what += f"#{attrs['id']}"
        words = await self.a11y.read_text(key)
        words = " ".join((words or "").replace("\ufffc", " ").split())
        if live is not None and live.name:
            words = live.name
        return f'{what} "{words[:60]}"' if words else what

    @staticmethod
    def _inside(window: WindowInfo, x: int, y: int) -> None:
        if not window.geometry.contains(x, y):
            raise ActionFailed(
                f"the point ({x}, {y}) is outside window {window.stable_id} "
                f"({window.geometry.width}x{window.geometry.height} at "
                f"{window.geometry.x},{window.geometry.y})"
            )
