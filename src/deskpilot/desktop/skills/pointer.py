"""Pointer actions aimed at a window: click, double-click, right-click, hover and drag.

Like typing, they activate the target window for the moment and re-activate the window that
was active before (:meth:`~deskpilot.desktop.skills.raw_input.RawInput.session`), and they
first make sure the point shows the target window, not one over it. The pointer stays where
the action left it (a hover must stay to keep its effect). A drag presses, moves in small
steps (pages start a drag only after the pointer has moved a few pixels, and HTML5 drag and
drop needs several motion events), then releases.
"""

from __future__ import annotations

import asyncio

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, PointerAction, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.skills.raw_input import RawInput
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


class Pointer:
    """Pointer input at points of a window."""

    def __init__(self, ports: Ports, raw: RawInput) -> None:
        self.windows = ports.windows
        self.input = ports.input
        self.raw = raw

    async def point_at(
        self, window: WindowInfo, x: int, y: int, action: PointerAction = "click"
    ) -> ActionOutcome:
        inside(window, x, y)
        async with self.raw.session(window) as outcome:
            await self.on_top(window, x, y)
            if action == "hover":
                await self.input.move(x, y)
            elif action == "double_click":  # two clicks apart (Chromium counts two sent in
                await self.raw.click(x, y, "left", 2)  # the same instant as one)
            else:
                await self.raw.click(x, y, "right" if action == "right_click" else "left")
        return outcome.done(f"{_VERB[action]} at ({x}, {y})")

    async def on_top(self, window: WindowInfo, x: int, y: int) -> None:
        """Wait until the point shows ``window``, not a window over it; else ActionFailed.

        Active is not enough: the window that was over the point may still be there (it is
        closing, or the window manager has not raised ours yet) — two sessions clicking one
        spot in turn lost the second click to the first one's closing dialog. Asking for the
        activation again raises the window."""

        async def shows() -> bool:
            hit = await self.windows.window_at(x, y)
            return hit is None or hit.handle == window.handle

        if await shows():
            return
        await self.windows.request_activate(window.handle)
        try:
            await async_wait_for(shows, timeout=COVER_WAIT_S, what="the window to be on top")
        except WaitTimeout:
            hit = await self.windows.window_at(x, y)
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
            inside(window, px, py)
        (x0, y0), (x1, y1) = start, end
        path = [
            (x0 + (x1 - x0) * i // DRAG_STEPS, y0 + (y1 - y0) * i // DRAG_STEPS)
            for i in range(DRAG_STEPS + 1)
        ]
        async with self.raw.session(window) as outcome:
            await self.on_top(window, x0, y0)
            # the drop lands in this window too (what the policy judged it by), not in one that
            # stays on top over the drop point
            await self.on_top(window, x1, y1)
            await self.input.move(x0, y0)
            await self.input.button("left", True)
            try:
                for px, py in path[1:]:
                    await asyncio.sleep(DRAG_STEP_S)
                    await self.input.move(px, py)
                await asyncio.sleep(DRAG_STEP_S)
            finally:
                await self.input.button("left", False)
        return outcome.done(f"dragged from ({x0}, {y0}) to ({x1}, {y1})")


def inside(window: WindowInfo, x: int, y: int) -> None:
    """ActionFailed unless (x, y) lies in the window's client area."""
    if not window.geometry.contains(x, y):
        raise ActionFailed(
            f"the point ({x}, {y}) is outside window {window.stable_id} "
            f"({window.geometry.width}x{window.geometry.height} at "
            f"{window.geometry.x},{window.geometry.y})"
        )
