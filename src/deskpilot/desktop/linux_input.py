"""Raw input: keyboard, pointer and wheel through XTest, aimed at a window or at a point.

Input aimed at a window activates it first, one action at a time, and re-activates the window
that was active before (:meth:`LinuxInput._raw_input`); what was done is an
:class:`~deskpilot.desktop.base.ActionOutcome`. Scrolling is :mod:`linux_scroll`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence

from deskpilot.config import Settings
from deskpilot.desktop.atspi import Accessibility
from deskpilot.desktop.base import (
    ActionOutcome,
    MouseButton,
    WindowInfo,
)
from deskpilot.desktop.linux_launch import LinuxLaunching
from deskpilot.desktop.x11 import X11
from deskpilot.errors import ActionFailed

#: Pause after moving the pointer and between a button's press and release. GTK 4 apps
#: (gnome-calculator) drop clicks whose motion, press and release reach them in one burst:
#: on a loaded 2-core sandbox (load ~14), 1 to 4 of 6 four-click sequences lost a click with
#: no pause, some still with 30 ms, none of 24 with 50 ms. A person's click takes ~100 ms.
CLICK_GAP_S = 0.05


class LinuxInput(LinuxLaunching):
    """Keyboard, pointer and wheel input."""

    async def _click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        """Move, then press and release ``count`` times, each event apart (CLICK_GAP_S)."""
        self.x.move(x, y)
        for _ in range(count):
            await asyncio.sleep(CLICK_GAP_S)
            self.x.button(button, True)
            await asyncio.sleep(CLICK_GAP_S)
            self.x.button(button, False)

    def __init__(self, settings: Settings, x11: X11, a11y: Accessibility) -> None:
        super().__init__(settings, x11, a11y)
        self._lock = asyncio.Lock()  # raw input is one thing at a time

    @contextlib.asynccontextmanager
    async def _raw_input(self, window: WindowInfo) -> AsyncIterator[_Outcome]:
        async with self._lock:
            previous = self.x.active_xid()
            outcome = _Outcome()
            self._last_input = time.monotonic()
            if previous != window.xid:
                if not await self.activate(window):
                    raise ActionFailed(
                        f"could not activate window {window.stable_id} for keyboard/pointer "
                        "input (is it minimized on another desktop?)"
                    )
                outcome.activated = True
            try:
                yield outcome
            finally:
                if outcome.activated and previous is not None:
                    prev = self.x.window(previous)
                    if prev is not None and not prev.hidden:
                        info = self._info(prev, previous, await self.apps())
                        if await self.activate(info):
                            outcome.restored = info.stable_id

    async def type_text(self, window: WindowInfo, text: str) -> ActionOutcome:
        async with self._raw_input(window) as outcome:
            self.x.type_text(text)
        return outcome.done(f"typed {len(text)} characters")

    async def press_keys(self, window: WindowInfo, keys: Sequence[str]) -> ActionOutcome:
        syms = [self.x.keysym(k) for k in keys]
        async with self._raw_input(window) as outcome:
            self.x.press_combo(syms)
        return outcome.done("pressed " + "+".join(keys))

    async def pointer_click(
        self,
        x: int,
        y: int,
        *,
        button: MouseButton = "left",
        count: int = 1,
        modifiers: Sequence[str] = (),
    ) -> None:
        self._last_input = time.monotonic()
        syms = [self.x.keysym(m) for m in modifiers]
        with self.x.held(syms):
            await self._click(x, y, button, count)

    async def pointer_move(self, x: int, y: int) -> None:
        self.x.move(x, y)

    async def pointer_button(self, button: MouseButton, down: bool) -> None:
        self._last_input = time.monotonic()
        self.x.button(button, down)

    async def pointer_position(self) -> tuple[int, int]:
        return self.x.pointer()

    async def pointer_drag(
        self, path: Sequence[tuple[int, int]], *, modifiers: Sequence[str] = ()
    ) -> None:
        self._last_input = time.monotonic()
        if len(path) < 2:
            raise ActionFailed("a drag needs at least two points")
        syms = [self.x.keysym(m) for m in modifiers]
        with self.x.held(syms):
            self.x.move(*path[0])
            self.x.button("left", True)
            for px, py in path[1:]:
                await asyncio.sleep(0.02)
                self.x.move(px, py)
            await asyncio.sleep(0.02)
            self.x.button("left", False)

    async def wheel(
        self, x: int, y: int, dx: int, dy: int, *, modifiers: Sequence[str] = ()
    ) -> None:
        self._last_input = time.monotonic()
        syms = [self.x.keysym(m) for m in modifiers]
        self.x.move(x, y)
        with self.x.held(syms):
            if dy:
                self.x.wheel("down" if dy > 0 else "up", abs(dy))
            if dx:
                self.x.wheel("right" if dx > 0 else "left", abs(dx))

    async def key_event(self, keysym_names: Sequence[str], down: bool) -> None:
        self._last_input = time.monotonic()
        self.x.key_event([self.x.keysym(k) for k in keysym_names], down)

    async def type_raw(self, text: str) -> None:
        self._last_input = time.monotonic()
        self.x.type_text(text)


class _Outcome:
    def __init__(self) -> None:
        self.activated = False
        self.restored: str | None = None

    def done(self, detail: str) -> ActionOutcome:
        return ActionOutcome("input", detail, activated=self.activated, restored=self.restored)
