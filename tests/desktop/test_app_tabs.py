"""GTK 3 tabs' close buttons, which GTK 3 keeps off the accessibility bus, read and clicked by ID
(issue 26 item 5: "tab close buttons without IDs"; desktop/skills/tab_closers.py).

Mousepad (GTK 3) opens three files as three tabs, each with a close button right beside its
name; Xfce Terminal opens three tabs whose close buttons sit at each tab's far end. The read
lists each button under its tab, saying it is drawn and not on the bus; acting on the middle
tab's closes it and no neighbour, and a click on a tab's own line only selects it. What is open
is checked with Debian's pyatspi (scripts/atspi_exposed.py), a channel the tools do not use.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.sandbox import Sandbox
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.test_sub_controls import nodes_of

pytestmark = pytest.mark.asyncio(loop_scope="session")

FILES = ("a.txt", "b.txt", "c.txt")
TERMINAL_TABS = ("one", "two", "three")
DRAWN = r"button \(drawn beside the tab's name: its close button; not on the accessibility bus\)"


def terminal() -> list[str]:
    """Xfce Terminal with a tab per title, which the shell's prompt does not rename."""
    argv = ["xfce4-terminal", "--disable-server"]
    for i, title in enumerate(TERMINAL_TABS):
        argv += [*(["--tab"] if i else []), "--dynamic-title-mode=none", "-T", title]
    return argv


#: per app: its command (``{dir}``: a folder holding FILES) and the tabs it opens
APPS = {
    "mousepad": (["mousepad", *(f"{{dir}}/{f}" for f in FILES)], FILES),
    "xfce4-terminal": (terminal(), TERMINAL_TABS),
}


def tabs_open(apps: Apps, window: WindowInfo) -> list[str]:
    return [n["name"] for n in nodes_of(apps, window) if n["role"] == "page tab"]


def closer_of(text: str, tab: str) -> str:
    """The ID of the drawn close button listed under ``tab``'s line."""
    m = re.search(rf'^(\s*)tab "{re.escape(tab)}".* @\S+\n\1  {DRAWN} @(\S+)$', text, re.M)
    assert m, text
    return m.group(2)


@pytest.mark.parametrize("program", list(APPS))
async def test_a_gtk3_tabs_drawn_close_button_closes_that_tab_only(
    program: str,
    call: Call,
    apps: Apps,
    sandbox: Sandbox,
    tmp_path: Path,
    desktop: DesktopFacade,
) -> None:
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    argv, tabs = APPS[program]
    for name in FILES:
        (tmp_path / name).write_text(f"the text of {name}\n")
    window = await apps.spawn(
        [a.replace("{dir}", str(tmp_path)) for a in argv],
        match=lambda w: w.title.endswith("Mousepad") or w.title in tabs,
    )
    assert sandbox.info is not None

    async def all_open() -> bool:
        return tabs_open(apps, window) == list(tabs)

    await async_wait_for(all_open, timeout=10, what="three tabs")
    read = await call("read_screen_ax", {"windowID": window.stable_id})
    assert not read.is_error, read.text
    closers = {name: closer_of(read.text, name) for name in tabs}
    assert len(set(closers.values())) == 3, read.text
    # the buttons are found in the window's pixels, which a hover may change with no event:
    # its reads are never the last read handed out again (skills/read_memo.py)
    assert not (await desktop.snapshot(window)).unchanged
    assert not (await desktop.snapshot(window)).unchanged
    # the tab's own line selects it, it does not close it
    done = await call("perform", {"elementID": find_id(read.text, "tab", tabs[0])})
    assert not done.is_error, done.text
    assert tabs_open(apps, window) == list(tabs)
    done = await call("perform", {"elementID": closers[tabs[1]]})
    assert not done.is_error and "the tab is gone" in done.text, done.text

    async def closed() -> bool:
        return tabs_open(apps, window) == [tabs[0], tabs[2]]

    await async_wait_for(closed, timeout=10, what="the middle tab to close, and only it")
    again = await call("read_screen_ax", {"windowID": window.stable_id})
    assert f'tab "{tabs[1]}"' not in again.text and closer_of(again.text, tabs[2]), again.text
