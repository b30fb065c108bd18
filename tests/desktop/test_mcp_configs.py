"""``deskpilot mcp --print-config CLIENT``: configs for this machine, and they work.

The stdio configs carry the desktop's environment as found from here; the printed Claude
Desktop config is then started exactly as written (command, args, env) by the official client
and must reach the test's sandbox. For HTTP, Claude Desktop's config goes through the
``mcp-remote`` bridge (pinned in tests/ts); that bridge, started as printed (with the pinned
Node instead of ``npx -y``), must reach a running ``deskpilot mcp --http`` with the kept token.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from deskpilot.config import Settings
from deskpilot.tools.builtin import all_tools
from tests.desktop.conftest import Apps
from tests.desktop.helpers import mcp_text as text
from tests.desktop.test_mcp_typescript import TS, node
from tests.e2e.test_mcp_http import DESKPILOT, http_server, server_env

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def print_config(env: dict[str, str], *args: str) -> str:
    with anyio.fail_after(60):
        done = await anyio.run_process([DESKPILOT, "mcp", "--print-config", *args], env=env)
    return done.stdout.decode()


async def test_stdio_configs_name_this_deskpilot_and_the_desktop(home: Path) -> None:
    env = {
        **server_env(home),
        "DISPLAY": ":93",
        "XAUTHORITY": str(home / "cookie"),
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
    }
    want = {k: env[k] for k in ("DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS")}
    entry = {"command": DESKPILOT, "args": ["mcp"], "env": want}
    for client in ("claude-desktop", "cursor"):
        assert json.loads(await print_config(env, client)) == {"mcpServers": {"deskpilot": entry}}
    vscode = json.loads(await print_config(env, "vscode"))
    assert vscode == {"servers": {"deskpilot": {"type": "stdio", **entry}}}
    words = shlex.split(await print_config(env, "claude-code"))
    assert words[:4] == ["claude", "mcp", "add", "deskpilot"]
    assert words[words.index("--") :] == ["--", DESKPILOT, "mcp"]
    assert {words[i + 1] for i, w in enumerate(words) if w == "--env"} == {
        f"{k}={v}" for k, v in want.items()
    }
    sandboxed = json.loads(await print_config(env, "cursor", "--sandbox", "--confirm", "all"))
    assert sandboxed["mcpServers"]["deskpilot"] == {
        "command": DESKPILOT,
        "args": ["mcp", "--sandbox", "--confirm", "all"],
    }


async def test_the_printed_claude_desktop_config_reaches_the_desktop(
    desktop_settings: Settings, apps: Apps, tmp_path: Path
) -> None:
    await apps.spawn(
        ["zenity", "--entry", "--title=configured-client", "--text=Hi"],
        match=lambda w: w.title == "configured-client",
    )
    env = dict(desktop_settings.environ)
    entry = json.loads(await print_config(env, "claude-desktop"))["mcpServers"]["deskpilot"]
    assert set(entry["env"]) >= {"DISPLAY", "DBUS_SESSION_BUS_ADDRESS"}
    # a client's minimal environment: HOME (a fresh one), PATH, and what the config sets
    child = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], **entry["env"]}
    server = StdioServerParameters(command=entry["command"], args=entry["args"], env=child)
    with (tmp_path / "server.log").open("w") as err, anyio.fail_after(90):
        async with (
            stdio_client(server, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listing = await session.call_tool("list_windows", {})
    assert not listing.is_error, text(listing)
    assert 'Window: "configured-client"' in text(listing)


def bridge(entry: dict[str, Any]) -> StdioServerParameters:
    """The printed mcp-remote entry, run with the pinned Node and mcp-remote (not npx -y)."""
    assert entry["command"] == "npx" and entry["args"][:2] == ["-y", "mcp-remote"]
    script = TS / "node_modules" / "mcp-remote" / "dist" / "proxy.js"
    return StdioServerParameters(
        command=node(),
        args=[str(script), *entry["args"][2:]],
        env={"PATH": os.environ["PATH"], **entry["env"]},
    )


async def test_claude_desktop_reaches_the_http_server_through_mcp_remote(
    home: Path, tmp_path: Path
) -> None:
    env = server_env(home)
    async with http_server(env=env) as server:
        config = await print_config(env, "claude-desktop", "--http", f"127.0.0.1:{server.port}")
        entry = json.loads(config)["mcpServers"]["deskpilot"]
        assert entry["args"][2] == server.url
        assert entry["env"] == {"DESKPILOT_AUTH": f"Bearer {server.token}"}
        params = bridge(entry)
        params.env = {**(params.env or {}), "HOME": str(tmp_path)}  # mcp-remote's own state
        with (tmp_path / "bridge.log").open("w") as err, anyio.fail_after(90):
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = (await session.list_tools()).tools
                waited = await session.call_tool("wait", {"seconds": 0.01})
    assert len(tools) == len(all_tools().list()) + 2  # and begin_task, end_task
    assert not waited.is_error and text(waited) == "Waited 0.01 s."
