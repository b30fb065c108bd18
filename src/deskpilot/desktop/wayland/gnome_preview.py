"""The console's live preview on a GNOME (Mutter) sandbox: a :class:`PixelWatch` over the
monitor's ScreenCast stream and the session's AT-SPI frames, on connections of its own (an
event loop of its own, run from the preview's thread).

What changed is read from the frames themselves: Mutter sends a frame only when something on
the monitor was drawn (:mod:`.pipewire`), and the box that differs from the frame shown last
(by more than the background's dithering, :data:`NOISE`) is what was drawn; while nothing is
drawn the preview waits on the stream without waking.

Where a window is: Mutter tells nobody, and a window's own stream (``RecordWindow``) records
only the focused window, so following one would mean focusing it — and the preview acts on
nothing. So on GNOME the preview is of the screen: in ``root`` mode (a sandbox: the screen is
the session's alone) the target window's frame names what is shown and tells when it closed,
and the pixels are the whole monitor's (an X11 window on Xwayland, which knows its place, is
shown alone). ``window`` mode (only the window's own pixels, on a desktop shared with other
windows) cannot be honoured and is refused (:class:`~deskpilot.errors.DesktopError`: the
console then shows no preview).

The registry hands the preview the session's X display name (Xwayland's ``:N``, started by
mutter) or its Wayland socket; the session's buses are found from mutter's environment.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PIL import ImageChops

from deskpilot.config import Settings
from deskpilot.desktop.base import AppEntry
from deskpilot.desktop.ports.capture import Region
from deskpilot.desktop.wayland import session as sessions
from deskpilot.desktop.wayland.mutter import MutterError, MutterSession
from deskpilot.desktop.wayland.session import WaylandSession
from deskpilot.errors import DesktopError, DesktopLost

if TYPE_CHECKING:
    from PIL import Image

    from deskpilot.desktop.atspi.port import AtspiAccessibility
    from deskpilot.desktop.wayland.gnome_windows import Frame, GnomeWindows
    from deskpilot.desktop.wayland.pipewire import FrameReader

#: how long a list of the session's frames is trusted (the preview asks several times a loop)
FRAMES_TTL_S = 0.5
#: a channel's change (of 255) up to which a pixel counts as unchanged. Measured on headless
#: mutter 43.8 (1024x768): between two consecutive frames, away from what was drawn, 55k of
#: 340k background pixels differed by 1 level (rounding on the way to RGB), which made every
#: change's box the whole screen
NOISE = 8


class GnomePixels:
    """The monitor's pixels as Mutter draws them (see the module docstring)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        monitor: MutterSession,
        frames: FrameReader,
        a11y: AtspiAccessibility,
        windows: GnomeWindows,
    ) -> None:
        self.loop = loop
        self.monitor = monitor
        self.frames = frames
        self.a11y = a11y
        self.windows = windows
        self.handle: int | None = None
        #: the frame the last changes were judged by, or the last keyframe grabbed
        self._shown: Image.Image | None = None
        self._seen = 0  # frames judged so far
        self._listed: tuple[float, list[Frame]] = (0.0, [])

    def _screen(self) -> Region:
        return (0, 0, *self.frames.size)

    def _frame_of(self, handle: int) -> Frame | None:
        at, listed = self._listed
        if time.monotonic() - at > FRAMES_TTL_S:
            try:
                listed = self.loop.run_until_complete(self.windows.frames())
            except DesktopError as exc:
                raise DesktopLost(f"the session's accessibility bus is gone: {exc}") from exc
            self._listed = (time.monotonic(), listed)
        return next((f for f in listed if f.handle == handle), None)

    def _latest(self, timeout: float) -> Image.Image | None:
        from deskpilot.desktop.wayland.pipewire import PipeWireError

        if self.monitor.closed is not None:
            raise DesktopLost(f"the screen's recording ended: {self.monitor.closed}")
        try:
            return self.frames.frame(settle=0.0, timeout=timeout)
        except PipeWireError:
            if self.frames.frames:
                raise DesktopLost("the screen's stream ended") from None
            return None  # no first frame yet

    def watch(self, handle: int | None) -> None:
        self.handle = handle
        self._shown = None

    def geometry(self, handle: int) -> Region | None:
        if handle == 0:
            return self._screen()
        frame = self._frame_of(handle)
        if frame is None:
            return None
        if frame.placed:  # an X11 window on Xwayland: its place on the monitor
            return (*frame.place, *frame.size)
        return self._screen()

    def changes(self, timeout: float, origin: tuple[int, int]) -> list[Region]:
        count = self.frames.wait_frame(self._seen, timeout)  # no drawing, no wake-up
        if count == self._seen:
            return []
        latest = self._latest(max(timeout, 0.1))
        if latest is None:
            return []
        self._seen = count
        before, self._shown = self._shown, latest
        if before is None or before.size != latest.size:
            box: tuple[int, int, int, int] | None = (0, 0, *latest.size)
        else:
            diff = ImageChops.difference(before, latest)
            box = diff.point(lambda v: 255 if v > NOISE else 0).getbbox()
        if box is None:
            return []
        ox, oy = origin
        return [(box[0] - ox, box[1] - oy, box[2] - box[0], box[3] - box[1])]

    def grab(self, handle: int, box: Region, origin: tuple[int, int]) -> Image.Image | None:
        if handle != 0 and self._frame_of(handle) is None:
            return None
        latest = self._latest(5.0)
        if latest is None:
            return None
        x, y, w, h = box
        left, top = origin[0] + x, origin[1] + y
        if self._shown is None or (left, top, w, h) == self.geometry(handle):
            # a keyframe (the whole watched area): the next change is judged against what it
            # showed, not against no frame (the first change after each keyframe was the
            # whole screen again, as a patch)
            self._shown = latest
        return latest.crop((left, top, left + w, top + h))

    def title(self, handle: int) -> str:
        frame = self._frame_of(handle)
        return frame.title if frame is not None else ""

    def app(self, handle: int) -> str:
        frame = self._frame_of(handle)
        return frame.app_name if frame is not None else ""

    def close(self) -> None:
        try:
            self.frames.close()
            self.loop.run_until_complete(self.monitor.close())
            self.loop.run_until_complete(self.a11y.close())
        finally:
            self.loop.close()


def open_preview(display: str, mode: str) -> GnomePixels:
    """A pixel watch on the GNOME session of ``display`` (Xwayland's ``:N``, or the Wayland
    socket's path), in ``root`` mode only (see the module docstring)."""
    from deskpilot.desktop.atspi.port import AtspiAccessibility
    from deskpilot.desktop.wayland.gnome_windows import GnomeWindows
    from deskpilot.desktop.wayland.pipewire import FrameReader

    if mode != "root":
        raise DesktopError(
            "no window-only preview on GNOME: Mutter records a window apart only while it has "
            "the focus, and the preview does not move the focus"
        )
    found = session_of_display(display)
    settings = Settings(environ=found.env(), session_bus=found.session_bus)
    loop = asyncio.new_event_loop()
    try:
        monitor = loop.run_until_complete(MutterSession.start(found.session_bus, record="monitor"))
    except MutterError as exc:
        loop.close()
        raise DesktopError(f"cannot record the GNOME session's screen: {exc}") from exc
    except BaseException:
        loop.close()
        raise
    try:
        assert monitor.stream is not None
        size = monitor.stream.size
        reader = FrameReader(
            monitor.stream.node_id, size, runtime_dir=found.runtime_dir, env=found.env()
        )
    except BaseException:
        loop.run_until_complete(monitor.close())
        loop.close()
        raise
    try:
        a11y = loop.run_until_complete(AtspiAccessibility.open(settings))
    except BaseException:
        reader.close()
        loop.run_until_complete(monitor.close())
        loop.close()
        raise

    async def nothing(names: Sequence[str]) -> None:
        raise DesktopError("the preview acts on nothing")

    async def no_apps() -> list[AppEntry]:
        return []

    async def screen() -> tuple[int, int]:
        return size

    windows = GnomeWindows(a11y.trees, nothing, no_apps, screen)
    return GnomePixels(loop, monitor, reader, a11y, windows)


def session_of_display(display: str) -> WaylandSession:
    """The GNOME session ``display`` belongs to (its runtime dir and session bus)."""
    found, runtime = sessions.session_of_display(display, "GNOME")
    if not found.wayland_display or found.compositor != "gnome" or not found.session_bus:
        raise DesktopError(f"no GNOME session found for display {display!r} (in {runtime})")
    return found
