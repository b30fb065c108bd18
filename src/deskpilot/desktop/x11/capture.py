"""The X11 capture port: a window's own pixels through X composite, the screen through mss.

A window is captured from its own pixels (the display holds a Composite redirect, so a covered
window is not black), with the app's popups — menus, combo lists, tooltips — painted over it
where they overlap it (:mod:`.popups`). The screen and pixel checksums are MIT-SHM grabs
(mss): a few milliseconds for 1280×800; checksums use a grabber of their own, on its own X
connection, so they are safe in a worker thread.
"""

from __future__ import annotations

import threading
import zlib
from typing import TYPE_CHECKING, Any

from deskpilot.desktop.base import Rect, WindowInfo
from deskpilot.desktop.ports.capture import Region
from deskpilot.desktop.x11.display import X11
from deskpilot.desktop.x11.popups import popups_over
from deskpilot.errors import ActionFailed, DesktopError

if TYPE_CHECKING:
    from PIL import Image


class X11Capture:
    """Pixels of an X display's windows and screen."""

    def __init__(self, x11: X11, display: str | None) -> None:
        self.x = x11
        self.display = display
        self._grabber: Any = None  # mss grabber, opened on first use
        self._grabber_lock = threading.Lock()

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        from PIL import Image  # imported on the first capture: reads need no imaging library

        if window is None:
            import mss

            with mss.MSS(display=self.display) as grabber:
                shot = grabber.grab(grabber.monitors[0])
                return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
        current = self.x.window(window.handle)
        if current is None:
            raise DesktopError(f"window {window.stable_id} has closed")
        if current.hidden:
            raise ActionFailed(
                f"window {window.stable_id} is minimized or hidden: it cannot be captured. "
                "Restore it (or choose another window) and try again."
            )
        w, h, data = self.x.capture_window(window.handle)
        img = Image.frombytes("RGB", (w, h), data, "raw", "BGRX")
        return self._with_popups(img, window.handle, current.geometry)

    def _with_popups(self, img: Image.Image, xid: int, where: Rect) -> Image.Image:
        """The app's own popups (override-redirect windows) painted over its window's pixels
        where they overlap it, as a person sees them."""
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

    def checksum(self, region: Region | None) -> int | None:
        if region is None:
            return None
        left, top, width, height = region
        try:
            with self._grabber_lock:
                if self._grabber is None:
                    import mss

                    self._grabber = mss.MSS(display=self.display)
                grabber = self._grabber
            shot = grabber.grab({"left": left, "top": top, "width": width, "height": height})
        except Exception:  # mss raises its own ScreenShotError and OS errors
            return None
        return zlib.crc32(shot.raw)

    async def close(self) -> None:
        if self._grabber is not None:
            self._grabber.close()
