"""Pointer actions aimed at a window: click, double-click, right-click, hover and drag by XTest.

Like typing, they activate the target window for the moment and re-activate the window that
was active before (:meth:`~deskpilot.desktop.linux_input.LinuxInput._raw_input`). The pointer
stays where the action left it (a hover must stay to keep its effect). A drag presses, moves
in small steps (pages start a drag only after the pointer has moved a few pixels, and
HTML5 drag and drop needs several motion events), then releases.
"""

from __future__ import annotations

import asyncio

from deskpilot.desktop.base import ActionOutcome, PointerAction, Rect, WindowInfo
from deskpilot.desktop.linux_input import LinuxInput
from deskpilot.errors import ActionFailed

#: Motion events between the press and the release of a drag.
DRAG_STEPS = 12
#: Pause between two motion events of a drag (the page handles each one).
DRAG_STEP_S = 0.02

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
            if action == "hover":
                self.x.move(x, y)
            elif action == "double_click":  # two clicks apart (Chromium counts two sent in
                await self._click(x, y, "left", 2)  # the same instant as one)
            else:
                await self._click(x, y, "right" if action == "right_click" else "left")
        return outcome.done(f"{_VERB[action]} at ({x}, {y})")

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

    @staticmethod
    def _inside(window: WindowInfo, x: int, y: int) -> None:
        if not window.geometry.contains(x, y):
            raise ActionFailed(
                f"the point ({x}, {y}) is outside window {window.stable_id} "
                f"({window.geometry.width}x{window.geometry.height} at "
                f"{window.geometry.x},{window.geometry.y})"
            )
