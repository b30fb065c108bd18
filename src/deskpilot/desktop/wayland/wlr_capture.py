"""Screen capture on wlroots compositors: wlr-screencopy into shared memory.

``zwlr_screencopy_manager_v1.capture_output[_region]`` makes a frame; the compositor describes
the buffer it wants (``buffer``: wl_shm format, width, height, stride; then ``buffer_done`` from
version 3), deskpilot offers one in a memfd-backed ``wl_shm`` pool, asks for the ``copy`` and
waits for ``ready`` (or ``failed``). Pixels arrive as little-endian XRGB/ARGB (B, G, R, X bytes),
possibly upside down (``flags``: y_invert). No subprocess, no PNG round trip (``grim`` writes a
PNG that deskpilot would decode again).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import select
import time
from dataclasses import dataclass, field

from PIL import Image

from deskpilot.desktop.wayland.wire import Args, Connection, Reader, WaylandError

MANAGER = "zwlr_screencopy_manager_v1"
CAPTURE_OUTPUT, CAPTURE_OUTPUT_REGION = 0, 1
#: frame requests / events
COPY, FRAME_DESTROY, COPY_WITH_DAMAGE = 0, 1, 2
EV_BUFFER, EV_FLAGS, EV_READY, EV_FAILED, EV_DAMAGE, EV_BUFFER_DONE = 0, 1, 2, 3, 4, 6
Y_INVERT = 1
#: wl_shm formats → Pillow raw modes (little-endian memory order)
SHM_FORMATS = {0: "BGRA", 1: "BGRX", 0x34324241: "RGBA", 0x34324258: "RGBX"}


@dataclass
class _Frame:
    format: int = -1
    width: int = 0
    height: int = 0
    stride: int = 0
    flags: int = 0
    described: bool = False
    ready: bool = False
    failed: bool = False
    damage: list[tuple[int, int, int, int]] = field(default_factory=list)


class ScreenCopy:
    """Captures of one output of a wlroots compositor."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        glob = conn.find(MANAGER)
        if glob is None:
            raise WaylandError(
                "this compositor offers no wlr-screencopy: deskpilot cannot capture its screen "
                "(wlroots compositors such as sway do)"
            )
        self.version = min(glob.version, 3)
        self.manager = conn.bind(MANAGER, self.version)
        self.shm = conn.bind("wl_shm", 1)
        self.output = conn.bind("wl_output", 1)
        conn.roundtrip()

    @classmethod
    def open(cls, socket_path: str) -> ScreenCopy:
        return cls(Connection.connect(socket_path))

    def close(self) -> None:
        self.conn.close()

    def capture(
        self, region: tuple[int, int, int, int] | None = None, *, cursor: bool = False
    ) -> Image.Image:
        """The output's pixels (or those of ``region``: x, y, width, height in output
        coordinates) as an RGB image."""
        frame = _Frame()
        fid = self.conn.new_id(lambda op, body, _fds: _on_frame(frame, op, body))
        args = Args().uint(fid).int(1 if cursor else 0).uint(self.output)
        if region is None:
            self.conn.send(self.manager, CAPTURE_OUTPUT, args)
        else:
            x, y, w, h = region
            if w <= 0 or h <= 0:
                raise WaylandError(f"cannot capture an empty region {region}")
            args.int(x).int(y).int(w).int(h)
            self.conn.send(self.manager, CAPTURE_OUTPUT_REGION, args)
        try:
            v3 = self.version >= 3

            def described() -> bool:
                return frame.failed or (frame.described if v3 else frame.format >= 0)

            self.conn.dispatch_until(described, 5.0, "the frame's buffer")
            if frame.failed:
                raise WaylandError("the compositor could not capture the screen")
            return self._copy(fid, frame)
        finally:
            self.conn.send(fid, FRAME_DESTROY)

    def _copy(self, fid: int, frame: _Frame) -> Image.Image:
        mode = SHM_FORMATS.get(frame.format)
        if mode is None:
            raise WaylandError(f"unsupported screen pixel format {frame.format:#x}")
        size = frame.stride * frame.height
        fd = os.memfd_create("deskpilot-frame", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            pool = self.conn.new_id()
            self.conn.send(self.shm, 0, Args().uint(pool).int(size), fds=[fd])
            buffer = self.conn.new_id()
            args = Args().uint(buffer).int(0).int(frame.width).int(frame.height)
            self.conn.send(pool, 0, args.int(frame.stride).uint(frame.format))
            self.conn.send(fid, COPY, Args().uint(buffer))
            self.conn.dispatch_until(
                lambda: frame.ready or frame.failed, 5.0, "the compositor to copy the frame"
            )
            self.conn.send(buffer, 0)  # wl_buffer.destroy
            self.conn.send(pool, 1)  # wl_shm_pool.destroy
            if frame.failed:
                raise WaylandError("the compositor failed to copy the screen")
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as mem:
                image = Image.frombytes(
                    "RGB", (frame.width, frame.height), bytes(mem), "raw", mode, frame.stride
                )
        finally:
            os.close(fd)
        if frame.flags & Y_INVERT:
            image = image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
        return image


def _on_frame(frame: _Frame, opcode: int, body: bytes) -> None:
    r = Reader(body)
    if opcode == EV_BUFFER:
        fmt, width, height, stride = r.uint(), r.uint(), r.uint(), r.uint()
        if frame.format < 0 or fmt in SHM_FORMATS:  # keep the first shm format we can read
            frame.format, frame.width, frame.height, frame.stride = fmt, width, height, stride
    elif opcode == EV_FLAGS:
        frame.flags = r.uint()
    elif opcode == EV_READY:
        frame.ready = True
    elif opcode == EV_FAILED:
        frame.failed = True
    elif opcode == EV_DAMAGE:
        frame.damage.append((r.uint(), r.uint(), r.uint(), r.uint()))
    elif opcode == EV_BUFFER_DONE:
        frame.described = True


class OutputDamage:
    """Where the compositor redraws the output: ``copy_with_damage`` frames (screencopy v2),
    one outstanding at a time. The compositor answers a frame only once something on the
    output was drawn, with the boxes drawn since the last one: a quiet screen costs nothing.
    Used from one thread (the console's live preview)."""

    def __init__(self, screencopy: ScreenCopy) -> None:
        if screencopy.version < 2:
            raise WaylandError("this compositor's screencopy reports no damage (version < 2)")
        self.copy = screencopy
        self.conn = screencopy.conn
        self._pending: tuple[int, _Frame, int, int, int] | None = None  # fid, frame, fd, pool, buf

    def wait(self, timeout: float) -> list[tuple[int, int, int, int]]:
        """The boxes (x, y, width, height, output coordinates) drawn since the last call that
        returned some, waiting up to ``timeout`` seconds for drawing; [] when nothing was."""
        if self._pending is None:
            self._start()
        assert self._pending is not None
        frame = self._pending[1]
        deadline = time.monotonic() + timeout
        while not (frame.ready or frame.failed):
            left = max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([self.conn.sock], [], [], left)
            if not readable:
                return []
            self.conn.read_events()
        self._finish()
        if frame.failed:
            return []
        return list(frame.damage)

    def _start(self) -> None:
        frame = _Frame()
        fid = self.conn.new_id(lambda op, body, _fds: _on_frame(frame, op, body))
        self.conn.send(
            self.copy.manager, CAPTURE_OUTPUT, Args().uint(fid).int(0).uint(self.copy.output)
        )
        v3 = self.copy.version >= 3

        def described() -> bool:
            return frame.failed or (frame.described if v3 else frame.format >= 0)

        self.conn.dispatch_until(described, 5.0, "the frame's buffer")
        if frame.failed or frame.format not in SHM_FORMATS:
            self.conn.send(fid, FRAME_DESTROY)
            raise WaylandError("the compositor offers no frame to watch for drawing")
        size = frame.stride * frame.height
        fd = os.memfd_create("deskpilot-damage", os.MFD_CLOEXEC)
        os.ftruncate(fd, size)
        pool = self.conn.new_id()
        self.conn.send(self.copy.shm, 0, Args().uint(pool).int(size), fds=[fd])
        buffer = self.conn.new_id()
        args = Args().uint(buffer).int(0).int(frame.width).int(frame.height)
        self.conn.send(pool, 0, args.int(frame.stride).uint(frame.format))
        self.conn.send(fid, COPY_WITH_DAMAGE, Args().uint(buffer))
        self._pending = (fid, frame, fd, pool, buffer)

    def _finish(self) -> None:
        if self._pending is None:
            return
        fid, _frame, fd, pool, buffer = self._pending
        self._pending = None
        os.close(fd)
        with contextlib.suppress(WaylandError, OSError):
            self.conn.send(fid, FRAME_DESTROY)
            self.conn.send(buffer, 0)  # wl_buffer.destroy
            self.conn.send(pool, 1)  # wl_shm_pool.destroy

    def close(self) -> None:
        self._finish()
