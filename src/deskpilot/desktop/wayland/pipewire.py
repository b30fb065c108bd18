"""Frames of a PipeWire video stream (a Mutter or portal ScreenCast node), through GStreamer.

One ``gst-launch-1.0`` pipeline per stream — ``pipewiresrc`` → ``videoconvert`` → raw RGBx of
the stream's size → stdout — runs for as long as the stream is wanted; a reader thread keeps
the latest frame (RGBA: a window stream's alpha tells the window's opaque body from its
shadow — :func:`opaque_box`). Compositors send a frame only when something on screen changed
(damage), so an idle desktop costs nothing, and the latest frame *is* the screen. Measured on
this machine (headless mutter 43.8, 1280x800): a one-shot pipeline per screenshot took 5.6 s
(negotiation, then waiting for damage), which is why the pipeline stays up.

The pipeline needs ``gstreamer1.0-tools`` and ``gstreamer1.0-pipewire``; it connects to the
PipeWire daemon of ``runtime_dir`` (``XDG_RUNTIME_DIR``), optionally through a PipeWire remote
fd a portal handed out (``fd``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping

from PIL import Image

from deskpilot.errors import DesktopError


class PipeWireError(DesktopError):
    """The stream's frames cannot be read (GStreamer missing, the stream ended)."""


class FrameReader:
    """The latest frame of one PipeWire video stream of a known size."""

    def __init__(
        self,
        node_id: int,
        size: tuple[int, int],
        *,
        runtime_dir: str,
        env: Mapping[str, str] | None = None,
        fd: int | None = None,
    ) -> None:
        if shutil.which("gst-launch-1.0") is None:
            raise PipeWireError(
                "cannot read screen frames: gst-launch-1.0 is not installed (Debian packages "
                "gstreamer1.0-tools and gstreamer1.0-pipewire)"
            )
        self.size = size
        width, height = size
        source = f"pipewiresrc path={node_id} always-copy=true"
        pass_fds: tuple[int, ...] = ()
        if fd is not None:
            source += f" fd={fd}"
            pass_fds = (fd,)
        pipeline = (
            f"{source} ! videoconvert ! videoscale ! "
            f"video/x-raw,format=RGBA,width={width},height={height} ! fdsink fd=1 sync=false"
        )
        run_env = dict(env or {})
        run_env.setdefault("PATH", os.defpath)
        run_env["XDG_RUNTIME_DIR"] = runtime_dir
        self._proc = subprocess.Popen(
            ["gst-launch-1.0", "-q", *pipeline.split()],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=run_env,
            pass_fds=pass_fds,
        )
        self._frame: bytes | None = None
        self._count = 0
        self._last = 0.0
        self._cond = threading.Condition()
        self._error = ""
        self._thread = threading.Thread(target=self._pump, name="pipewire-frames", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        width, height = self.size
        need = width * height * 4
        out = self._proc.stdout
        assert out is not None
        try:
            while True:
                data = out.read(need)
                if len(data) < need:
                    break
                with self._cond:
                    self._frame = data
                    self._count += 1
                    self._last = time.monotonic()
                    self._cond.notify_all()
        finally:
            err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
            with self._cond:
                self._error = err.strip().splitlines()[-1] if err.strip() else "the stream ended"
                self._cond.notify_all()

    def frame(self, *, settle: float = 0.05, timeout: float = 5.0) -> Image.Image:
        """The screen as it is now (RGB): the latest frame once no new one came for ``settle``
        seconds (a change still being drawn), waiting for the first one up to ``timeout``."""
        return self.frame_rgba(settle=settle, timeout=timeout).convert("RGB")

    def frame_rgba(self, *, settle: float = 0.05, timeout: float = 5.0) -> Image.Image:
        """Like :meth:`frame`, with the stream's alpha channel."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if self._frame is None and self._error:
                    raise PipeWireError(f"no screen frame: {self._error}")
                now = time.monotonic()
                quiet = self._frame is not None and now - self._last >= settle
                if quiet or (self._frame is not None and now >= deadline):
                    data = self._frame
                    break
                if now >= deadline:
                    raise PipeWireError(f"no screen frame within {timeout:g}s")
                wait = settle - (now - self._last) if self._frame is not None else deadline - now
                self._cond.wait(max(0.005, min(wait, deadline - now)))
        assert data is not None
        return Image.frombytes("RGBA", self.size, data)

    def wait_frame(self, after: int, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for a frame after the ``after``-th (none comes while
        nothing is drawn, or once the stream ended); returns how many arrived so far."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._count <= after and not self._error:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._count

    @property
    def frames(self) -> int:
        """How many frames arrived so far."""
        return self._count

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for pipe in (self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self._thread.join(timeout=3)


def opaque_box(image: Image.Image) -> tuple[int, int, int, int] | None:
    """(left, top, right, bottom) of a window frame's opaque pixels (alpha 255), or None.

    A window stream (Mutter's ``RecordWindow``) holds the window's whole surface at its top
    left: the client-side shadow is translucent, the window itself opaque. Measured with a
    GTK 4 dialog on mutter 43: the body began at (61, 55) of the stream, and the dialog's
    AT-SPI window coordinates are relative to that body (GTK 3 ones include the shadow)."""
    if image.mode != "RGBA":
        return None
    alpha = image.getchannel("A").point(lambda a: 255 if a == 255 else 0)
    return alpha.getbbox()
