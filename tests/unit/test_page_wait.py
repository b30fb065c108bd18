"""Launching.wait_page_loaded over the fake ports: a page counts as loaded once its document
is idle with content and two full reads in a row agree — then the reads that follow are
served from the cache (the pixels' change window ends), not full for PIXEL_SETTLE_S."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.base import Node, Snapshot, WindowInfo
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.desktop.ports.fake import FakeWorld, fake_ports
from deskpilot.desktop.skills.launching import Launching

pytestmark = pytest.mark.asyncio


@dataclass
class Pixels:
    ended: int = 0

    def caught_up(self, window: WindowInfo) -> bool:
        self.ended += 1
        return True


@dataclass
class Reading:
    """Full reads of a page as it loads: busy, then with a first paragraph, then whole."""

    pages: list[list[str]]
    pixels: Pixels = field(default_factory=Pixels)
    reads: int = 0

    async def snapshot(self, window: WindowInfo, **_: Any) -> Snapshot:
        lines = self.pages[min(self.reads, len(self.pages) - 1)]
        self.reads += 1
        states = frozenset({"busy"} if lines == ["busy"] else set())
        doc = Node(key=(":1.1", "/doc"), role="document-web", states=states)
        doc.children = [
            Node(key=(":1.1", f"/p{i}"), role="paragraph", name=line)
            for i, line in enumerate(lines)
            if line != "busy"
        ]
        return Snapshot(window=window, root=Node(key=(":1.1", "/f"), role="frame", children=[doc]))


async def test_a_page_is_loaded_once_two_full_reads_agree(settings: Settings) -> None:
    world = FakeWorld()
    window = world.open(next(a for a in FAKE_APPS if a.name == "Editor"))
    reading = Reading([["busy"], ["Line 1"], ["Line 1", "Line 2"], ["Line 1", "Line 2"]])
    launching = Launching(fake_ports(settings, world), reading)  # type: ignore[arg-type]
    assert await launching.wait_page_loaded(window, timeout=10)
    # not at the first read with content (Chromium's tree trails its paint): at the second
    # read agreeing with the one before
    assert reading.reads == 4
    assert reading.pixels.ended == 1
