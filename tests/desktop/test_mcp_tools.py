"""Every tool over MCP (stdio, official client) against real apps on the test sandbox."""

from __future__ import annotations

import base64
import json
import re
import struct
from pathlib import Path

import mcp.types as types
import pytest
from mcp import ClientSession

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.sandbox import Sandbox
from deskpilot.tools.builtin import all_tools
from deskpilot.tools.outputs import OUTPUTS
from deskpilot.tools.task_tools import TASK_TOOLS
from deskpilot.tools.toolset import ToolSet
from tests.desktop.conftest import Apps
from tests.desktop.helpers import find_id, window_id_from
from tests.desktop.helpers import mcp_text as text
from tests.e2e.test_mcp_stdio import stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def ok(session: ClientSession, tool: str, args: dict[str, object]) -> str:
    result = await session.call_tool(tool, args)
    assert not result.is_error, f"{tool}: {text(result)}"
    return text(result)


def display(read: str) -> str:
    m = re.search(r'^\s*textbox = "([^"]*)".*@', read, re.M)
    assert m, read
    return m.group(1)


async def test_calculator_and_every_tool_over_stdio(
    desktop_settings: Settings, desktop: DesktopFacade, apps: Apps, tmp_path: Path
) -> None:
    async with stdio_session(desktop_settings.environ, tmp_path / "server.log") as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        # the MCP server adds the task tools (begin_task/end_task: the client's user's request)
        assert {n: t.input_schema for n, t in listed.items()} == {
            s.name: s.input_schema for s in [*all_tools().list(), *ToolSet(TASK_TOOLS).list()]
        }
        # the official client validates every structured result below against these
        assert {n for n, t in listed.items() if t.output_schema} == set(OUTPUTS) & set(listed)

        opened = await ok(session, "open_app", {"bundleId": "Calculator"})
        window_id = window_id_from(opened)
        await apps.adopt(next(w for w in await desktop.list_windows() if w.stable_id == window_id))
        assert f"Stable Window ID: {window_id}" in await ok(session, "list_windows", {})

        # 12 × 7 by element clicks in one perform_sequence, checked by a re-read
        ids = await ok(session, "read_screen_ax", {})
        steps = [{"elementID": find_id(ids, "button", label)} for label in "12×7="]
        assert "All 5 steps ran" in await ok(session, "perform_sequence", {"steps": steps})
        assert display(await ok(session, "read_screen_ax", {})) == "84"

        # perform: keys and typing go to the tracked target (no windowID)
        await ok(session, "perform", {"action": "shortcut", "shortcut": "escape"})
        await ok(session, "perform", {"action": "type", "text": "6*7"})
        await ok(session, "perform", {"action": "shortcut", "shortcut": "enter"})
        assert display(await ok(session, "read_screen_ax", {"windowID": window_id})) == "42"

        assert "Scrolled up" in await ok(
            session, "scroll", {"direction": "up", "milliseconds": 200}
        )
        await ok(session, "wait", {"seconds": 0.05})

        shot = await session.call_tool("computer_use_screenshot", {})
        assert not shot.is_error, text(shot)
        assert f"windowID: {window_id}" in text(shot)
        image = shot.content[1]
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        png = base64.b64decode(image.data)
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        width, height = struct.unpack(">II", png[16:24])
        assert f"dimensions: {width}x{height}" in text(shot)
        assert shot.structured_content is not None
        covers = shot.structured_content.pop("covers")
        assert shot.structured_content == {"window": window_id, "width": width, "height": height}
        assert covers[2:] == [width, height]


async def test_open_urls_over_stdio(
    desktop_settings: Settings, desktop: DesktopFacade, apps: Apps, tmp_path: Path
) -> None:
    page = "data:text/html,<title>deskpilot mcp page</title><h1>Hello from MCP</h1>"
    async with stdio_session(desktop_settings.environ, tmp_path / "server.log") as session:
        opened = await ok(session, "open_urls", {"urls": [page]})
        window_id = window_id_from(opened)
        await apps.adopt(next(w for w in await desktop.list_windows() if w.stable_id == window_id))
        assert "Opened 1 URL in " in opened and "of the agent browser" in opened
        read = await ok(session, "read_screen_ax", {})
        assert "Hello from MCP" in read


async def test_blocked_app_gives_error_results(
    desktop_settings: Settings,
    desktop: DesktopFacade,
    sandbox: Sandbox,
    apps: Apps,
    tmp_path: Path,
) -> None:
    # started directly (open_app refuses it); its accessibility tree is never needed
    apps.procs.append(sandbox.spawn(["keepassxc"], log="keepassxc.log"))

    async def vault_window() -> WindowInfo | None:
        windows = await desktop.list_windows()
        return next((w for w in windows if w.app.app_id == "org.keepassxc.KeePassXC"), None)

    vault = await apps.adopt(await async_wait_for(vault_window, timeout=60, what="KeePassXC"))
    async with stdio_session(desktop_settings.environ, tmp_path / "server.log") as session:
        refused = await session.call_tool("open_app", {"bundleId": "KeePassXC"})
        assert refused.is_error
        assert "is on the blocked apps list" in text(refused)
        listing = await ok(session, "list_windows", {})
        assert "[title hidden] 🚫 (BLOCKED" in listing
        assert f'Window: "{vault.title}"' not in listing
        for tool, args in [
            ("read_screen_ax", {"windowID": vault.stable_id}),
            ("computer_use_screenshot", {"windowID": vault.stable_id}),
            ("perform", {"windowID": vault.stable_id, "action": "type", "text": "hunter2"}),
        ]:
            result = await session.call_tool(tool, args)
            assert result.is_error, tool
            assert "is on the blocked apps list" in text(result), text(result)
            assert len(result.content) == 1  # no screenshot, no tree


async def test_invalid_arguments_give_clear_error_results(
    desktop_settings: Settings, tmp_path: Path
) -> None:
    cases = {
        (
            "open_app",
            "{}",
        ): "Invalid arguments for open_app: bundleId: required argument is missing",
        ("perform_sequence", '{"steps": []}'): "Invalid arguments for perform_sequence: steps: ",
        ("scroll", '{"direction": "sideways"}'): "Invalid arguments for scroll: direction: ",
        ("wait", '{"seconds": 4000}'): "Invalid arguments for wait: seconds: ",
        (
            "list_windows",
            '{"all": true}',
        ): "Invalid arguments for list_windows: all: unknown argument",
        ("open_urls", '{"urls": ["ftp://x"]}'): "Invalid arguments for open_urls: urls.0: ",
    }
    async with stdio_session(desktop_settings.environ, tmp_path / "server.log") as session:
        for (tool, args), expected in cases.items():
            result = await session.call_tool(tool, json.loads(args))
            assert result.is_error, tool
            assert text(result).startswith(expected), text(result)
