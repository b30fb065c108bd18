"""Reading: a window's accessibility snapshot, and live looks at single elements.

A read right after keyboard or pointer input first lets the app settle (input is processed
asynchronously); a window whose pixels changed since its last read is read in full, not from
the event cache (see :mod:`linux_pixels`).
"""

from __future__ import annotations

import asyncio
import time

from deskpilot.config import Settings
from deskpilot.desktop.atspi import Accessibility
from deskpilot.desktop.base import LiveElement, Snapshot, WindowInfo
from deskpilot.desktop.linux_pixels import LinuxPixels
from deskpilot.desktop.x11 import X11

#: A read within this many seconds of keyboard/pointer input first lets the app settle.
INPUT_SETTLE_S = 1.0


class LinuxReading(LinuxPixels):
    """Snapshots of windows and live element checks."""

    def __init__(self, settings: Settings, x11: X11, a11y: Accessibility) -> None:
        super().__init__(settings, x11, a11y)
        self._last_input = 0.0  # monotonic time of the last keyboard/pointer input

    async def snapshot(
        self, window: WindowInfo, *, timeout: float = 5.0, fresh: bool = False
    ) -> Snapshot:
        start = time.perf_counter()
        if time.monotonic() - self._last_input < INPUT_SETTLE_S:
            # keyboard/pointer input is processed asynchronously: let the app catch up
            # (a read right after typing "12*7\n" could still show "12×7")
            await self.settle(window, self._last_input)
        fresh = await self._pixels_changed(window) or fresh
        root, partial, problems = await self.a11y.read_window(window, timeout=timeout, fresh=fresh)
        if window.xid in self._baselines and self._baselines[window.xid] is None:
            self._baselines[window.xid] = asyncio.ensure_future(
                asyncio.to_thread(self._checksum, self._on_screen(window))
            )
        return Snapshot(
            window=window,
            root=root,
            partial=partial,
            problems=problems,
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )

    async def inspect(self, key: tuple[str, str]) -> LiveElement | None:
        live = await self.a11y.inspect(key)
        if live is None:
            return None
        bounds = await self.a11y.extents(key)
        return LiveElement(
            key=live.key,
            pid=live.pid,
            role=live.role,
            name=live.name,
            parent_key=live.parent_key,
            states=live.states,
            bounds=bounds,
        )

    async def read_text(self, key: tuple[str, str]) -> str | None:
        return await self.a11y.read_text(key)

    async def settle(self, window: WindowInfo, since: float) -> bool:
        buses = await self.a11y.buses_for_pid(window.pid)
        if not buses:
            return False
        results = await asyncio.gather(*(self.a11y.bus.settle(b, since) for b in buses))
        return any(results)

    async def focused_element(self, window: WindowInfo) -> tuple[str, str] | None:
        return self.a11y.focus.of(await self.a11y.buses_for_pid(window.pid))

    async def element_at(self, x: int, y: int) -> LiveElement | None:
        window = await self.window_at(x, y)
        if window is None:
            return None
        return await self.a11y.element_at(window, x, y)
