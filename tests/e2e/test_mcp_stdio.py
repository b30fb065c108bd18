"""``deskpilot mcp --sandbox`` over stdio, started by the official client as MCP clients do.

Also home of :func:`stdio_session`, which the desktop MCP tests use against the test sandbox.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.client import Client
from mcp.client.session import ElicitationFnT
from mcp.client.stdio import stdio_client

from deskpilot.audit import AuditLog
from deskpilot.pages.tools import PAGE_TOOLS
from deskpilot.tools.task_tools import TASK_TOOLS
from tests.e2e.test_mcp_http import DESKPILOT, server_env

# each test runs `deskpilot mcp` on a sandbox desktop of its own
pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.sandbox]


@asynccontextmanager
async def stdio_session(
    env: Mapping[str, str],
    errlog: Path,
    *args: str,
    elicit: ElicitationFnT | None = None,
) -> AsyncIterator[ClientSession]:
    """``deskpilot mcp ARGS`` started by the official stdio client with ``env``; initialized.
    The server's stderr goes to ``errlog``."""
    server = StdioServerParameters(command=DESKPILOT, args=["mcp", *args], env=dict(env))
    with errlog.open("a") as err:
        async with (
            stdio_client(server, errlog=err) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as session,
        ):
            await session.initialize()
            yield session


def params(home: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=DESKPILOT, args=["mcp", "--sandbox", *args], env=server_env(home)
    )


async def test_stdio_server_on_its_own_sandbox(home: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "server.log"
    with errlog.open("w") as err, anyio.fail_after(90):
        async with (
            stdio_client(params(home), errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert init.protocol_version == "2025-11-25"
            assert init.server_info.name == "deskpilot"
            assert init.capabilities.tools is not None
            assert init.instructions and "read_screen_ax" in init.instructions
            tools = (await session.list_tools()).tools
            assert len(tools) == 9 + len(PAGE_TOOLS) + len(
                TASK_TOOLS
            )  # the nine, the page tools, begin/end_task
            windows = await session.call_tool("list_windows", {})
            bad = await session.call_tool("wait", {})
    log = errlog.read_text()
    assert not windows.is_error
    first = windows.content[0]
    assert isinstance(first, types.TextContent)
    assert "Open Windows (0 total)" in first.text  # a fresh desktop of its own
    assert bad.is_error
    assert "sandbox desktop :" in log and "confirm policy: consequential" in log, log
    with AuditLog(home / "data" / "audit.sqlite3") as audit:
        [run] = audit.list_runs()
        kinds = [e.kind for e in audit.run_events(run.id, images=False)]
    assert run.goal == "MCP client connection (mcp 0.1.0)"
    assert kinds == ["run.started", *["tool.call", "tool.result"] * 2, "run.finished"]
    assert run.outcome == "disconnected"


async def test_auto_client_speaks_the_stateless_era(home: Path) -> None:
    """The default client probes 2026-07-28 ``server/discover`` first and stays in that era;
    its calls work without ``initialize``."""
    with anyio.fail_after(90):
        async with Client(params(home)) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("wait", {"seconds": 0.01})
    assert not result.is_error
    assert any(getattr(c, "text", "") == "Waited 0.01 s." for c in result.content)
