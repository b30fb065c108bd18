"""Pixels: captures of the screen or a window, and whether a window's pixels changed.

Captures are PNG bytes or PIL images (a window's own pixels, through X composite, with the
app's popups — menus, combo lists, tooltips — painted over it: :mod:`x11_popups`). For apps
whose AT-SPI events do not cover every change (Chromium sends none when a page scrolls), a
checksum of the window's on-screen pixels tells whether the next read can trust the cached
tree (:meth:`LinuxPixels._pixels_changed`).
"""

from __future__ import annotations

import asyncio
import io
import threading
import time
import zlib
from typing import TYPE_CHECKING, Any

from deskpilot.config import Settings
from deskpilot.desktop.atspi import EVENTS_INCOMPLETE, INCOMPLETE_EXECUTABLES, Accessibility
from deskpilot.desktop.base import Rect, WindowInfo
from deskpilot.desktop.linux_windows import LinuxWindows
from deskpilot.desktop.x11 import X11
from deskpilot.desktop.x11_popups import popups_over
from deskpilot.errors import ActionFailed, DesktopError

if TYPE_CHECKING:
    from PIL import Image

#: Seconds after a window's pixels changed during which its reads stay full (no cache).
PIXEL_SETTLE_S = 1.5


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


class LinuxPixels(LinuxWindows):
    """Screen and window captures, and pixel checksums of windows between reads."""

    def __init__(self, settings: Settings, x11: X11, a11y: Accessibility) -> None:
        super().__init__(settings, x11, a11y)
        self._pixels: dict[int, int | None] = {}  # window → checksum of its pixels at last read
        self._pixels_changed_at: dict[int, float] = {}
        # pixel checksums to take (None) or being taken after a window's first read
        self._baselines: dict[int, asyncio.Future[int | None] | None] = {}
        self._grabber: Any = None  # mss grabber, opened on first use
        self._grabber_lock = threading.Lock()

    async def screen_size(self) -> tuple[int, int]:
        return self.x.screen_size()

    async def capture(self, window: WindowInfo | None = None) -> bytes:
        return png_bytes(await self.capture_image(window))

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        from PIL import Image  # imported on the first capture: reads need no imaging library

        if window is None:
            import mss

            with mss.MSS(display=self.settings.display) as grabber:
                shot = grabber.grab(grabber.monitors[0])
                return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
        current = self.x.window(window.xid)
        if current is None:
            raise DesktopError(f"window {window.stable_id} has closed")
        if current.hidden:
            raise ActionFailed(
                f"window {window.stable_id} is minimized or hidden: it cannot be captured. "
                "Restore it (or choose another window) and try again."
            )
        w, h, data = self.x.capture_window(window.xid)
        img = Image.frombytes("RGB", (w, h), data, "raw", "BGRX")
        return self._with_popups(img, window.xid, current.geometry)

    def _with_popups(self, img: Image.Image, xid: int, where: Rect) -> Image.Image:
        """The app's own popups (menus, combo lists, tooltips: override-redirect windows)
        painted over its window's pixels where they overlap it, as a person sees them."""
        from PIL import Image

        for popup, rect in popups_over(self.x.d, self.x.root, xid):
            if not rect.intersects(where):
                continue
            try:
                w, h, data = self.x.capture_window(popup)
            except DesktopError:
                continue  # it closed meanwhile
            shot = Image.frombytes("RGB", (w, h), data, "raw", "BGRX")
            img.paste(shot, (rect.x - where.x, rect.y - where.y))
        return img

    async def _pixels_changed(self, window: WindowInfo) -> bool:
        """For apps whose AT-SPI events do not cover everything (Chromium sends none when a
        page scrolls), compare the window's pixels with the last read's: after a visual
        change the cached tree is not trusted, and reads stay full for PIXEL_SETTLE_S (the
        accessibility tree lags behind the paint)."""
        where = self.a11y.cache.located.get(window.xid)
        if where is not None:
            incomplete = (await self.a11y.bus.toolkit(where.bus)).casefold() in EVENTS_INCOMPLETE
        else:
            incomplete = window.app.executable.casefold() in INCOMPLETE_EXECUTABLES
        if not incomplete:
            return False
        if where is None:
            # the first read of this window in this process is a full read anyway: its pixels
            # are only the next read's baseline, grabbed in a thread once the read is done
            # (the first grab opens an X connection: ~20 ms)
            self._pixels_changed_at[window.xid] = 0.0
            self._baselines[window.xid] = None
            return False
        if (pending := self._baselines.pop(window.xid, None)) is not None:
            self._pixels[window.xid] = await pending
        digest = self._checksum(self._on_screen(window))
        now = time.monotonic()
        previous = self._pixels.get(window.xid)
        self._pixels[window.xid] = digest
        if digest is None or previous != digest:  # also when there is no baseline
            self._pixels_changed_at[window.xid] = now
        return now - self._pixels_changed_at[window.xid] < PIXEL_SETTLE_S

    def _on_screen(self, window: WindowInfo) -> tuple[int, int, int, int] | None:
        """The window's on-screen part as (left, top, width, height), if any."""
        sw, sh = self.x.screen_size()
        g = window.geometry
        left, top = max(0, g.x), max(0, g.y)
        width, height = min(g.x + g.width, sw) - left, min(g.y + g.height, sh) - top
        return (left, top, width, height) if width > 0 and height > 0 else None

    def _checksum(self, region: tuple[int, int, int, int] | None) -> int | None:
        """A checksum of a screen region's pixels (an MIT-SHM grab and a CRC of it: a few
        milliseconds for 1280×800; a collision costs one read from the cache). Safe in a
        thread: it uses its own X connection, not the desktop's."""
        if region is None:
            return None
        left, top, width, height = region
        try:
            with self._grabber_lock:
                if self._grabber is None:
                    import mss

                    self._grabber = mss.MSS(display=self.settings.display)
                grabber = self._grabber
            shot = grabber.grab({"left": left, "top": top, "width": width, "height": height})
        except Exception:  # mss raises its own ScreenShotError and OS errors
            return None
        return zlib.crc32(shot.raw)
