"""Whether a web engine's window changed between reads, told by its pixels (skills/pixels.py),
over the fake ports: a change keeps reads full for PIXEL_SETTLE_S (the tree trails the paint),
a caret blinking is no change."""

from __future__ import annotations

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.desktop.ports.fake import FakeWorld, fake_ports
from deskpilot.desktop.skills.pixels import Pixels

pytestmark = pytest.mark.asyncio


def a_web_window(settings: Settings) -> tuple[Pixels, FakeWorld, WindowInfo]:
    world = FakeWorld()
    ports = fake_ports(settings, world)

    async def web_engine(window: WindowInfo) -> bool | None:
        return True  # its tree was read already (a launch waited for it): a web engine's

    ports.a11y.web_engine = web_engine  # type: ignore[method-assign]
    editor = next(a for a in FAKE_APPS if a.name == "Editor")
    return Pixels(ports), world, world.open(editor)


class Clock:
    """The pixels module's clock (its ``time``), set by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


async def test_a_caret_blinking_keeps_the_tree_but_a_scroll_does_not(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A web page with a focused field blinks its caret: a change in a box a caret's size is
    no reason to read the page afresh (every read was a full one while it blinked)."""
    import zlib

    from PIL import Image, ImageDraw

    from deskpilot.desktop.skills import pixels as module

    pixels, _world, window = a_web_window(settings)
    clock = Clock()
    monkeypatch.setattr(module, "time", clock)
    shown = {"caret": False, "scroll": 0}

    def picture() -> Image.Image:
        img = Image.new("RGB", (400, 500), "white")
        draw = ImageDraw.Draw(img)
        for i in range(20):
            draw.text((10, 40 + 20 * i - shown["scroll"]), f"Line {i}", fill="black")
        if shown["caret"]:
            draw.line([(200, 10), (200, 27)], fill="black")  # 1 px wide, 18 px high
        return img

    async def capture_image(window: WindowInfo | None = None) -> Image.Image:
        return picture()

    monkeypatch.setattr(pixels.grab, "capture_image", capture_image)
    monkeypatch.setattr(pixels.grab, "checksum", lambda region: zlib.crc32(picture().tobytes()))
    assert await pixels.changed(window)  # the first look: nothing to compare with
    assert await pixels.changed(window)  # and the tree may trail what it showed
    clock.now += 2
    assert not await pixels.changed(window)
    shown["caret"] = True
    assert await pixels.changed(window)  # a first change counts: nothing to compare it with
    clock.now += 2
    shown["caret"] = False
    assert not await pixels.changed(window)  # the caret blinked: the tree stands
    clock.now += 0.5
    shown["caret"] = True
    assert not await pixels.changed(window)
    shown["scroll"] = 60
    assert await pixels.changed(window)  # the page moved


async def test_a_tree_caught_up_with_the_paint_ends_the_change(settings: Settings) -> None:
    """A page waited for until two full reads agreed: when its pixels stood still between them
    too, the next reads are served from the cache at once, not full for PIXEL_SETTLE_S (the
    bench's warm reads of Chromium were full for 1.5 s after its launch); a change since the
    last look is not over."""
    pixels, world, window = a_web_window(settings)
    page = world.of(window.handle)
    assert page is not None
    assert await pixels.changed(window)  # the first look
    page.scroll += 5  # type: ignore[attr-defined]
    assert await pixels.changed(window)  # it moved while loading
    assert not pixels.caught_up(window)  # its pixels changed at the last look: not over
    assert await pixels.changed(window)  # the same pixels, but within PIXEL_SETTLE_S
    assert pixels.caught_up(window)  # they stood still: the tree just read agrees with them
    assert not await pixels.changed(window)
    page.scroll += 5  # type: ignore[attr-defined]
    assert await pixels.changed(window)  # a change after it counts again
    assert await pixels.changed(window)
