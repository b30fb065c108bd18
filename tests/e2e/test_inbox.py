"""A console session's inbox as the loop's ``inbox`` and ``before_call`` hooks (what the
console's message box and take-over use): messages join the next model turn, a pause holds the
run, a call decided before a take-over is not run, and time held does not count against the
timeout. Real loop, real tools, FakeDesktop, scripted replies. (That a note reaches a native
run's own history: tests/e2e/test_run_hooks.py.)"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

from deskpilot.agent.loop import RunOptions
from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.config import Settings
from deskpilot.events import Event
from deskpilot.serve.inbox import NOT_RUN_TAKEN_OVER, Inbox
from deskpilot.tools.context import ToolContext
from tests.e2e.conftest import Events


def scripted(tmp_path: Path, settings: Settings, replies: list[Any]) -> ScriptedProvider:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"format": "neutral", "replies": replies}))
    provider = get_provider(f"scripted:{path}", settings)
    assert isinstance(provider, ScriptedProvider)
    return provider


OPEN = {"name": "open_app", "args": {"bundleId": "Calculator"}}


def test_a_message_written_mid_run_is_read_at_the_next_turn(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    inbox = Inbox()

    def watch(event: Event) -> None:
        if event.kind == "tool.call":  # while the first call runs, the person writes
            inbox.post("Use the scientific mode.")

    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"text": "Opening.", "tool_calls": [OPEN]},
            {"text": "Done, in scientific mode."},
        ],
    )
    ctx = dataclasses.replace(fake_ctx, observe=watch)
    result = asyncio.run(
        computer_use_task(
            "Open the calculator",
            provider=provider,
            ctx=ctx,
            inbox=inbox,
            before_call=inbox.before_call,
        )
    )
    assert result.outcome == "done" and result.steps == 2
    roles = [(m.role, m.text) for m in result.conversation.messages]
    assert roles[-2:] == [
        ("user", "Use the scientific mode."),
        ("assistant", "Done, in scientific mode."),
    ]
    assert roles[-3][0] == "tool"  # after the first call's result, before the second turn
    said = events.of("user.message")
    assert [(e.data["text"], e.data["step"]) for e in said] == [("Use the scientific mode.", 1)]
    assert inbox.waiting == 0


def test_a_take_over_holds_the_run_skips_the_call_decided_before_it_and_adds_the_time(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    inbox = Inbox()
    held = 1.2  # seconds the person keeps the screen: longer than the whole run may take

    def watch(event: Event) -> None:
        if event.kind == "model.text" and not inbox.pauses:  # the reply is in, its call not run
            inbox.pause()
            asyncio.get_running_loop().call_later(held, inbox.resume, "I opened it myself.")

    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"text": "Opening.", "tool_calls": [OPEN]},
            {"text": "You opened it; thanks."},
        ],
    )
    ctx = dataclasses.replace(fake_ctx, observe=watch)
    result = asyncio.run(
        computer_use_task(
            "Open the calculator",
            provider=provider,
            ctx=ctx,
            inbox=inbox,
            before_call=inbox.before_call,
            options=RunOptions(timeout=1.0),
        )
    )
    assert (result.outcome, result.answer) == ("done", "You opened it; thanks.")
    results = events.of("tool.result")
    assert [(r.data["tool"], r.data["ok"]) for r in results] == [("open_app", False)]
    assert results[0].data["text"] == NOT_RUN_TAKEN_OVER
    assert not fake_ctx.desktop.windows  # type: ignore[attr-defined]  # it never ran
    notes = [e.data["text"] for e in events.of("user.message")]
    assert notes == ["I opened it myself."]
