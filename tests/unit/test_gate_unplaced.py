"""Blocked windows whose place on the screen is unknown (``WindowInfo.placed`` False, as on
GNOME on Wayland): a window's own capture goes out whole, a screen image is withheld."""

from __future__ import annotations

import dataclasses
import io

import pytest
from PIL import Image

from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.native.actions import Screenshot
from deskpilot.native.executor import NativeExecutor
from deskpilot.policy import AllowAll
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

CALC, _EDITOR, VAULT = FAKE_APPS


def unplaced(desktop: FakeDesktop) -> None:
    for w in desktop.windows:
        w.info = dataclasses.replace(w.info, placed=False)


@pytest.mark.asyncio
async def test_an_unplaced_windows_capture_is_whole_and_the_screen_withheld(
    settings: Settings,
) -> None:
    desktop = FakeDesktop()
    calc = desktop.add_window(CALC)
    desktop.add_window(VAULT)  # over the calculator, were places known
    ctx = ToolContext(desktop=desktop, settings=settings, approver=AllowAll(), audit=lambda e: None)
    ex = NativeExecutor(ToolSet(), ctx)
    placed_shot = await ex.run([Screenshot()], window=calc.stable_id, screenshot=False)
    image = placed_shot.steps[0].result.images[0]
    blacked = Image.open(io.BytesIO(image.data)).convert("RGB")
    spot = (calc.geometry.width - 20, calc.geometry.height - 20)  # under the vault, if placed
    assert blacked.getpixel(spot) == (0, 0, 0)

    unplaced(desktop)
    own = await ex.run([Screenshot()], window=calc.stable_id, screenshot=False)
    whole = Image.open(io.BytesIO(own.steps[0].result.images[0].data)).convert("RGB")
    assert whole.size == blacked.size
    assert whole.getpixel(spot) != (0, 0, 0)  # nothing blacked: the vault is not in it
    screen = await ex.run([Screenshot()], window=None, screenshot=False)
    result = screen.steps[0].result
    assert result.images == [] and "withheld" in result.text
