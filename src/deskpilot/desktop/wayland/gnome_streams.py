"""A window's own recording on Mutter: where the GNOME backend aims the pointer and takes a
window's pixels.

``RecordWindow`` records the window Mutter has focused (:mod:`.mutter`), so a window's stream
is started while that window is active, and then follows that window (also once another is
focused: a covered window's pixels stay its own). Measured on mutter 43.8 headless: the stream
is the monitor's size, the window's whole surface at its top left and transparent elsewhere;
GTK 3 reports its AT-SPI window coordinates from the surface's corner (the client-side shadow
included: a 307x211 dialog whose opaque body was 255x159 at (26, 23)), GTK 4 from its opaque
body (a 360x490 calculator), Qt 5 from its content inside the decorations it draws itself.
:func:`content_origin` tells which from the frame's alpha.

A stream is one RemoteDesktop session (its own virtual pointer, moving in the stream's
coordinates) and one frame reader (:mod:`.pipewire`); the streams of windows that are gone are
closed on the next request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping

from PIL import Image

from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.desktop.wayland.mutter import MutterError, MutterSession
from deskpilot.desktop.wayland.pipewire import FrameReader, opaque_box
from deskpilot.errors import ActionFailed

#: how long a new stream may take to deliver its first frame
FIRST_FRAME_S = 10.0
#: the most window streams held at once (each is a PipeWire consumer)
MAX_STREAMS = 6

Activate = Callable[[WindowInfo], Awaitable[bool]]
ActiveHandle = Callable[[], Awaitable[WindowHandle | None]]


def content_origin(box: tuple[int, int, int, int] | None, size: tuple[int, int]) -> tuple[int, int]:
    """Where a window's own (0, 0) lies in its stream, from the opaque box of the frame and
    the size the window's frame reports over AT-SPI (measured on mutter 43.8):

    * the box is that size: the toolkit counts from its opaque body (GTK 4);
    * the box is larger: the client draws decorations around its content (Qt 5's title bar
      on Wayland, which Mutter does not decorate: a 700x500 FeatherPad in a 706x533 box) —
      a title bar on top, borders of one width on the other three sides;
    * the box is smaller: the toolkit counts from its surface's corner, its client-side
      shadow included (GTK 3, Chromium).
    """
    if box is None:
        return 0, 0
    width, height = box[2] - box[0], box[3] - box[1]
    if (width, height) == size:
        return box[0], box[1]
    if width >= size[0] and height >= size[1]:
        side = (width - size[0]) // 2
        return box[0] + side, box[1] + height - size[1] - side
    return 0, 0


class WindowStream:
    """One window's recording: its session (pointer) and its frames."""

    def __init__(self, handle: WindowHandle, session: MutterSession, frames: FrameReader) -> None:
        self.handle = handle
        self.session = session
        self.frames = frames

    @property
    def alive(self) -> bool:
        return self.session.closed is None

    async def frame(self, settle: float = 0.05) -> Image.Image:
        return await asyncio.to_thread(self.frames.frame_rgba, settle=settle, timeout=FIRST_FRAME_S)

    async def origin(
        self, size: tuple[int, int], frame: Image.Image | None = None
    ) -> tuple[int, int]:
        """Where the window's own (0, 0) lies in the stream (see the module docstring)."""
        image = frame if frame is not None else await self.frame(settle=0.0)
        return content_origin(opaque_box(image), size)

    async def image(self, size: tuple[int, int]) -> Image.Image:
        """The window's ``size`` pixels from its own (0, 0), over white where translucent
        (a GTK 3 window's shadow)."""
        frame = await self.frame()
        x, y = await self.origin(size, frame)
        part = frame.crop((x, y, x + size[0], y + size[1]))
        backdrop = Image.new("RGBA", part.size, (255, 255, 255, 255))
        return Image.alpha_composite(backdrop, part).convert("RGB")

    async def close(self) -> None:
        await asyncio.to_thread(self.frames.close)
        await self.session.close()


class WindowStreams:
    """Window streams by handle, started on demand with the window made active first."""

    def __init__(
        self,
        session_bus: str | None,
        runtime_dir: str,
        env: Mapping[str, str],
        activate: Activate,
        active_handle: ActiveHandle,
        handles: Callable[[], Awaitable[dict[WindowHandle, int]]],
    ) -> None:
        self.session_bus = session_bus
        self.runtime_dir = runtime_dir
        self.env = dict(env)
        self._activate = activate
        self._active_handle = active_handle
        self._handles = handles
        self._streams: dict[WindowHandle, WindowStream] = {}
        self._lock = asyncio.Lock()

    def held(self, handle: WindowHandle) -> WindowStream | None:
        stream = self._streams.get(handle)
        return stream if stream is not None and stream.alive else None

    async def of(self, window: WindowInfo) -> WindowStream:
        """The window's stream, started (the window activated first) if there is none."""
        async with self._lock:
            held = self.held(window.handle)
            if held is not None:
                return held
            await self._prune()
            if not await self._activate(window):
                raise ActionFailed(
                    f"window {window.stable_id} could not be made active: its pixels and "
                    "pointer input cannot be reached"
                )
            try:
                session = await MutterSession.start(self.session_bus, record="window")
            except MutterError as exc:
                raise ActionFailed(f"cannot record window {window.stable_id}: {exc}") from exc
            if await self._active_handle() != window.handle:  # focus moved while starting
                await session.close()
                raise ActionFailed(
                    f"window {window.stable_id} lost the focus before its recording started"
                )
            assert session.stream is not None
            try:
                frames = FrameReader(
                    session.stream.node_id,
                    session.stream.size,
                    runtime_dir=self.runtime_dir,
                    env=self.env,
                )
            except BaseException:
                await session.close()
                raise
            stream = WindowStream(window.handle, session, frames)
            self._streams[window.handle] = stream
            return stream

    async def _prune(self) -> None:
        live = await self._handles()
        gone = [h for h, s in self._streams.items() if h not in live or not s.alive]
        if len(self._streams) - len(gone) >= MAX_STREAMS:
            gone.append(next(h for h in self._streams if h not in gone))
        for handle in gone:
            stream = self._streams.pop(handle)
            with contextlib.suppress(MutterError):
                await stream.close()

    async def close(self) -> None:
        for stream in list(self._streams.values()):
            with contextlib.suppress(MutterError):
                await stream.close()
        self._streams.clear()
