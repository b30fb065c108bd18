"""``deskpilot mcp`` started as MCP clients start it (a minimal environment) finds the desktop,
or stays up and says what to set.

The official stdio client always passes its allow-listed variables (HOME, LOGNAME, PATH,
SHELL, TERM, USER) plus what a test gives it; here that is HOME (a fresh one), PATH and USER,
and at most DISPLAY. Effects are checked through the test's own sandbox handle (the window a
test spawned there must be the one the server lists and reads).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deskpilot.config import NO_DISPLAY_HINT
from deskpilot.discovery import discover
from deskpilot.pages.tools import PAGE_TOOLS
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.kept import save_info
from deskpilot.tools.task_tools import TASK_TOOLS
from tests.desktop.conftest import Apps
from tests.desktop.helpers import find_id
from tests.desktop.helpers import mcp_text as text
from tests.e2e.test_mcp_stdio import stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="session")


def minimal_env(home: Path, **extra: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home), "PATH": os.environ["PATH"], "USER": "deskpilot-test", **extra}


async def spawn_entry(apps: Apps, title: str) -> str:
    window = await apps.spawn(
        ["zenity", "--entry", f"--title={title}", "--text=Found me?"],
        match=lambda w: w.title == title,
    )
    return window.stable_id


async def test_a_minimal_environment_finds_the_kept_sandbox(
    sandbox: Sandbox, apps: Apps, tmp_path: Path
) -> None:
    """`deskpilot sandbox up` keeps a sandbox in the user's state dir: a server started with
    only HOME/PATH/USER finds its display and buses there."""
    assert sandbox.info is not None
    home = tmp_path / "home"
    save_info(home / ".local" / "state" / "deskpilot", "default", sandbox.info)
    window_id = await spawn_entry(apps, "found-by-discovery")
    log = tmp_path / "server.log"
    async with stdio_session(minimal_env(home), log) as session:
        listing = await session.call_tool("list_windows", {})
        read = await session.call_tool("read_screen_ax", {"windowID": window_id})
    assert not listing.is_error, text(listing)
    assert 'Window: "found-by-discovery"' in text(listing)
    assert not read.is_error, text(read)
    assert find_id(text(read), "textbox")
    said = log.read_text()
    assert f"working on display {sandbox.info.display} (found through the sandbox kept" in said


async def test_a_display_without_a_bus_uses_the_root_windows_accessibility_bus(
    sandbox: Sandbox, apps: Apps, tmp_path: Path
) -> None:
    """DISPLAY but no DBUS_SESSION_BUS_ADDRESS: the root window advertises AT_SPI_BUS."""
    assert sandbox.info is not None
    window_id = await spawn_entry(apps, "bus-from-the-root-window")
    env = minimal_env(tmp_path / "home", DISPLAY=sandbox.info.display)
    async with stdio_session(env, tmp_path / "server.log") as session:
        read = await session.call_tool("read_screen_ax", {"windowID": window_id})
    assert not read.is_error, text(read)
    assert "bus-from-the-root-window" in text(read)
    assert find_id(text(read), "textbox")


DESKTOP_CALLS = [
    ("list_windows", {}),
    ("open_app", {"bundleId": "Calculator"}),
    ("read_screen_ax", {}),
    ("perform", {"action": "shortcut", "shortcut": "ctrl+a"}),
    ("computer_use_screenshot", {}),
    ("open_urls", {"urls": ["https://example.org/"]}),
]


async def test_with_nothing_to_find_it_stays_up_and_every_call_says_what_to_set(
    tmp_path: Path,
) -> None:
    env = minimal_env(tmp_path / "home")
    found = discover(env, state_dir=tmp_path / "home" / ".local" / "state" / "deskpilot")
    if found.display is not None:
        pytest.fail(
            f"this machine has a desktop deskpilot would use ({found.display} from "
            f"{found.source}): the test needs a machine with none besides sandboxes"
        )
    log = tmp_path / "server.log"
    async with stdio_session(env, log) as session:
        tools = (await session.list_tools()).tools
        results = {name: await session.call_tool(name, args) for name, args in DESKTOP_CALLS}
        waited = await session.call_tool("wait", {"seconds": 0.01})  # needs no desktop
        again = await session.call_tool("list_windows", {})  # still up, still saying so
    assert len(tools) == 9 + len(PAGE_TOOLS) + len(
        TASK_TOOLS
    )  # the nine, the page tools, begin/end_task
    for name, result in [*results.items(), ("list_windows", again)]:
        assert result.is_error, f"{name}: {text(result)}"
        assert text(result).startswith(f"{name} failed: no X display: DISPLAY is not set")
        assert NO_DISPLAY_HINT in text(result), text(result)
        assert "deskpilot mcp --sandbox" in text(result)
    assert not waited.is_error
    assert "Traceback" not in log.read_text()
