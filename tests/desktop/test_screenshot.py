"""computer_use_screenshot: a PNG of the window's size; a minimized window gives the error."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_window_png_and_minimized_error(call: Call, ctx: ToolContext, apps: Apps) -> None:
    calc = await apps.open("galculator")
    shot = await call("computer_use_screenshot", {"windowID": calc.stable_id})
    assert not shot.is_error, shot.text
    assert len(shot.images) == 1 and shot.images[0].mime == "image/png"
    img = Image.open(io.BytesIO(shot.images[0].data))
    assert img.format == "PNG"
    assert img.size == (calc.geometry.width, calc.geometry.height)
    assert f"dimensions: {img.width}x{img.height}" in shot.text
    assert "app: Galculator (galculator)" in shot.text
    # not blank: a real capture has many colours
    assert len(img.getcolors(maxcolors=1 << 16) or []) > 10

    await ctx.desktop.minimize(calc)  # type: ignore[attr-defined]
    hidden = await call("computer_use_screenshot", {"windowID": calc.stable_id})
    assert hidden.is_error
    assert "minimized or hidden" in hidden.text
    assert not hidden.images
