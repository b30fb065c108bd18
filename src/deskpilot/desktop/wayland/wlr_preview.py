"""The console's live preview on a wlroots compositor (sway): a :class:`PixelWatch` over
wlr-screencopy and sway's IPC, on connections of its own, used from the preview's thread.

What changed comes from ``copy_with_damage`` frames (:class:`~.wlr_capture.OutputDamage`): the
compositor answers only once something on the output was drawn, with the boxes drawn, so a
quiet window costs nothing (no polling, as X11's DAMAGE). A window's pixels are its content
rectangle of the output (``capture_output_region``); where a window is, what it is called and
whose it is come from sway's tree (one blocking IPC request each).

sway draws one output and no window is drawn apart from it: ``root`` and ``window`` modes both
show what the output shows where the window is (a window covering it shows too).

The registry hands the preview the session's X display name (Xwayland's, ``:N``) or its
Wayland socket: the sway session is found from Xwayland's parent process (sway starts it) and
that process's runtime dir (:func:`~deskpilot.desktop.wayland.session.find_session`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskpilot.desktop.ports.capture import Region
from deskpilot.desktop.wayland.session import session_of_display
from deskpilot.desktop.wayland.sway import GET_OUTPUTS, GET_TREE, SwayError, request_once, views
from deskpilot.desktop.wayland.wire import WaylandError
from deskpilot.errors import DesktopError, DesktopLost

if TYPE_CHECKING:
    from PIL import Image

    from deskpilot.desktop.wayland.sway import SwayWindow
    from deskpilot.desktop.wayland.wlr_capture import OutputDamage, ScreenCopy


class SwayPixels:
    """A window's (or the output's) pixels as sway draws them (see the module docstring)."""

    def __init__(self, swaysock: str, screencopy: ScreenCopy, damage: OutputDamage) -> None:
        self.swaysock = swaysock
        self.copy = screencopy
        self.damage = damage
        self.handle: int | None = None

    def _views(self) -> list[SwayWindow]:
        try:
            return list(views(request_once(self.swaysock, GET_TREE)))
        except SwayError as exc:
            raise DesktopLost(f"sway is gone: {exc}") from exc

    def _view(self, handle: int) -> SwayWindow | None:
        found = next((v for v in self._views() if v.con_id == handle), None)
        if found is None or not found.visible or found.workspace == "__i3_scratch":
            return None
        return found

    def _screen(self) -> Region:
        try:
            outputs = request_once(self.swaysock, GET_OUTPUTS)
        except SwayError as exc:
            raise DesktopLost(f"sway is gone: {exc}") from exc
        rect = next((o.get("rect") or {} for o in outputs if o.get("active")), {})
        return (0, 0, int(rect.get("width", 0)), int(rect.get("height", 0)))

    def watch(self, handle: int | None) -> None:
        self.handle = handle

    def geometry(self, handle: int) -> Region | None:
        if handle == 0:
            return self._screen()
        view = self._view(handle)
        if view is None or view.rect.width <= 0 or view.rect.height <= 0:
            return None
        return (view.rect.x, view.rect.y, view.rect.width, view.rect.height)

    def changes(self, timeout: float, origin: tuple[int, int]) -> list[Region]:
        try:
            drawn = self.damage.wait(timeout)
        except WaylandError as exc:
            raise DesktopLost(f"the compositor is gone: {exc}") from exc
        ox, oy = origin
        return [(x - ox, y - oy, w, h) for x, y, w, h in drawn]

    def grab(self, handle: int, box: Region, origin: tuple[int, int]) -> Image.Image | None:
        if handle != 0 and self._view(handle) is None:
            return None
        x, y, w, h = box
        try:
            return self.copy.capture((origin[0] + x, origin[1] + y, w, h))
        except WaylandError as exc:
            if self.copy.conn.error is not None:
                raise DesktopLost(f"the compositor is gone: {exc}") from exc
            return None  # the region left the output (the window moved away)

    def title(self, handle: int) -> str:
        view = self._view(handle)
        return view.title if view is not None else ""

    def app(self, handle: int) -> str:
        view = self._view(handle)
        return view.app_id if view is not None else ""

    def close(self) -> None:
        self.damage.close()
        self.copy.close()


def open_preview(display: str, mode: str) -> SwayPixels:
    """A pixel watch on the sway session of ``display`` (Xwayland's ``:N``, or the Wayland
    socket's path); ``mode`` changes nothing (see the module docstring)."""
    from deskpilot.desktop.wayland.wlr_capture import OutputDamage, ScreenCopy

    wayland, swaysock = _session_of(display)
    try:
        screencopy = ScreenCopy.open(wayland)
    except (WaylandError, OSError) as exc:
        raise DesktopError(f"cannot reach the compositor at {wayland}: {exc}") from exc
    try:
        damage = OutputDamage(screencopy)
    except BaseException:
        screencopy.close()
        raise
    return SwayPixels(swaysock, screencopy, damage)


def _session_of(display: str) -> tuple[str, str]:
    """(Wayland socket, sway IPC socket) of the session ``display`` belongs to."""
    found, runtime = session_of_display(display, "sway")
    if not found.wayland_display or not found.swaysock:
        raise DesktopError(f"no sway session found for display {display!r} (in {runtime})")
    return found.wayland_display, found.swaysock
