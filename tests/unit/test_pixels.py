"""Whether a web engine's window changed between reads, told by its pixels (skills/pixels.py),
over the fake ports: a change keeps reads full for PIXEL_SETTLE_S, and a window's first look
in a process is one full read, not a change that keeps the next reads full too."""

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


async def test_a_first_look_is_one_full_read_and_a_change_keeps_reads_full(
    settings: Settings,
) -> None:
    pixels, world, window = a_web_window(settings)
    assert await pixels.changed(window)  # nothing to compare with: this read is full
    # the same pixels: the tree just read is trusted (it was: full for 1.5 s after a launch)
    assert not await pixels.changed(window)
    assert not await pixels.changed(window)
    world.of(window.handle).scroll += 5  # type: ignore[union-attr]
    assert await pixels.changed(window)  # the page moved
    assert await pixels.changed(window)  # and the tree may trail the paint: still full
