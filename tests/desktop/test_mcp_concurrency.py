"""Four MCP clients at once on one HTTP server: 50 calls each, no cross-talk.

Each client targets its own zenity entry window once (by windowID), then works on its tracked
target without naming it: fills its entry, reads it back, lists windows, takes screenshots.
Every answer must be about its own window and show its own last value; an element ID shown to
another client must be unknown to it.
"""

from __future__ import annotations

import re
import statistics
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession

from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Apps
from tests.desktop.helpers import find_id, value_of
from tests.desktop.helpers import mcp_text as text
from tests.e2e.test_mcp_http import HttpServer, http_server, http_session

pytestmark = pytest.mark.asyncio(loop_scope="session")

CLIENTS = 4
CALLS = 50  # per client: 2 to set up + 12 rounds of 4


class Client:
    def __init__(self, index: int, window: WindowInfo, session: ClientSession) -> None:
        self.index = index
        self.title = f"mcp-client-{index}"
        self.window = window
        self.session = session
        self.latencies: list[float] = []
        self.entry = ""

    async def call(self, tool: str, args: dict[str, Any]) -> types.CallToolResult:
        started = time.perf_counter()
        result = await self.session.call_tool(tool, args)
        self.latencies.append(time.perf_counter() - started)
        return result

    async def ok(self, tool: str, args: dict[str, Any]) -> str:
        result = await self.call(tool, args)
        assert not result.is_error, f"{self.title} {tool}: {text(result)}"
        return text(result)

    def assert_own(self, read: str) -> None:
        assert f" · '{self.title}' · " in read, read
        others = set(re.findall(r"mcp-client-\d", read)) - {self.title}
        assert not others, f"{self.title} saw {others}:\n{read}"

    async def run(self, others: list[str]) -> None:
        listing = await self.ok("list_windows", {})
        assert f"Stable Window ID: {self.window.stable_id}" in listing
        first = await self.ok("read_screen_ax", {"windowID": self.window.stable_id})
        self.assert_own(first)
        self.entry = find_id(first, "textbox")
        for round_ in range(12):
            value = f"client {self.index} round {round_}"
            await self.ok("perform", {"action": "fill", "elementID": self.entry, "text": value})
            read = await self.ok("read_screen_ax", {})
            self.assert_own(read)
            assert value_of(read, self.entry) == value
            listing = await self.ok("list_windows", {})
            assert all(f'Window: "{title}"' in listing for title in [self.title, *others])
            shot = await self.call("computer_use_screenshot", {})
            assert not shot.is_error and f"title: {self.title}" in text(shot), text(shot)
            assert isinstance(shot.content[1], types.ImageContent)


async def spawn_windows(apps: Apps) -> list[WindowInfo]:
    windows = []
    for i in range(CLIENTS):
        title = f"mcp-client-{i}"

        def titled(w: WindowInfo, title: str = title) -> bool:
            return w.title == title

        argv = ["zenity", "--entry", f"--title={title}", f"--text=Client {i}"]
        windows.append(await apps.spawn(argv, match=titled))
    return windows


async def test_four_clients_fifty_calls_each_without_cross_talk(
    desktop_settings: Settings, apps: Apps, tmp_path: Path
) -> None:
    windows = await spawn_windows(apps)
    titles = [f"mcp-client-{i}" for i in range(CLIENTS)]
    async with http_server(env=desktop_settings.environ) as server:
        clients, wall = await run_clients(server, windows, titles)
    calls = [c.latencies for c in clients]
    assert [len(c) for c in calls] == [CALLS] * CLIENTS
    latencies = sorted(t for c in calls for t in c)
    print(  # shown with -s
        f"\n{CLIENTS} clients x {CALLS} calls: wall {wall:.2f}s, per call "
        f"median {statistics.median(latencies) * 1000:.0f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95)] * 1000:.0f} ms, "
        f"max {latencies[-1] * 1000:.0f} ms"
    )


async def run_clients(
    server: HttpServer, windows: list[WindowInfo], titles: list[str]
) -> tuple[list[Client], float]:
    """Connect all clients, run them at once; then probe for cross-talk."""
    clients: list[Client] = []
    async with AsyncExitStack() as stack:
        for i, window in enumerate(windows):
            session = await stack.enter_async_context(http_session(server))
            clients.append(Client(i, window, session))
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for client in clients:
                tg.start_soon(client.run, [t for t in titles if t != client.title])
        wall = time.perf_counter() - started

        # cross-talk probe: each client uses the entry ID its neighbour was shown
        for client in clients:
            neighbour = clients[(client.index + 1) % CLIENTS]
            crossed = await client.session.call_tool(
                "perform", {"action": "fill", "elementID": neighbour.entry, "text": "intruder"}
            )
            assert crossed.is_error
            assert "not shown by a read_screen_ax in this session" in text(crossed)
        # and every entry still holds its own client's last value
        for client in clients:
            read = text(
                await client.session.call_tool(
                    "read_screen_ax", {"windowID": client.window.stable_id}
                )
            )
            assert value_of(read, client.entry) == f"client {client.index} round 11"
    return clients, wall
