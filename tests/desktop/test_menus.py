"""Menus: an opened menu's items appear in the next read, with IDs that act."""

from __future__ import annotations

import re

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _open_menu_and_find(call: Call, menu: str, item: str, *, last: bool = False) -> str:
    """Click the first (or last) menu called ``menu``; return the read that shows ``item``."""
    first = (await call("read_screen_ax")).text
    assert f'"{item}' not in first  # closed menus are not shown
    ids = re.findall(rf'^\s*menu "{re.escape(menu)}" @(\S+)$', first, re.M)
    assert ids, first
    clicked = await call("perform", {"action": "click", "elementID": ids[-1 if last else 0]})
    assert not clicked.is_error, clicked.text

    async def opened() -> str | None:
        text = (await call("read_screen_ax")).text
        return text if f'"{item}' in text else None

    return await async_wait_for(opened, timeout=10, what=f"the {menu} menu's {item!r} item")


@pytest.mark.parametrize("last", [False, True], ids=["first-menu-bar", "second-menu-bar"])
async def test_a_libreoffice_menu_opens_into_the_read(
    last: bool, call: Call, ctx: ToolContext, apps: Apps
) -> None:
    opened = await call("open_app", {"bundleId": "LibreOffice Writer"})
    assert not opened.is_error, opened.text
    await apps.adopt(
        next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    )
    # Writer shows two menu bars, read live (outside its AT-SPI cache) with their menus closed:
    # their items are listed unread until a menu opens
    text = await _open_menu_and_find(call, "Format", "Columns", last=last)
    line = next(ln for ln in text.splitlines() if '"Columns' in ln)
    assert " @" in line, line  # it has an ID to act on


async def test_a_gtk_menu_opens_into_the_read(call: Call, ctx: ToolContext, apps: Apps) -> None:
    editor = await apps.open("org.xfce.mousepad")
    await call("read_screen_ax", {"windowID": editor.stable_id})
    text = await _open_menu_and_find(call, "File", "Save As")
    line = next(ln for ln in text.splitlines() if '"Save As' in ln)
    assert " @" in line, line
