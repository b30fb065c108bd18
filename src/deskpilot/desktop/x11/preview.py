"""The X11 live preview's pixels: DAMAGE reports and grabs on a connection of its own.

The console's preview (:mod:`deskpilot.serve.capture`) runs a thread per session; this is what
that thread asks of the display (python-xlib is used from one thread per connection). The
X server reports DAMAGE (the bounding box of what was drawn) on the watched drawable; a changed
box is grabbed with XShm (mss) on a sandbox, where the screen is the session's alone
(``root`` mode), or from the window's own pixels through X composite on this desktop
(``window`` mode: another window covering it, the console's own among them, never shows).
"""

from __future__ import annotations

import contextlib
import functools
import select
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

from Xlib import X, Xatom, display, error
from Xlib.ext import damage

from deskpilot.desktop.ports.capture import Region
from deskpilot.errors import DesktopLost

if TYPE_CHECKING:
    from PIL import Image

Mode = Literal["root", "window"]
P = ParamSpec("P")
T = TypeVar("T")


def _lost(func: Callable[P, T]) -> Callable[P, T]:
    """The display going away is DesktopLost, whatever was asked of it."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return func(*args, **kwargs)
        except (error.ConnectionClosedError, error.DisplayError) as exc:
            raise DesktopLost(f"the display went away ({exc})") from exc

    return wrapper


class X11PixelWatch:
    """One preview's view of an X display (see the module docstring)."""

    @_lost
    def __init__(self, display_name: str, mode: Mode) -> None:
        self.d = display.Display(display_name)
        self.mode = mode
        self.root = self.d.screen().root
        self.d.damage_query_version()
        self.grabber: Any = None
        if mode == "root":
            import mss

            self.grabber = mss.MSS(display=display_name)
        self.watched: Any = None
        self.dmg: int | None = None
        self.handle = -1

    @_lost
    def watch(self, handle: int | None) -> None:
        if self.dmg is not None:
            with contextlib.suppress(Exception):
                self.watched.damage_destroy(self.dmg)
        self.watched, self.dmg = None, None
        if handle is None:
            return
        self.handle = handle
        on = (
            self.root
            if (self.mode == "root" or handle == 0)
            else self.d.create_resource_object("window", handle)
        )
        self.watched = on
        self.dmg = on.damage_create(damage.DamageReportBoundingBox)
        self.d.sync()

    @_lost
    def geometry(self, handle: int) -> Region | None:
        """The window's (x, y) on the screen and its size; None when it is gone."""
        try:
            if handle == 0:
                g = self.root.get_geometry()
                return 0, 0, int(g.width), int(g.height)
            win = self.d.create_resource_object("window", handle)
            g = win.get_geometry()
            at = win.translate_coords(self.root, 0, 0)
            return -int(at.x), -int(at.y), int(g.width), int(g.height)
        except (error.BadWindow, error.BadDrawable, error.BadMatch):
            return None

    @_lost
    def changes(self, timeout: float, origin: tuple[int, int]) -> list[Region]:
        boxes: list[Region] = []
        ready, _, _ = select.select([self.d.fileno()], [], [], timeout)
        if ready or self.d.pending_events():
            for _ in range(self.d.pending_events()):
                event = self.d.next_event()
                area = getattr(event, "area", None)
                if area is None:
                    continue
                box = (int(area.x), int(area.y), int(area.width), int(area.height))
                if self.watched is self.root and self.handle != 0:
                    box = (box[0] - origin[0], box[1] - origin[1], box[2], box[3])
                boxes.append(box)
            if self.dmg is not None:
                with contextlib.suppress(Exception):
                    self.d.damage_subtract(self.dmg, 0, 0)
                    # the subtract must reach the server before the grab: python-xlib sends it
                    # only with the connection's next round trip, and a sandbox's grab goes
                    # through mss's own connection; late, it cleared what was drawn after the
                    # grab inside the box already reported (X reports a box only when it
                    # grows), and that change never showed (issue #28)
                    self.d.sync()
        return boxes

    @_lost
    def grab(self, handle: int, box: Region, origin: tuple[int, int]) -> Image.Image | None:
        from PIL import Image

        x, y, w, h = box
        if self.grabber is not None:
            shot = self.grabber.grab(
                {"left": origin[0] + x, "top": origin[1] + y, "width": w, "height": h}
            )
            return Image.frombytes("RGB", shot.size, shot.raw, "raw", "BGRX")  # no copy of it first
        try:
            win = self.d.create_resource_object("window", handle)
            img = win.get_image(x, y, w, h, X.ZPixmap, 0xFFFFFFFF)
        except (error.BadWindow, error.BadDrawable, error.BadMatch):
            return None
        data = img.data if isinstance(img.data, bytes) else bytes(img.data)
        return Image.frombytes("RGB", (w, h), data, "raw", "BGRX")

    @_lost
    def title(self, handle: int) -> str:
        win = self.d.create_resource_object("window", handle)
        try:
            prop = win.get_full_property(
                self.d.intern_atom("_NET_WM_NAME"), self.d.intern_atom("UTF8_STRING")
            )
            if prop is not None and prop.value:
                value = prop.value
                return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            prop = win.get_full_property(Xatom.WM_NAME, Xatom.STRING)
        except error.XError:
            return ""
        if prop is None:
            return ""
        value = prop.value
        return value.decode("latin-1") if isinstance(value, bytes) else str(value)

    @_lost
    def app(self, handle: int) -> str:
        try:
            wm_class = self.d.create_resource_object("window", handle).get_wm_class()
        except error.XError:
            return ""
        return str(wm_class[-1]) if wm_class else ""

    def close(self) -> None:
        if self.grabber is not None:
            with contextlib.suppress(Exception):
                self.grabber.close()
        with contextlib.suppress(Exception):
            self.d.close()
