"""The console's preview thread reads pixels only through the backend's PixelWatch: with a toy
backend's in-memory watch it sends a keyframe, patches of what changed and thumbnails, and
names the window; a backend without a preview gives no preview and no error."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest
from PIL import Image

from deskpilot.config import Settings
from deskpilot.desktop import registry
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import PixelWatch, Region
from deskpilot.serve.capture import Capturer, Frame, Seen


class PaintedWatch:
    """A 64×48 window that paints one red box once, then nothing."""

    def __init__(self) -> None:
        self.screen = Image.new("RGB", (64, 48), "black")
        self.screen.paste(Image.new("RGB", (10, 6), "red"), (8, 8))
        self.watched: list[int | None] = []
        self.pending: list[Region] = [(8, 8, 10, 6)]
        self.closed = False

    def watch(self, handle: int | None) -> None:
        self.watched.append(handle)

    def geometry(self, handle: int) -> Region | None:
        return (100, 50, 64, 48)

    def changes(self, timeout: float, origin: tuple[int, int]) -> list[Region]:
        assert origin == (100, 50)
        boxes, self.pending = self.pending, []
        return boxes

    def grab(self, handle: int, box: Region, origin: tuple[int, int]) -> Image.Image | None:
        x, y, w, h = box
        return self.screen.crop((x, y, x + w, y + h))

    def title(self, handle: int) -> str:
        return "Painted"

    def app(self, handle: int) -> str:
        return "painter"

    def close(self) -> None:
        self.closed = True


WATCHES: list[PaintedWatch] = []


def open_watch(display: str, mode: str) -> PixelWatch:
    watch = PaintedWatch()
    WATCHES.append(watch)
    return watch


async def no_ports(settings: Settings) -> Ports:
    raise AssertionError("a preview opens no desktop")


@pytest.fixture
def toys() -> Iterator[None]:
    registry.register(registry.Backend("painted", no_ports, lambda s: None, preview=open_watch))
    registry.register(registry.Backend("blind", no_ports, lambda s: None))
    WATCHES.clear()
    try:
        yield
    finally:
        registry.unregister("painted")
        registry.unregister("blind")


def test_frames_come_from_the_backends_pixel_watch(toys: None) -> None:
    frames: list[Frame] = []
    seen: list[Seen] = []
    got = threading.Event()

    def enough() -> None:
        if {f.kind for f in frames} >= {"key", "thumb"} and seen:
            got.set()

    def emit(frame: Frame) -> None:
        frames.append(frame)
        enough()

    def named(what: Seen) -> None:
        seen.append(what)
        enough()

    capturer = Capturer("s1", ":99", "window", lambda: 7, emit, named, backend="painted")
    capturer.want(full=True, thumbs=True)
    capturer.start()
    try:
        assert got.wait(10), [f.kind for f in frames]
    finally:
        capturer.stop()
        capturer.join(10)
    assert not capturer.is_alive() and WATCHES[0].closed and WATCHES[0].watched[0] == 7
    key = next(f for f in frames if f.kind == "key")
    assert (key.width, key.height) == (64, 48)
    shown = Image.open(io.BytesIO(key.jpeg))
    assert shown.getpixel((12, 10))[0] > 200  # the window's pixels, where they are
    assert shown.getpixel((40, 40))[0] < 50
    assert seen[0] == Seen(7, "Painted", "painter")


def test_a_backend_without_a_preview_shows_none(toys: None) -> None:
    frames: list[Frame] = []
    capturer = Capturer("s2", ":99", "root", lambda: None, frames.append, print, backend="blind")
    capturer.want(full=True, thumbs=True)
    capturer.start()
    capturer.join(10)  # it ends at once: nothing to read pixels with
    assert not capturer.is_alive() and frames == []
