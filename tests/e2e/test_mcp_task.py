"""``computer_use_task`` over MCP: served when a model is configured (here a scripted one)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientRequestContext

from deskpilot.agent.providers import get_provider
from deskpilot.agent.task import computer_use_task_tool
from deskpilot.audit import AuditLog
from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import discard
from deskpilot.mcp import DeskpilotMCP
from deskpilot.pages.tools import PAGE_TOOLS
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.task_tools import TASK_TOOLS
from tests.e2e.test_mcp_http import server_env
from tests.e2e.test_mcp_stdio import stdio_session

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.sandbox
@pytest.mark.process
async def test_computer_use_task_runs_the_subagent_through_the_same_toolset(
    home: Path, tmp_path: Path
) -> None:
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            {
                "format": "neutral",
                "replies": [
                    {"tool_calls": [{"name": "list_windows", "args": {}}]},
                    {"text": "No windows are open."},
                ],
            }
        )
    )
    model = f"scripted:{script}"
    with anyio.fail_after(90):
        async with stdio_session(
            server_env(home), tmp_path / "server.log", "--sandbox", "--model", model
        ) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            result = await session.call_tool("computer_use_task", {"goal": "Count the windows"})
            bad = await session.call_tool("computer_use_task", {"goal": ""})
    assert len(tools) == 10 + len(PAGE_TOOLS) + len(
        TASK_TOOLS
    )  # and the page tools, begin/end_task
    task = tools["computer_use_task"]
    assert task.input_schema["required"] == ["goal"]
    assert task.annotations is not None and task.annotations.open_world_hint is True
    assert not result.is_error
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "No windows are open."
    assert bad.is_error  # invalid arguments: an error result, and no model call was made
    assert "serving computer_use_task with replay" in (tmp_path / "server.log").read_text()

    with AuditLog(home / "data" / "audit.sqlite3") as audit:
        runs = {run.goal: run for run in audit.list_runs()}
        inner = [
            e.data.get("tool")
            for e in audit.run_events(runs["Count the windows"].id, images=False)
            if e.kind == "tool.call"
        ]
    assert inner == ["list_windows"]  # the subagent's own calls are audited in its own run
    assert runs["Count the windows"].outcome == "done"


@pytest.mark.process
async def test_a_model_without_a_key_serves_the_nine_tools_and_says_why(
    home: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in server_env(home).items() if k != "ANTHROPIC_API_KEY"}
    log = tmp_path / "server.log"
    with anyio.fail_after(90):
        async with stdio_session(
            env, log, "--sandbox", "--model", "anthropic:claude-sonnet-4-5"
        ) as session:
            tools = (await session.list_tools()).tools
    assert "computer_use_task" not in {t.name for t in tools}
    assert "not serving computer_use_task: No API key for anthropic" in log.read_text()


async def test_the_subagents_consequential_acts_are_asked_through_the_mcp_client(
    settings: Settings, tmp_path: Path
) -> None:
    script = tmp_path / "replies.json"
    send = {"action": "shortcut", "shortcut": "ctrl+return"}  # sends mail in most apps
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"name": "perform", "args": send}]},
                {"text": "The user declined sending; nothing was sent."},
            ]
        )
    )
    desktop = FakeDesktop()
    editor = desktop.add_window(FAKE_APPS[1], "Mail to Bob")
    toolset = computer_use_tools()
    provider = get_provider(f"scripted:{script}", settings)
    toolset.add(computer_use_task_tool(provider))
    app = DeskpilotMCP(toolset, ToolContext(desktop, settings, audit=discard, surface="mcp"))
    questions: list[str] = []

    async def decline(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        questions.append(params.message)
        return types.ElicitResult(action="decline")

    async with Client(app.server, mode="legacy", elicitation_callback=decline) as client:
        result = await client.call_tool(
            "computer_use_task", {"goal": "Send the mail", "windowID": editor.stable_id}
        )
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "The user declined sending; nothing was sent."
    [question] = questions
    assert "perform (consequential): shortcut ctrl+return may send or submit" in question
    assert not any(line.startswith("keys") for line in desktop.log), desktop.log
