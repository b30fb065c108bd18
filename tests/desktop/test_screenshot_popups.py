"""A window's screenshot shows the app's open menu and combo list, as a person sees them.

Menus and combo-box lists are separate override-redirect X windows: a capture of the app's
window alone never showed them. Where an open menu's item lies (its AT-SPI extents), the
screenshot must hold the same pixels as the screen itself (the root window's composited
image, a different path than the window capture) and differ from the shot before it opened.
"""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image, ImageChops

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import Rect, WindowInfo
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _shot(call: Call, window: WindowInfo) -> Image.Image:
    result = await call("computer_use_screenshot", {"windowID": window.stable_id})
    assert not result.is_error, result.text
    g = window.geometry
    assert result.data is not None and result.data["covers"][:2] == [g.x, g.y]
    return Image.open(io.BytesIO(result.images[0].data)).convert("RGB")


async def _shows_popup(
    call: Call, ctx: ToolContext, window: WindowInfo, before: Image.Image, item: Rect
) -> None:
    after = await _shot(call, window)
    screen = Image.open(io.BytesIO(await ctx.desktop.capture(None))).convert("RGB")
    g = window.geometry
    box = (item.x - g.x, item.y - g.y, item.x - g.x + item.width, item.y - g.y + item.height)
    screen_box = (item.x, item.y, item.x + item.width, item.y + item.height)
    assert ImageChops.difference(after.crop(box), before.crop(box)).getbbox() is not None
    # what the screenshot shows there is what the screen shows there
    assert ImageChops.difference(after.crop(box), screen.crop(screen_box)).getbbox() is None


async def _item_bounds(call: Call, window: WindowInfo, pattern: str) -> Rect:
    async def shown() -> Rect | None:
        read = await call("read_screen_ax", {"windowID": window.stable_id})
        for node in (read.data or {}).get("nodes", []):
            if re.fullmatch(pattern, node["name"] or "") and node["bounds"]:
                x, y, w, h = node["bounds"]
                return Rect(x, y, w, h) if w > 0 and h > 0 else None
        return None

    return await async_wait_for(shown, timeout=15, what=f"an item {pattern!r} on screen")


async def test_a_screenshot_shows_an_open_menu(call: Call, ctx: ToolContext, apps: Apps) -> None:
    editor = await apps.open("org.xfce.mousepad")
    text = (await call("read_screen_ax", {"windowID": editor.stable_id})).text
    before = await _shot(call, editor)
    opened = await call(
        "perform", {"elementID": find_id(text, "menu", "File"), "windowID": editor.stable_id}
    )
    assert not opened.is_error, opened.text
    item = await _item_bounds(call, editor, r"Save As.*")
    await _shows_popup(call, ctx, editor, before, item)


async def test_a_screenshot_shows_an_open_combo_list(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    demo = await apps.spawn(["gtk3-demo", "--run", "combobox"], match=lambda w: "Combo" in w.title)
    text = (await call("read_screen_ax", {"windowID": demo.stable_id})).text
    before = await _shot(call, demo)
    combo = find_id(text, "combobox", "Boston")  # "Where are we?": cities by letter
    opened = await call("perform", {"elementID": combo, "windowID": demo.stable_id})
    assert not opened.is_error, opened.text
    item = await _item_bounds(call, demo, r"K - O")
    await _shows_popup(call, ctx, demo, before, item)
