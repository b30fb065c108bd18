"""Raw input: keyboard, pointer and wheel, aimed at a window or at a point.

Input aimed at a window activates it first, one action at a time, and re-activates the window
that was active before (:meth:`RawInput.session`); what was done is an
:class:`~deskpilot.desktop.base.ActionOutcome`. A click is a move, then presses and releases
each CLICK_GAP_S apart (a GTK element the pointer was hovered over: at once). The time of the
last input is kept: a read right after it first lets the app settle (:mod:`.reading`).
Scrolling is :mod:`.scrolling`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence

from deskpilot.desktop.base import ActionOutcome, MouseButton, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.keys import check_keys
from deskpilot.errors import ActionFailed

#: Pause after moving the pointer and between a button's press and release. GTK 4 apps
#: (gnome-calculator) drop clicks whose motion, press and release reach them in one burst:
#: on a loaded 2-core sandbox (load ~14), 1 to 4 of 6 four-click sequences lost a click with
#: no pause, some still with 30 ms, none of 24 with 50 ms. A person's click takes ~100 ms.
#: Chromium needs them too: sent at once (the press and release in the same instant), a
#: click on a page's button was lost, a ``target=_blank`` link opened in the same tab and an
#: HTML5 drag after such clicks never dropped (tests/desktop/test_web_*.py).
#: Not needed by GTK 3 and 4 (4.8) for a click on an element the pointer was hovered over
#: (:meth:`RawInput.click_at_once`): measured at load 2–9, gnome-calculator and a GTK 3 probe
#: took all 280 clicks sent with no pause (80 of them while the app was stopped, SIGSTOP: all
#: its events in one batch, as on a machine too loaded to schedule it) and all 60 sequences of
#: four such clicks on four buttons (10 in one batch).
CLICK_GAP_S = 0.05
#: How long after :meth:`RawInput.hover` a click at its point counts the time since the move.
HOVER_FRESH_S = 2.0


class Outcome:
    """What raw input did to the windows: activated the target, restored the previous one."""

    def __init__(self) -> None:
        self.activated = False
        self.restored: str | None = None

    def done(self, detail: str) -> ActionOutcome:
        return ActionOutcome("input", detail, activated=self.activated, restored=self.restored)


class RawInput:
    """Keyboard, pointer and wheel input, aimed (see the module docstring)."""

    def __init__(self, ports: Ports) -> None:
        self.windows = ports.windows
        self.input = ports.input
        self._lock = asyncio.Lock()  # raw input is one thing at a time
        self.last_input = 0.0  # monotonic time of the last keyboard/pointer input
        #: where :meth:`hover` moved the pointer, and when (None once a click used it)
        self._hovered: tuple[int, int, float] | None = None

    async def hover(self, x: int, y: int) -> None:
        """Move the pointer to (x, y); a click there later waits only what is left of its
        gap after the move (the time spent in between counts)."""
        await self.input.move(x, y)
        self._hovered = (x, y, time.monotonic())

    async def click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        """Move, then press and release ``count`` times, each event apart (CLICK_GAP_S). A
        pointer moved here by :meth:`hover` is not moved again: its press waits what is left
        of the gap since then."""
        hovered, self._hovered = self._hovered, None
        if (
            hovered is not None
            and hovered[:2] == (x, y)
            and time.monotonic() - hovered[2] < HOVER_FRESH_S
            and await self.input.pointer() == (x, y)  # nothing moved it since
        ):
            # only the time since the move counts: checks made meanwhile are the pause
            await asyncio.sleep(max(0.0, CLICK_GAP_S - (time.monotonic() - hovered[2])))
        else:
            await self.input.move(x, y)
            await asyncio.sleep(CLICK_GAP_S)
        for i in range(count):
            if i:
                await asyncio.sleep(CLICK_GAP_S)
            await self.input.button(button, True)
            await asyncio.sleep(CLICK_GAP_S)
            await self.input.button(button, False)

    async def click_at_once(self, x: int, y: int) -> None:
        """A left click at (x, y) with no pause: the move (none when the pointer is there),
        the press and the release, each sent once the X server shows the one before done.
        For a toolkit's element the pointer was hovered over (see CLICK_GAP_S)."""
        self._hovered = None
        if await self.input.pointer() != (x, y):
            await self.input.move(x, y)
        await self.input.button("left", True)
        await self.input.button("left", False)

    @contextlib.asynccontextmanager
    async def session(self, window: WindowInfo) -> AsyncIterator[Outcome]:
        """Input to ``window``: activated for the block, the previous window active again
        afterwards."""
        async with self._lock:
            previous = await self.windows.active_handle()
            outcome = Outcome()
            self.last_input = time.monotonic()
            if previous != window.handle:
                if not await self.windows.activate(window):
                    raise ActionFailed(
                        f"could not activate window {window.stable_id} for keyboard/pointer "
                        "input (is it minimized on another desktop?)"
                    )
                outcome.activated = True
            try:
                yield outcome
            finally:
                if outcome.activated and previous is not None:
                    prev = await self.windows.window(previous)
                    if prev is not None and not prev.hidden and await self.windows.activate(prev):
                        outcome.restored = prev.stable_id

    async def type_text(self, window: WindowInfo, text: str) -> ActionOutcome:
        async with self.session(window) as outcome:
            await self.input.type_text(text)
        return outcome.done(f"typed {len(text)} characters")

    async def press_keys(self, window: WindowInfo, keys: Sequence[str]) -> ActionOutcome:
        check_keys(keys)
        async with self.session(window) as outcome:
            await self.input.press_combo(keys)
        return outcome.done("pressed " + "+".join(keys))

    # -- input at a point, not aimed at a window (the native computer tool) ----------------

    async def pointer_click(
        self,
        x: int,
        y: int,
        *,
        button: MouseButton = "left",
        count: int = 1,
        modifiers: Sequence[str] = (),
    ) -> None:
        self.last_input = time.monotonic()
        check_keys(modifiers)
        async with self.input.held(modifiers):
            await self.click(x, y, button, count)

    async def pointer_move(self, x: int, y: int) -> None:
        await self.input.move(x, y)

    async def pointer_button(self, button: MouseButton, down: bool) -> None:
        self.last_input = time.monotonic()
        await self.input.button(button, down)

    async def pointer_position(self) -> tuple[int, int]:
        return await self.input.pointer()

    async def pointer_drag(
        self, path: Sequence[tuple[int, int]], *, modifiers: Sequence[str] = ()
    ) -> None:
        self.last_input = time.monotonic()
        if len(path) < 2:
            raise ActionFailed("a drag needs at least two points")
        check_keys(modifiers)
        async with self.input.held(modifiers):
            await self.input.move(*path[0])
            await self.input.button("left", True)
            for px, py in path[1:]:
                await asyncio.sleep(0.02)
                await self.input.move(px, py)
            await asyncio.sleep(0.02)
            await self.input.button("left", False)

    async def wheel(
        self, x: int, y: int, dx: int, dy: int, *, modifiers: Sequence[str] = ()
    ) -> None:
        self.last_input = time.monotonic()
        check_keys(modifiers)
        await self.input.move(x, y)
        async with self.input.held(modifiers):
            if dy:
                await self.input.wheel("down" if dy > 0 else "up", abs(dy))
            if dx:
                await self.input.wheel("right" if dx > 0 else "left", abs(dx))

    async def key_event(self, keysym_names: Sequence[str], down: bool) -> None:
        self.last_input = time.monotonic()
        await self.input.key_event(keysym_names, down)

    async def type_raw(self, text: str) -> None:
        self.last_input = time.monotonic()
        await self.input.type_text(text)
