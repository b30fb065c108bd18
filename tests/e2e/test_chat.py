"""``deskpilot chat``'s parent agent: computer_use_task as a tool, confirmed workspace tools,
8 steps per turn, a model switch between turns, save and resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from deskpilot.agent.chat import ChatSession
from deskpilot.agent.loop import StopController
from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.session_store import load_conversation
from deskpilot.agent.task import COMPUTER_USE_TOOLS
from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.events import Event
from deskpilot.policy import CallbackApprover
from deskpilot.tools.context import ToolContext
from tests.e2e.conftest import Events
from tests.e2e.shapes import check_anthropic
from tests.e2e.wire import Recorded


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def write(tmp_path: Path, name: str, replies: list[Any], fmt: str = "neutral") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"format": fmt, "replies": replies}))
    return path


def anthropic_reply(text: str, uses: list[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
        for i, (n, a) in enumerate(uses)
    ]
    return {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": "tool_use" if uses else "end_turn",
        "usage": {},
    }


def test_chat_turns_switch_save_and_resume(
    tmp_path: Path,
    agent_settings: Settings,
    fake_ctx: ToolContext,
    fake_desktop: FakeDesktop,
    events: Events,
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    first = write(
        tmp_path,
        "first.json",
        [
            # parent: hand the GUI work to the subagent
            {"tool_calls": [call("computer_use_task", goal="In the calculator, work out 12*7")]},
            # subagent
            {"tool_calls": [call("open_app", bundleId="Calculator")]},
            {
                "tool_calls": [
                    call(
                        "perform_sequence",
                        steps=[
                            {"action": "type", "text": "12*7"},
                            {"action": "shortcut", "shortcut": "enter"},
                        ],
                    )
                ]
            },
            {"tool_calls": [call("read_screen_ax")]},
            {"text": "12 × 7 = 84"},
            # parent again
            {"text": "It is 84."},
        ],
    )
    second = write(
        tmp_path,
        "second.json",
        [
            anthropic_reply(
                "Reading it.",
                [
                    ("read_file", {"path": "notes.txt"}),
                    ("run_command", {"command": "rm notes.txt"}),
                ],
            ),
            anthropic_reply("Your notes say: buy milk. I did not delete anything."),
        ],
        fmt="anthropic",
    )
    asked: list[str] = []
    fake_ctx.approver = CallbackApprover(
        lambda r: asked.append(r.tool) or r.tool == "read_file", person=True
    )

    async def go() -> ChatSession:
        provider = get_provider(f"scripted:{first}", agent_settings)
        chat = ChatSession(provider, fake_ctx, workspace=tmp_path)
        one = await chat.send("What is 12*7? Use the calculator.")
        assert (one.outcome, one.answer) == ("done", "It is 84.")
        assert isinstance(chat.provider, ScriptedProvider)
        parent_tools = chat.provider.requests[0][2]["tools"]
        assert parent_tools == ["computer_use_task", "read_file", "run_command"]
        assert chat.provider.requests[1][2]["tools"] == list(COMPUTER_USE_TOOLS)
        await chat.switch(f"scripted:{second}")
        two = await chat.send("What do my notes say?")
        assert two.answer == "Your notes say: buy milk. I did not delete anything."
        assert isinstance(chat.provider, ScriptedProvider)
        for url, headers, body in chat.provider.requests:  # the first model's turns, re-encoded
            check_anthropic(Recorded(urlparse(url).path, headers, body), "scripted")
        chat.save(tmp_path / "chat.json")
        await chat.aclose()
        return chat

    chat = asyncio.run(go())
    assert fake_desktop.display_text(fake_desktop.windows[0].info.handle) == "84"
    assert asked == ["read_file", "run_command"]  # both asked, each on its own
    assert (tmp_path / "notes.txt").exists()
    results = [r for m in chat.conversation.messages for r in m.results]
    assert results[0].name == "computer_use_task" and results[0].text == "12 × 7 = 84"
    assert results[1].text == "buy milk\n" and results[2].text.startswith("Declined")
    # the switch: the second model read the first model's call in its own wire format
    writers = [m.model for m in chat.conversation.messages if m.role == "assistant"]
    assert writers[0].startswith("scripted:") and writers[0] == writers[1] != writers[2]
    # events: the subagent's run is linked to the parent's turn
    starts = events.of("run.started")
    assert [s.data.get("parent_run") for s in starts] == [None, starts[0].run_id, None]
    loaded, meta = load_conversation(tmp_path / "chat.json")
    assert loaded == chat.conversation and meta["model"] == f"scripted:{second}"


def test_chat_turn_budget_is_eight_steps(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    replies = [{"tool_calls": [call("read_file", path="x")]}] * 8 + ["Out of steps: no file x."]
    path = write(tmp_path, "loop.json", replies)
    fake_ctx.settings = agent_settings.with_overrides(confirm="none")

    async def go() -> str:
        chat = ChatSession(
            get_provider(f"scripted:{path}", agent_settings), fake_ctx, workspace=tmp_path
        )
        result = await chat.send("read x")
        assert result.reason == "budget" and result.steps == 8
        return result.answer

    assert asyncio.run(go()) == "⚠ Step budget reached (8 steps).\n\nOut of steps: no file x."


def test_stopping_the_subagent_hands_the_parent_a_summary(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    path = write(
        tmp_path,
        "stop.json",
        [
            {"tool_calls": [call("computer_use_task", goal="Open the calculator and wait")]},
            {"tool_calls": [call("open_app", bundleId="Calculator")]},
            {"tool_calls": [call("wait", seconds=3600)]},
            {"text": "The task was stopped after opening the app. How should I proceed?"},
        ],
    )
    controller = StopController()

    def stop_on_wait(event: Event) -> None:
        events.append(event)
        if event.kind == "tool.call" and event.data["tool"] == "wait":
            controller.stop()  # the innermost run: the subagent, not the chat turn

    fake_ctx.audit = stop_on_wait

    async def go() -> None:
        chat = ChatSession(
            get_provider(f"scripted:{path}", agent_settings), fake_ctx, controller=controller
        )
        result = await chat.send("open the calculator and wait")
        assert result.outcome == "done" and result.answer.endswith("How should I proceed?")
        (task_result,) = [
            r
            for m in chat.conversation.messages
            for r in m.results
            if r.name == "computer_use_task"
        ]
        assert task_result.is_error
        assert task_result.text.startswith("Stopped by the user after 2 step(s)")
        assert "Do not retry this task automatically." in task_result.text

    asyncio.run(go())
    outcomes = [e.data["outcome"] for e in events.of("run.finished")]
    assert outcomes == ["stopped", "done"]
