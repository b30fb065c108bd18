"""GTK 4 popovers read where they are drawn (issue 26 item 5: "GTK 4 popover items placed by
wrong extents").

GTK 4.8 reports a popover's extents from its anchor's origin, not from its own surface. The
probe (tests/fixtures/apps/popover_probe.py) has a menu button at its window's bottom whose menu
opens above it: the reported places put four of its six items below the window, and the read
dropped them (opening the menu even read as "No visible effect"). Each item the probe's menu
activates is written to its log, a channel the tools never use.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from deskpilot.sandbox import Sandbox
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.probe_apps import start_probe

pytestmark = pytest.mark.asyncio(loop_scope="session")

ITEMS = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot"]
GEOMETRY = re.compile(r"^\s+(Absolute upper-left [XY]|Width|Height):\s+(-?\d+)", re.M)


def mapped_popups(sandbox: Sandbox) -> dict[str, tuple[int, int, int, int]]:
    """The mapped override-redirect windows on the sandbox's screen (a popover's surface is
    one) and their rectangles, read with xwininfo, not the tools."""
    assert sandbox.info is not None
    display = ["-display", sandbox.info.display]
    tree = subprocess.run(
        ["xwininfo", *display, "-root", "-children"], capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for xid in re.findall(r"^\s+(0x[0-9a-f]+) ", tree, re.M):
        info = subprocess.run(["xwininfo", *display, "-id", xid], capture_output=True, text=True)
        if "IsViewable" in info.stdout and "Override Redirect State: yes" in info.stdout:
            num = {k: int(v) for k, v in GEOMETRY.findall(info.stdout)}
            x, y = num["Absolute upper-left X"], num["Absolute upper-left Y"]
            found[xid] = (x, y, num["Width"], num["Height"])
    return found


def pointer(sandbox: Sandbox) -> tuple[int, int]:
    """Where the pointer is, from xdotool (not the tools)."""
    assert sandbox.info is not None
    out = subprocess.run(
        ["xdotool", "getmouselocation"],
        capture_output=True,
        text=True,
        env={"DISPLAY": sandbox.info.display},
        check=True,
    ).stdout
    x, y = re.findall(r"[xy]:(-?\d+)", out)[:2]
    return int(x), int(y)


async def test_a_gtk4_menu_opening_above_its_button_reads_every_item(
    call: Call, apps: Apps, tmp_path: Path, sandbox: Sandbox
) -> None:
    probe = await start_probe(apps, tmp_path, "popover_probe.py", "Popover probe")
    read = await call("read_screen_ax", {"windowID": probe.window.stable_id})
    assert not read.is_error, read.text
    button = re.search(r"^button \(opens a menu\).* @(\S+)$", read.text, re.M)
    assert button, read.text
    before = mapped_popups(sandbox)
    opened = await call("perform", {"elementID": button.group(1)})
    assert not opened.is_error, opened.text
    surfaces = [r for xid, r in mapped_popups(sandbox).items() if xid not in before]
    assert len(surfaces) == 1, "the menu's popover is not on screen"
    px, py, pw, ph = surfaces[0]
    # the result says what opened, every item of it (it said "No visible effect")
    assert "opened" in opened.text and all(f'"{i}"' in opened.text for i in ITEMS), opened.text
    text = (await call("read_screen_ax", {"windowID": probe.window.stable_id})).text
    assert re.findall(r'^\s+menuitem "(\w+)"', text, re.M) == ITEMS, text
    # the pointer goes to an item where it is drawn: inside the popover's window, in its
    # lower half (it was "outside the window's visible area")
    hovered = await call(
        "perform", {"elementID": find_id(text, "menuitem", "Echo"), "action": "hover"}
    )
    assert not hovered.is_error, hovered.text
    x, y = pointer(sandbox)
    assert px <= x < px + pw and py + ph // 2 <= y < py + ph, (x, y, surfaces)
    # the lowest item, placed below the window by its reported extents, is chosen
    done = await call("perform", {"elementID": find_id(text, "menuitem", "Foxtrot")})
    assert not done.is_error, done.text
    await probe.wait_for("chose Foxtrot")
