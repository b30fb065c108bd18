"""Menus: an opened menu's items appear in the next read, with IDs that act."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, id_of_line

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


async def test_a_gtk_context_menu_is_reported_read_and_acts(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    """A text view's context menu (an override-redirect popup, outside the window's tree and
    every window list) is named in the right_click's result, read with IDs, and its "Select
    All" selects the text: deleted and saved, the file on disk is empty."""
    doc = tmp_path / "menu.txt"
    doc.write_text("hello context menu\n")
    editor = await apps.spawn(["mousepad", str(doc)], match=lambda w: "menu.txt" in w.title)
    text = (await call("read_screen_ax", {"windowID": editor.stable_id})).text
    area = find_id(text, "textbox")
    done = await call("perform", {"action": "right_click", "elementID": area})
    assert not done.is_error, done.text
    assert "A menu" in done.text and '"Select All"' in done.text, done.text
    read = (await call("read_screen_ax")).text
    select_all = id_of_line(read, '"Select All')
    assert f"@{select_all}" in done.text  # the result's IDs are the read's
    chosen = await call("perform", {"elementID": select_all})
    assert not chosen.is_error, chosen.text
    for keys in ("Delete", "ctrl+s"):
        pressed = await call("perform", {"action": "shortcut", "shortcut": keys})
        assert not pressed.is_error, pressed.text

    async def saved_empty() -> bool:
        return doc.read_text() == ""

    await async_wait_for(saved_empty, timeout=10, what="the emptied file to be saved")


#: Reads the sandbox's clipboard with GTK (a channel the tools do not use).
CLIPBOARD = (
    "import gi; gi.require_version('Gtk', '3.0'); gi.require_version('Gdk', '3.0'); "
    "from gi.repository import Gdk, Gtk; "
    "print(Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD).wait_for_text() or '', end='')"
)


async def test_a_libreoffice_context_menu_is_reported_and_its_copy_copies(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    """Writer's context menu (a popup window of its own, placed on the screen while its frame's
    extents leave out the title bar) is named in the right_click's result; its Copy, clicked
    by the result's ID, puts the selected text on the clipboard."""
    opened = await call("open_app", {"bundleId": "LibreOffice Writer"})
    assert not opened.is_error, opened.text
    await apps.adopt(
        next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    )
    para = id_of_line((await call("read_screen_ax")).text, "para = ")
    words = "Menus that pop up"  # capitalised: Writer would capitalise it
    typed = await call("perform", {"action": "type", "elementID": para, "text": words})
    assert not typed.is_error, typed.text
    selected = await call("perform", {"action": "shortcut", "shortcut": "ctrl+a"})
    assert not selected.is_error, selected.text
    done = await call("perform", {"action": "right_click", "elementID": para})
    assert not done.is_error, done.text
    copy = re.search(r'"Copy" @(\S+?)(?:, |\. )', done.text)
    assert "A menu" in done.text and copy, done.text
    copied = await call("perform", {"elementID": copy.group(1)})
    assert not copied.is_error, copied.text

    async def on_clipboard() -> bool:
        env = apps.sandbox.app_env()
        got = subprocess.run(
            ["/usr/bin/python3", "-c", CLIPBOARD],
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return got.stdout.strip() == words

    await async_wait_for(on_clipboard, timeout=15, what="the copied words on the clipboard")
