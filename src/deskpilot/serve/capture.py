"""One session's live preview: its window's pixels, captured only when they change.

A :class:`Capturer` runs in a thread of its own with its own X connection (python-xlib is used
from one thread per connection). It asks the X server for DAMAGE reports (the bounding box of
what was drawn), and when something changed and a frame is due it grabs just that box, pastes
it into a mirror of the window, and hands out

* a **patch** (the changed box as JPEG, or the whole window as a keyframe) while someone
  watches the session full size: at most :data:`FULL_FPS` frames a second;
* a **thumbnail** (the window scaled to fit 320x200, JPEG, kept one changed box at a time by a
  :class:`~deskpilot.serve.thumbs.ThumbMirror`) for the session cards: at most
  :data:`THUMB_FPS` a second.

Nothing is captured while nobody looks, and a quiet window costs nothing (no polling). A busy
one costs a read of its damage, a look at its place and one grab per frame sent: what it draws
between two frames waits in the X connection until the frame is due. What
changed and its pixels come from the desktop backend's pixel watch (the registry's
:func:`~deskpilot.desktop.registry.open_preview`; X11: DAMAGE reports and XShm or composite
grabs, :mod:`deskpilot.desktop.x11.preview`). How it grabs depends on where the session runs:

* on a sandbox (``root`` mode) the screen is the session's alone: the target window's part of
  the screen, or the whole screen before the session has a window;
* on this desktop (``window`` mode) only the target window's own pixels (another window
  covering it, the console's own among them, never shows), and before the session has a
  window nothing is shown.

The preview is for the person watching, never for a model: it acts on nothing, and a session's
tools see the desktop only through the door.
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from PIL import Image

from deskpilot.desktop.ports.capture import PixelWatch
from deskpilot.errors import DesktopError, DesktopLost
from deskpilot.serve.thumbs import ThumbMirror

log = logging.getLogger(__name__)

FULL_FPS = 15.0
THUMB_FPS = 2.0
FULL_QUALITY = 75
THUMB_QUALITY = 70

Mode = Literal["root", "window"]
Box = tuple[int, int, int, int]  # x, y, width, height


@dataclass(frozen=True)
class Frame:
    session: str
    kind: Literal["key", "patch", "thumb"]
    seq: int
    x: int
    y: int
    w: int
    h: int
    width: int  # the whole window's size (the canvas to draw on)
    height: int
    taken: float  # time.time() of the grab
    jpeg: bytes
    left: int = 0  # where the shown window's top-left corner is on the screen
    top: int = 0

    def header(self) -> dict[str, Any]:
        return {
            "s": self.session,
            "k": self.kind,
            "n": self.seq,
            "x": self.x,
            "y": self.y,
            "w": self.w,
            "h": self.h,
            "W": self.width,
            "H": self.height,
            "t": self.taken,
            "X": self.left,
            "Y": self.top,
        }


@dataclass(frozen=True)
class Seen:
    """What the capturer learned about the target window (for the session's card)."""

    handle: int | None
    title: str
    app: str


def union(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    x0, y0 = min(a[0], b[0]), min(a[1], b[1])
    x1, y1 = max(a[0] + a[2], b[0] + b[2]), max(a[1] + a[3], b[1] + b[3])
    return x0, y0, x1 - x0, y1 - y0


def clip(box: Box, width: int, height: int) -> Box | None:
    x0, y0 = max(0, box[0]), max(0, box[1])
    x1, y1 = min(width, box[0] + box[2]), min(height, box[1] + box[3])
    return (x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None


def jpeg(image: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=quality)
    return out.getvalue()


class Capturer(threading.Thread):
    """The capture thread of one session (see the module docstring).

    ``target()`` gives the handle of the window to show (None: no window yet); ``emit`` gets
    each frame and ``seen`` what the window is called, both called in this thread; the
    pixels come from ``backend`` (a registry name)."""

    def __init__(
        self,
        session: str,
        display: str,
        mode: Mode,
        target: Callable[[], int | None],
        emit: Callable[[Frame], None],
        seen: Callable[[Seen], None],
        backend: str = "x11",
    ) -> None:
        super().__init__(name=f"preview-{session}", daemon=True)
        self.backend = backend
        self.session = session
        self.display_name = display
        self.mode = mode
        self.target = target
        self.emit = emit
        self.seen = seen
        self.full = False  # someone watches the session full size
        self.thumbs = False  # someone shows the session's card
        self.keyframe = threading.Event()  # a new or lagging viewer needs the whole window
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.frames = 0
        self._seq = 0
        self._origin = (0, 0)  # the shown window's place on the screen (for a take-over)

    def want(self, *, full: bool, thumbs: bool) -> None:
        if full and not self.full:
            self.keyframe.set()
        self.full, self.thumbs = full, thumbs
        self.wake.set()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    # -- the thread --------------------------------------------------------------------------

    def run(self) -> None:
        from deskpilot.desktop.registry import open_preview

        try:
            pixels = open_preview(self.backend, self.display_name, self.mode)
        except DesktopError as exc:
            log.debug("no preview of session %s: %s", self.session, exc)
            return
        try:
            self._loop(pixels)
        except DesktopLost as exc:
            log.debug("preview of session %s: %s", self.session, exc)
        except Exception:  # the preview must never take the session down
            log.exception("preview of session %s stopped", self.session)
        finally:
            pixels.close()

    def _loop(self, pixels: PixelWatch) -> None:
        handle: int | None = -1  # nothing watched yet
        mirror: Image.Image | None = None  # the window full size (keyframes)
        small: ThumbMirror | None = None  # the window at thumbnail scale
        dirty: Box | None = None
        origin = (0, 0)
        last_full = last_thumb = last_seen = 0.0
        thumb_dirty = False
        title = ""
        while not self.stopping.is_set():
            if not (self.full or self.thumbs):
                self.wake.wait(0.5)
                self.wake.clear()
                dirty, mirror = None, None  # start afresh when someone looks again
                continue
            wanted = self.target()
            if wanted is None and self.mode == "root":
                wanted = 0  # the whole screen
            if wanted != handle:
                handle, mirror, dirty, title, last_seen = wanted, None, None, "", 0.0
                pixels.watch(handle)
            if handle is None:
                self.seen(Seen(None, "", ""))
                self.wake.wait(0.5)
                self.wake.clear()
                continue
            if mirror is None or small is None:
                geometry = pixels.geometry(handle)
                if geometry is None:  # the window closed: pick the target again
                    handle = -1
                    self.wake.wait(0.2)
                    self.wake.clear()
                    continue
                origin = self._origin = geometry[:2]
                width, height = geometry[2:]
                mirror = Image.new("RGB", (width, height))
                small = ThumbMirror(width, height)
                dirty = (0, 0, width, height)
                self.keyframe.set()
                thumb_dirty = True  # its first thumbnail, whatever the window shows
            width, height = mirror.size
            if dirty is None and not (self.full and self.keyframe.is_set()):
                # nothing to show: wait for drawing (no polling while the window is quiet)
                boxes = pixels.changes(0.5, origin)
                dirty = self._within(dirty, boxes, width, height)
                if not boxes and pixels.geometry(handle) != (*origin, width, height):
                    mirror = None  # quiet, but moved, resized or closed: look again
                continue
            interval = 1 / FULL_FPS if self.full else 1 / THUMB_FPS
            due = (last_full if self.full else last_thumb) + interval
            if time.monotonic() < due:
                # drawing waits for its frame; what is drawn meanwhile is read then, at once
                # (one read, not one per report: the reports of a busy window come by the
                # dozen between two thumbnails)
                self.wake.wait(due - time.monotonic())
                self.wake.clear()
                continue
            dirty = self._within(dirty, pixels.changes(0.0, origin), width, height)
            if pixels.geometry(handle) != (*origin, width, height):
                mirror = None  # moved, resized or closed since: a keyframe of it as it is now
                continue
            now = time.monotonic()
            taken = time.time()
            patch = None
            if dirty is not None:
                dirty = small.align(dirty)
                patch = pixels.grab(handle, dirty, origin)
                if patch is None:  # the window went away under us
                    handle = -1
                    continue
                mirror.paste(patch, (dirty[0], dirty[1]))
                thumb_dirty = small.paste(patch, dirty) or thumb_dirty
            if self.full:
                if self.keyframe.is_set():
                    self.keyframe.clear()
                    self._send("key", mirror, (0, 0, width, height), width, height, taken)
                elif patch is not None and dirty is not None:
                    self._send("patch", patch, dirty, width, height, taken)
                last_full = now
            dirty = None
            if self.thumbs and thumb_dirty and now - last_thumb >= 1 / THUMB_FPS:
                image = small.image()
                self._send("thumb", image, (0, 0, *image.size), width, height, taken)
                last_thumb, thumb_dirty = now, False
            if now - last_seen >= 1.0:  # what the window is called, for the card
                last_seen = now
                name = pixels.title(handle) if handle else "the whole screen"
                if name != title:
                    title = name
                    self.seen(Seen(handle or None, name, pixels.app(handle) if handle else ""))

    @staticmethod
    def _within(dirty: Box | None, boxes: list[Box], width: int, height: int) -> Box | None:
        """``dirty`` grown by the drawn ``boxes`` that fall inside the window."""
        for box in boxes:
            inside = clip(box, width, height)
            if inside is not None:
                dirty = union(dirty, inside)
        return dirty

    def _send(
        self, kind: Any, image: Image.Image, box: Box, width: int, height: int, taken: float
    ) -> None:
        self._seq += 1
        self.frames += 1
        quality = THUMB_QUALITY if kind == "thumb" else FULL_QUALITY
        frame = Frame(
            self.session,
            kind,
            self._seq,
            *box,
            width,
            height,
            taken,
            jpeg(image, quality),
            *self._origin,
        )
        self.emit(frame)
