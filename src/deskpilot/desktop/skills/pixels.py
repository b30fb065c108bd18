"""Pixels: captures of the screen or a window, and whether a window's pixels changed.

Captures are PNG bytes or PIL images (the capture port's: a window's own pixels with the app's
popups painted over it). For apps whose accessibility events do not cover every change
(a web engine sends none when a page scrolls), a checksum of the window's on-screen pixels
tells whether the next read can trust the cached tree (:meth:`Pixels.changed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from typing import TYPE_CHECKING

from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import Region
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.errors import DesktopError

if TYPE_CHECKING:
    from PIL import Image

#: Seconds after a window's pixels changed during which its reads stay full (no cache).
PIXEL_SETTLE_S = 1.5
#: The largest change (width, height in px) that is a caret blinking, not the page moving.
CARET_BOX = (4, 64)
#: Executables of web engines, for windows not read yet (their events miss scrolls).
INCOMPLETE_EXECUTABLES = {
    "chromium", "chrome", "google-chrome", "brave", "msedge", "vivaldi-bin", "firefox",
    "firefox-esr", "electron", "code", "slack", "discord",
}  # fmt: skip


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


class Pixels:
    """Screen and window captures, and pixel checksums of windows between reads."""

    def __init__(self, ports: Ports) -> None:
        self.windows = ports.windows
        self.grab = ports.capture
        self.a11y = ports.a11y
        self._pixels: dict[WindowHandle, int | None] = {}  # checksum of its pixels at last read
        self._changed_at: dict[WindowHandle, float] = {}
        self._steady: dict[WindowHandle, bool] = {}  # its pixels unchanged at the last look
        self._pictures: dict[WindowHandle, Image.Image] = {}  # its picture at its last change
        # pixel checksums to take (None) or being taken after a window's first read
        self._baselines: dict[WindowHandle, asyncio.Future[int | None] | None] = {}

    async def capture(self, window: WindowInfo | None = None) -> bytes:
        return png_bytes(await self.grab.capture_image(window))

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        return await self.grab.capture_image(window)

    async def changed(self, window: WindowInfo) -> bool:
        """For apps whose events do not cover everything (a web engine sends none when a page
        scrolls), compare the window's pixels with the last read's: after a visual change the
        cached tree is not trusted, and reads stay full for PIXEL_SETTLE_S (the accessibility
        tree lags behind the paint)."""
        web = await self.a11y.web_engine(window)
        incomplete = (
            web if web is not None else window.app.executable.casefold() in INCOMPLETE_EXECUTABLES
        )
        if not incomplete:
            return False
        handle = window.handle
        if web is None:
            # the first read of this window in this process is a full read anyway: its pixels
            # are only the next read's baseline, grabbed in a thread once the read is done
            # (the first grab opens a display connection: ~20 ms)
            self._changed_at[handle] = 0.0
            self._baselines[handle] = None
            return False
        if (pending := self._baselines.pop(handle, None)) is not None:
            self._pixels[handle] = await pending
        digest = self.grab.checksum(await self.on_screen(window))
        now = time.monotonic()
        previous = self._pixels.get(handle)
        self._pixels[handle] = digest
        changed = digest is None or previous != digest  # also when there is no baseline
        moved = changed and (digest is None or previous is None or not await self._in_place(window))
        if moved:
            self._changed_at[handle] = now
        self._steady[handle] = not moved
        return now - self._changed_at[handle] < PIXEL_SETTLE_S

    def caught_up(self, window: WindowInfo) -> bool:
        """The caller read the window's tree in full twice in a row, the same both times (a
        page waited for once it has loaded): if its pixels did not change between those
        reads either, the tree has caught up with the paint and the change is over — the
        next reads are served from the cache, kept current by events, until the pixels
        change again. Returns whether it had."""
        if not self._steady.get(window.handle):
            return False
        self._changed_at[window.handle] = 0.0
        return True

    async def _in_place(self, window: WindowInfo) -> bool:
        """Whether what changed in the window since its last change is a caret's blink: a
        box at most CARET_BOX. The tree is kept for that — a text field with the focus in a
        web page blinks its caret every half second, and every read of the page was a full
        one while it did (26 of 30 in a row). The window's picture at each change is kept to
        compare the next one with; the first change of a window counts."""
        try:
            img = await self.grab.capture_image(window)
        except DesktopError:
            self._pictures.pop(window.handle, None)
            return False
        before = self._pictures.get(window.handle)
        self._pictures[window.handle] = img
        if before is None or before.size != img.size:
            return False
        from PIL import ImageChops

        box = ImageChops.difference(before.convert("RGB"), img.convert("RGB")).getbbox()
        if box is None:
            return True  # the window's own pixels did not change (something passed over it)
        return box[2] - box[0] <= CARET_BOX[0] and box[3] - box[1] <= CARET_BOX[1]

    async def take_baseline(self, window: WindowInfo) -> None:
        """After a read: start the window's baseline checksum in a thread, if one is due."""
        if window.handle in self._baselines and self._baselines[window.handle] is None:
            region = await self.on_screen(window)
            self._baselines[window.handle] = asyncio.ensure_future(
                asyncio.to_thread(self.grab.checksum, region)
            )

    async def on_screen(self, window: WindowInfo) -> Region | None:
        """The window's on-screen part as (left, top, width, height), if any."""
        sw, sh = await self.windows.screen_size()
        g = window.geometry
        left, top = max(0, g.x), max(0, g.y)
        width, height = min(g.x + g.width, sw) - left, min(g.y + g.height, sh) - top
        return (left, top, width, height) if width > 0 and height > 0 else None

    async def finish(self) -> None:
        """Let baseline grabs still running in threads end (before the grabber closes)."""
        for pending in self._baselines.values():
            if pending is not None:
                with contextlib.suppress(Exception):
                    await pending
