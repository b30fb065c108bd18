"""Controls issue 26 found without IDs, each as a class: an icon view's items (GTK 3's
GtkIconView: selectable pictures named only by their text) and a tree view's column headers
(they sort their column on a click).

The GTK 3 probe (tests/fixtures/apps/controls_probe.py) writes what happened to it — the
selection, an activated item, the rows' order after a sort — to a file: a channel the tools
never use.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.probe_apps import SYSTEM_PYTHON, Probe, start_probe

pytestmark = pytest.mark.asyncio(loop_scope="session")

WALK = Path(__file__).parents[2] / "scripts" / "atspi_exposed.py"
FILES = ("notes.txt", "photo.png", "report.pdf", "song.ogg", "todo.md")


async def probe(apps: Apps, tmp_path: Path) -> Probe:
    return await start_probe(apps, tmp_path, "controls_probe.py", "Controls probe")


async def read(call: Call, window: WindowInfo) -> str:
    done = await call("read_screen_ax", {"windowID": window.stable_id})
    assert not done.is_error, done.text
    return done.text


async def test_an_icon_views_items_read_by_name_and_a_click_selects_one(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    p = await probe(apps, tmp_path)
    text = await read(call, p.window)
    # each item once, by its label, with an ID, in a list (they read as nameless images)
    items = re.findall(r'^\s+listitem "([^"]+)" @\S+$', text, re.M)
    assert items == list(FILES), text
    assert re.search(r"^list @\S+$", text, re.M), text
    done = await call("perform", {"elementID": find_id(text, "listitem", "song.ogg")})
    assert not done.is_error and "selected" in done.text, done.text
    await p.wait_for("selected song.ogg")
    # a click selects; it does not open (the item's own action is the double-click's)
    assert not any(line.startswith("activated") for line in p.lines()), p.lines()
    again = await read(call, p.window)
    assert re.search(r'listitem "song.ogg" \[[^]]*selected[^]]*\] @', again), again
    opened = await call(
        "perform", {"elementID": find_id(again, "listitem", "report.pdf"), "action": "double_click"}
    )
    assert not opened.is_error, opened.text
    await p.wait_for("activated report.pdf")


async def test_a_tree_views_column_headers_have_ids_and_sort_it(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    p = await probe(apps, tmp_path)
    text = await read(call, p.window)
    assert "columns: Name | Price" not in text, text  # the headers are lines of their own
    name = find_id(text, "colheader", "Name")
    done = await call("perform", {"elementID": name})
    assert not done.is_error, done.text
    await p.wait_for("order Apple,Banana,Cherry")
    price = find_id(await read(call, p.window), "colheader", "Price")
    done = await call("perform", {"elementID": price})
    assert not done.is_error, done.text
    await p.wait_for("order Banana,Cherry,Apple")
    rows = re.findall(r"^\s+row \d+: (\w+) \|", await read(call, p.window), re.M)
    assert rows == ["Banana", "Cherry", "Apple"], rows  # the read agrees with the app


def nodes_of(apps: Apps, window: WindowInfo) -> list[dict[str, Any]]:
    """The window's nodes as Debian's pyatspi walks them (scripts/atspi_exposed.py)."""
    done = subprocess.run(
        [SYSTEM_PYTHON, str(WALK), "--pid", str(window.pid), "--title", window.title],
        capture_output=True,
        text=True,
        env=apps.sandbox.app_env(),
        timeout=120,
        check=True,
    )
    nodes: list[dict[str, Any]] = json.loads(done.stdout)["nodes"]
    return nodes


async def test_a_gtk4_menu_button_reads_once_and_opens_its_menu(call: Call, apps: Apps) -> None:
    factory = await apps.spawn(
        ["gtk4-widget-factory"], match=lambda w: w.title == "GTK Widget Factory"
    )
    text = await read(call, factory)
    # the header bar's menu button: a shell around its toggle, one line (it was two); it has
    # no name, tooltip nor icon name on the bus (GTK 4.8), but it controls its menu (the
    # CONTROLLER_FOR relation), which the line says as a derived role, not as a name
    bar = text[text.index('tab "Page _3"') : text.index('button "Minimize"')]
    buttons = re.findall(r"^(\s*)button \(opens a menu\) @(\S+)$", bar, re.M)
    assert len(buttons) == 1, bar
    assert not re.search(r"^\s*button @", bar, re.M), bar  # it was a bare nameless button

    def items() -> int:  # GTK 4 builds a popover's items when it first opens
        return sum(n["role"].endswith("menu item") for n in nodes_of(apps, factory))

    before = items()
    done = await call("perform", {"elementID": buttons[0][1]})
    assert not done.is_error, done.text

    async def opened() -> bool:
        return items() > before

    await async_wait_for(opened, timeout=10, what="the menu button's menu to open")
    # open, it is still one button (named by itself, not by its menu's items), its menu under it
    text = await read(call, factory)
    bar = text[text.index('tab "Page _3"') : text.index('button "Minimize"')]
    assert len(re.findall(r"^\s*button\b", bar, re.M)) == 1, bar
    assert re.search(r"^button \(opens a menu\) \[[^]]*checked[^]]*\] @\S+$", bar, re.M), bar
    assert re.search(r'^\s+menuitem "[^"]+".* @\S+$', bar, re.M), bar


async def test_a_real_apps_icon_view_opens_a_folder_by_its_item(call: Call, apps: Apps) -> None:
    demo = await apps.spawn(
        ["gtk3-demo", "--run=iconview"], match=lambda w: w.title == "Icon View Basics"
    )
    text = await read(call, demo)
    assert re.search(r'^\s+listitem "etc" @\S+$', text, re.M), text  # the demo lists "/"

    def icons() -> set[str]:  # the view's items as pyatspi reads their text
        return {n["text"] for n in nodes_of(apps, demo) if n["role"] == "icon" and n["text"]}

    assert "passwd" not in icons()
    done = await call(
        "perform", {"elementID": find_id(text, "listitem", "etc"), "action": "double_click"}
    )
    assert not done.is_error, done.text

    async def in_etc() -> bool:
        return "passwd" in icons()

    await async_wait_for(in_etc, timeout=10, what="the view to show /etc")
    # the new folder's items (GTK 3 lays them out VISIBLE, not SHOWING) read by name
    now = await read(call, demo)
    items = re.findall(r'^\s+listitem "([^"]+)" @\S+$', now, re.M)
    assert len(items) >= 3 and set(items) <= icons() and "boot" not in items, now
    # its toolbar's "Up" was made sensitive through its tool item (no event of its own)
    assert re.search(r'^button "Up" @\S+$', now, re.M), now
