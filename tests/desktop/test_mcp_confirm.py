"""Consequential clicks over MCP: the client is asked (elicitation); declining runs nothing.

The app is a zenity question whose OK button is labelled "Send": clicking it ends the process,
so "nothing ran" is visible as the process still running with its window open.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import anyio.to_thread
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.session import ClientRequestContext, ElicitationFnT

from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from tests.desktop.conftest import Apps
from tests.desktop.helpers import find_id
from tests.desktop.helpers import mcp_text as text
from tests.e2e.test_mcp_http import http_server, http_session
from tests.e2e.test_mcp_stdio import stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="session")

Connect = Callable[[ElicitationFnT | None], AbstractAsyncContextManager[ClientSession]]


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, desktop_settings: Settings, tmp_path: Path) -> Connect:
    env = desktop_settings.environ

    @asynccontextmanager
    async def open_session(elicit: ElicitationFnT | None) -> AsyncIterator[ClientSession]:
        if request.param == "stdio":
            async with stdio_session(env, tmp_path / "server.log", elicit=elicit) as session:
                yield session
        else:
            async with (
                http_server(env=env) as server,
                http_session(server, elicit=elicit) as session,
            ):
                yield session

    return open_session


async def send_dialog(apps: Apps) -> tuple[WindowInfo, subprocess.Popen[bytes]]:
    window = await apps.spawn(
        [
            "zenity",
            "--question",
            "--title=Send report",
            "--text=Send the quarterly report to Bob?",
            "--ok-label=Send",
            "--cancel-label=Cancel",
        ],
        match=lambda w: w.title == "Send report",
    )
    return window, apps.procs[-1]


async def exit_code(proc: subprocess.Popen[bytes]) -> int:
    """Wait (in a thread, up to 10 s) for ``proc`` to exit."""
    return await anyio.to_thread.run_sync(lambda: proc.wait(timeout=10))


class Answers:
    """Elicitation callback: answers from a list, in order; records each question."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        return self.answers.pop(0)


async def test_the_user_is_asked_and_declining_runs_nothing(
    connect: Connect, desktop: DesktopFacade, apps: Apps
) -> None:
    window, proc = await send_dialog(apps)
    answers = Answers(
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
        types.ElicitResult(action="accept", content={"approve": True}),
    )
    async with connect(answers) as session:
        read = await session.call_tool("read_screen_ax", {"windowID": window.stable_id})
        send = find_id(text(read), "button", "Send")
        for _ in range(2):  # decline, then cancel
            declined = await session.call_tool("perform", {"elementID": send})
            assert declined.is_error
            assert "Declined: the user did not approve perform" in text(declined)
            assert proc.poll() is None  # the dialog is still waiting: nothing was clicked
            assert window.handle in {w.handle for w in await desktop.list_windows()}
        assert len(answers.questions) == 2
        assert 'perform (consequential): activates "Send"' in answers.questions[0]
        assert f'"elementID": "{send}"' in answers.questions[0]

        approved = await session.call_tool("perform", {"elementID": send})
        assert not approved.is_error, text(approved)
    assert await exit_code(proc) == 0  # zenity's OK ("Send") answer
    assert len(answers.questions) == 3


async def test_a_client_without_elicitation_is_refused_and_told_how_to_allow(
    connect: Connect, apps: Apps
) -> None:
    window, proc = await send_dialog(apps)
    async with connect(None) as session:
        read = await session.call_tool("read_screen_ax", {"windowID": window.stable_id})
        send = find_id(text(read), "button", "Send")
        refused = await session.call_tool("perform", {"elementID": send})
        # not consequential: runs without asking
        cancel = find_id(text(read), "button", "Cancel")
        assert proc.poll() is None
        assert refused.is_error
        assert "does not support elicitation" in text(refused)
        assert "--confirm none" in text(refused)
        cancelled = await session.call_tool("perform", {"elementID": cancel})
        assert not cancelled.is_error, text(cancelled)
    assert await exit_code(proc) == 1  # zenity's Cancel answer
