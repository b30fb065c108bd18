"""The display dies mid-session: calls get a typed error; it comes back: calls work again.

The server runs on a sandbox of its own (the test kills it, so it cannot be the shared one),
named by DISPLAY only, so the accessibility bus is found on the root window each time. The
desktop "comes back" as a new sandbox on the same display number; the window the test starts
there must be the one the server then lists and reads.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import load_settings
from deskpilot.desktop.registry import open_resolved
from deskpilot.sandbox import Sandbox
from tests.desktop.helpers import find_id
from tests.desktop.helpers import mcp_text as text
from tests.e2e.test_mcp_stdio import stdio_session

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.sandbox]


def number_of(box: Sandbox) -> int:
    assert box.info is not None
    return int(box.info.display.lstrip(":"))


async def spawn_entry(box: Sandbox, title: str) -> subprocess.Popen[bytes]:
    """A zenity entry on ``box``, waited for through a desktop connection of the test's own."""
    proc = box.spawn(["zenity", "--entry", f"--title={title}", "--text=Still there?"])
    desk = await open_resolved(load_settings(env=box.app_env()))
    try:

        async def shown() -> bool:
            return any(w.title == title for w in await desk.list_windows())

        await async_wait_for(shown, timeout=60, what=f"the {title} window")
    finally:
        await desk.close()
    return proc


async def test_a_lost_display_is_a_typed_error_and_calls_work_once_it_is_back(
    tmp_path: Path,
) -> None:
    first = Sandbox(width=800, height=600)
    first.start()
    number = number_of(first)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "DISPLAY": f":{number}"}
    log = tmp_path / "server.log"
    second: Sandbox | None = None
    try:
        async with stdio_session(env, log) as session:
            before = await session.call_tool("list_windows", {})
            assert not before.is_error, text(before)

            await anyio.to_thread.run_sync(first.stop)
            lost = await session.call_tool("list_windows", {})
            still = await session.call_tool("read_screen_ax", {})
            assert lost.is_error and still.is_error
            for result in (lost, still):
                assert "The desktop went away" in text(result), text(result)
                assert "reconnects by itself" in text(result)
                assert "deskpilot bug" not in text(result)

            second = Sandbox(width=800, height=600, display=number)
            await anyio.to_thread.run_sync(second.start)
            await spawn_entry(second, "after-the-restart")
            back = await session.call_tool("list_windows", {})
            assert not back.is_error, text(back)
            assert 'Window: "after-the-restart"' in text(back)
            window_id = back.structured_content["windows"][0]["stable_window_id"]  # type: ignore[index]
            read = await session.call_tool("read_screen_ax", {"windowID": window_id})
            assert not read.is_error, text(read)
            assert find_id(text(read), "textbox")
    finally:
        first.stop()
        if second is not None:
            second.stop()
    said = log.read_text()
    assert "lost the desktop (the X display" in said
    assert "the desktop is back: reconnected" in said
