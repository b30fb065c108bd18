"""Both MCP protocol eras on one server: a client pinned to 2026-07-28 (stateless, no
``initialize``) and a handshake-era client list and call tools, keep their own element IDs,
and each is asked before a consequential click, through its era's mechanism (a mid-call
``elicitation/create``, or an ``input_required`` result the client answers by retrying).

Each client works on its own zenity question whose OK button is labelled "Send": a click ends
the process, so "nothing ran" is the process still running and "it ran" its exit code 0.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
import httpx2
import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.pages.tools import PAGE_TOOLS
from deskpilot.tools.task_tools import TASK_TOOLS
from tests.desktop.conftest import Apps
from tests.desktop.helpers import find_id
from tests.desktop.helpers import mcp_text as text
from tests.e2e.test_mcp_http import HttpServer, http_server, http_session

pytestmark = pytest.mark.asyncio(loop_scope="session")


class Answers:
    """Elicitation callback: answers in order; records each question."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        return self.answers.pop(0)


def decline_then_accept() -> Answers:
    return Answers(
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="accept", content={"approve": True}),
    )


async def question(apps: Apps, title: str) -> tuple[WindowInfo, subprocess.Popen[bytes]]:
    window = await apps.spawn(
        ["zenity", "--question", f"--title={title}", "--text=Send it?", "--ok-label=Send"],
        match=lambda w: w.title == title,
    )
    return window, apps.procs[-1]


async def exit_code(proc: subprocess.Popen[bytes]) -> int:
    return await anyio.to_thread.run_sync(lambda: proc.wait(timeout=10))


@asynccontextmanager
async def stateless_client(server: HttpServer, answers: Answers) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        Client(
            streamable_http_client(server.url, http_client=http),
            mode="2026-07-28",
            elicitation_callback=answers,
        ) as client,
    ):
        yield client


async def test_both_eras_on_one_server(
    desktop_settings: Settings, apps: Apps, tmp_path: Path
) -> None:
    old_window, old_proc = await question(apps, "handshake-era")
    new_window, new_proc = await question(apps, "stateless-era")
    old_answers, new_answers = decline_then_accept(), decline_then_accept()
    async with (
        http_server(env=desktop_settings.environ) as server,
        http_session(server, elicit=old_answers) as old,
        stateless_client(server, new_answers) as new,
    ):
        assert new.protocol_version == "2026-07-28"
        assert old.protocol_version == "2025-11-25"  # type: ignore[attr-defined]
        for listed in (await old.list_tools(), await new.list_tools()):
            tools = {t.name: t for t in listed.tools}
            assert len(tools) == 9 + len(PAGE_TOOLS) + len(
                TASK_TOOLS
            )  # the nine, the page tools, begin/end_task
            assert tools["read_screen_ax"].output_schema is not None

        # each reads its own window; the client validates structuredContent on every call
        old_read = await old.call_tool("read_screen_ax", {"windowID": old_window.stable_id})
        new_read = await new.call_tool("read_screen_ax", {"windowID": new_window.stable_id})
        old_send = find_id(text(old_read), "button", "Send")
        new_send = find_id(text(new_read), "button", "Send")
        assert old_send != new_send
        assert {n["id"] for n in new_read.structured_content["nodes"]} >= {new_send}  # type: ignore[index]
        # ... and has its own tracked target and element IDs
        assert " · 'handshake-era' · " in text(await old.call_tool("read_screen_ax", {}))
        assert " · 'stateless-era' · " in text(await new.call_tool("read_screen_ax", {}))
        for client, foreign in ((old, new_send), (new, old_send)):
            crossed = await client.call_tool("perform", {"elementID": foreign})
            assert crossed.is_error
            assert "not shown by a read_screen_ax in this session" in text(crossed)

        # approvals reach both: a "no" runs nothing, a "yes" clicks
        for client, send, proc, answers in (
            (old, old_send, old_proc, old_answers),
            (new, new_send, new_proc, new_answers),
        ):
            declined = await client.call_tool("perform", {"elementID": send})
            assert declined.is_error
            assert "Declined: the user did not approve perform" in text(declined)
            assert proc.poll() is None
            approved = await client.call_tool("perform", {"elementID": send})
            assert not approved.is_error, text(approved)
            assert len(answers.questions) == 2
            assert 'perform (consequential): activates "Send"' in answers.questions[0]
            assert f'"elementID": "{send}"' in answers.questions[1]
    assert await exit_code(old_proc) == 0
    assert await exit_code(new_proc) == 0
