"""The console's thumbnails cost what changed, and look as they did.

A ThumbMirror fed changed boxes one by one gives exactly Pillow's reduce-then-resize of the whole
window, a shape lands where it is, and the thumbnail is within a few levels of the full
bilinear resize the console used before. A busy window's preview thread reads its damage and
its place once per frame sent, not once per damage report.
"""

from __future__ import annotations

import io
import random
import threading
import time

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageStat

from deskpilot.config import Settings
from deskpilot.desktop import registry
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import PixelWatch, Region
from deskpilot.serve.capture import THUMB_FPS, Capturer, Frame
from deskpilot.serve.thumbs import ThumbMirror, fit

W, H = 1000, 700


def window(seed: int) -> Image.Image:
    """A window full of small text and coloured bars (what thumbnails blur most)."""
    rng = random.Random(seed)
    image = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(image)
    for i in range(200):
        draw.text((rng.randrange(W), rng.randrange(H)), f"Save as… {i}", fill=(0, 0, 0))
    for _ in range(40):
        x, y = rng.randrange(W), rng.randrange(H)
        colour = tuple(rng.randrange(256) for _ in range(3))
        draw.rectangle((x, y, x + rng.randint(5, 100), y + 20), fill=colour)
    return image


def feed(mirror: ThumbMirror, image: Image.Image, box: Region) -> None:
    x, y, w, h = mirror.align(box)
    mirror.paste(image.crop((x, y, x + w, y + h)), (x, y, w, h))


def test_patch_by_patch_is_the_whole_windows_reduction() -> None:
    rng = random.Random(7)
    before, after = window(1), window(2)
    mirror = ThumbMirror(W, H)
    feed(mirror, before, (0, 0, W, H))
    shown = before.copy()
    for _ in range(40):  # boxes anywhere, of any size, off the grid
        x, y = rng.randrange(W), rng.randrange(H)
        box = (x, y, rng.randint(1, W - x), rng.randint(1, H - y))
        grown = mirror.align(box)
        assert grown[0] <= box[0] and grown[1] <= box[1]
        assert grown[0] + grown[2] >= box[0] + box[2] and grown[1] + grown[3] >= box[1] + box[3]
        region = (grown[0], grown[1], grown[0] + grown[2], grown[1] + grown[3])
        shown.paste(after.crop(region), region[:2])
        feed(mirror, after, box)
    whole = shown.resize(mirror.size, Image.Resampling.BILINEAR, reducing_gap=1.0)
    assert ImageChops.difference(mirror.image(), whole).getbbox() is None


def test_the_thumbnail_looks_as_the_full_resize_did() -> None:
    image = window(3)
    bar = ImageDraw.Draw(image)
    bar.rectangle((500, 300, 599, 339), fill=(200, 0, 0))  # a red bar, to find again
    mirror = ThumbMirror(W, H)
    feed(mirror, image, (0, 0, W, H))
    thumb = mirror.image()
    before = image.resize(fit(W, H), Image.Resampling.BILINEAR)  # the console's old thumbnail
    assert thumb.size == before.size == (286, 200)
    assert max(ImageStat.Stat(ImageChops.difference(thumb, before)).mean) < 6
    scale = thumb.width / W
    for x, y in ((510, 310), (590, 330), (550, 320)):  # inside the bar: red, where it was
        r, g, b = thumb.getpixel((round(x * scale), round(y * scale)))
        assert r > 150 and g < 60 and b < 60


def test_a_box_off_the_grid_is_refused_and_changes_nothing() -> None:
    mirror = ThumbMirror(W, H)
    assert mirror.factor == 3
    blank = mirror.image()
    with pytest.raises(ValueError, match="grid"):
        mirror.paste(Image.new("RGB", (30, 30), "red"), (1, 0, 30, 30))
    assert ImageChops.difference(mirror.image(), blank).getbbox() is None


def test_small_windows_are_not_enlarged() -> None:
    mirror = ThumbMirror(200, 100)
    assert (mirror.size, mirror.factor) == ((200, 100), 1)
    feed(mirror, Image.new("RGB", (200, 100), "blue"), (0, 0, 200, 100))
    assert mirror.image().getpixel((100, 50)) == (0, 0, 255)


class BusyWatch:
    """A window that is drawn on all the time: every read of its damage finds some (in the same
    50x20 box at (300, 300))."""

    def __init__(self, changing: bool) -> None:
        self.screen = Image.new("RGB", (W, H), "white")
        self.reads = self.places = self.grabs = 0
        self.changing = changing  # each time drawn in a new colour, or as it was
        self.lock = threading.Lock()

    def watch(self, handle: int | None) -> None:
        return None

    def geometry(self, handle: int) -> Region | None:
        with self.lock:
            self.places += 1
        return (0, 0, W, H)

    def changes(self, timeout: float, origin: tuple[int, int]) -> list[Region]:
        with self.lock:
            self.reads += 1
        time.sleep(0.002)  # a report arrives every 2 ms
        return [(300, 300, 50, 20)]

    def grab(self, handle: int, box: Region, origin: tuple[int, int]) -> Image.Image | None:
        with self.lock:
            self.grabs += 1
            if self.changing:
                shade = Image.new("RGB", (50, 20), (self.grabs * 40 % 256, 0, 0))
                self.screen.paste(shade, (300, 300))
        x, y, w, h = box
        return self.screen.crop((x, y, x + w, y + h))

    def title(self, handle: int) -> str:
        return "busy"

    def app(self, handle: int) -> str:
        return "busy"

    def close(self) -> None:
        return None


async def no_desktop(settings: Settings) -> Ports:
    raise AssertionError("a preview opens no desktop")


def test_a_busy_windows_damage_is_read_once_per_frame() -> None:
    watch = BusyWatch(changing=True)

    def open_watch(display: str, mode: str) -> PixelWatch:
        return watch

    registry.register(registry.Backend("busy", no_desktop, lambda s: None, preview=open_watch))
    thumbs: list[Frame] = []
    enough = threading.Event()

    def emit(frame: Frame) -> None:
        if frame.kind == "thumb":
            thumbs.append(frame)
            if len(thumbs) >= 4:
                enough.set()

    capturer = Capturer("busy", ":99", "window", lambda: 5, emit, lambda s: None, "busy")
    capturer.want(full=False, thumbs=True)
    try:
        capturer.start()
        assert enough.wait(4 / THUMB_FPS + 5), f"{len(thumbs)} thumbnails"
    finally:
        capturer.stop()
        capturer.join(10)
        registry.unregister("busy")
    with watch.lock:
        frames, reads, places = len(thumbs), watch.reads, watch.places
    # a report every 2 ms is ~250 a frame: each frame reads them once after the first (two
    # reads) and looks up the window's place once (plus the first look)
    assert reads <= 2 * frames + 3, (reads, frames)
    assert places <= frames + 3, (places, frames)
    assert watch.grabs <= frames + 1


def test_a_window_drawn_again_as_it_was_sends_no_new_thumbnail() -> None:
    mirror = ThumbMirror(W, H)
    image = window(4)
    feed(mirror, image, (0, 0, W, H))
    box = mirror.align((400, 300, 100, 40))
    x, y, w, h = box
    assert not mirror.paste(image.crop((x, y, x + w, y + h)), box)  # the same pixels again
    changed = image.copy()
    ImageDraw.Draw(changed).rectangle((420, 310, 440, 320), fill=(0, 0, 255))
    assert mirror.paste(changed.crop((x, y, x + w, y + h)), box)

    watch = BusyWatch(changing=False)  # damage all the time, the same white window each time
    registry.register(
        registry.Backend("redrawn", no_desktop, lambda s: None, preview=lambda d, m: watch)
    )
    thumbs: list[Frame] = []
    second = threading.Event()

    def emit(frame: Frame) -> None:
        if frame.kind == "thumb":
            thumbs.append(frame)
            if len(thumbs) == 2:
                second.set()

    capturer = Capturer("redrawn", ":99", "window", lambda: 5, emit, lambda s: None, "redrawn")
    capturer.want(full=False, thumbs=True)
    try:
        capturer.start()
        # four thumbnails' time of damage: only the first thumbnail is sent
        assert not second.wait(4 / THUMB_FPS), f"{len(thumbs)} thumbnails of an unchanged window"
        with watch.lock:
            drawn = watch.grabs
        with watch.lock:  # now it changes
            watch.screen.paste(Image.new("RGB", (50, 20), "red"), (300, 300))
        assert second.wait(10), "no thumbnail after the window changed"
    finally:
        capturer.stop()
        capturer.join(10)
        registry.unregister("redrawn")
    assert drawn >= 4  # it did look, each time
    shown = Image.open(io.BytesIO(thumbs[1].jpeg)).convert("RGB")
    r, g, b = shown.getpixel((round(325 * shown.width / W), round(310 * shown.height / H)))
    assert r > 150 and g < 80 and b < 80
