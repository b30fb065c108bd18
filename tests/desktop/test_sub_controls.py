"""Controls issue 26 found without IDs, each as a class: an icon view's items (GTK 3's
GtkIconView: selectable pictures named only by their text) and a tree view's column headers
(they sort their column on a click).

The GTK 3 probe (tests/fixtures/apps/controls_probe.py) writes what happened to it — the
selection, an activated item, the rows' order after a sort — to a file: a channel the tools
never use.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

PROBE = Path(__file__).parents[1] / "fixtures" / "apps" / "controls_probe.py"
FILES = ("notes.txt", "photo.png", "report.pdf", "song.ogg", "todo.md")


class Probe:
    def __init__(self, log: Path, window: WindowInfo) -> None:
        self.log, self.window = log, window

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    async def wait_for(self, line: str) -> None:
        async def seen() -> bool:
            return line in self.lines()

        await async_wait_for(seen, timeout=10, what=f"the probe to log {line!r}")


async def probe(apps: Apps, tmp_path: Path) -> Probe:
    log = tmp_path / "probe.log"
    window = await apps.spawn(
        ["/usr/bin/python3", str(PROBE), str(log)], match=lambda w: w.title == "Controls probe"
    )
    found = Probe(log, window)
    await found.wait_for("ready")
    return found


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
