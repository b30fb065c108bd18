"""The loop's hooks for talking to a run: messages the user sends while it goes on (``inbox``),
a call answered instead of run (``before_call``: a person took the screen over), and a
follow-up that continues a finished run in the same context (``follow_up``) — with the element
tools and with the native computer tool. Real loop and tools, FakeDesktop, recorded Anthropic
replies through the production HTTP client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deskpilot.agent.loop import follow_up
from deskpilot.agent.native_run import run_native_task
from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.tools.context import ToolContext
from tests.e2e.conftest import Events


def msg(*content: dict[str, Any]) -> dict[str, Any]:
    stop = "tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn"
    return {"type": "message", "role": "assistant", "content": list(content), "stop_reason": stop}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def use(n: int, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": args}


def replay(tmp_path: Path, settings: Settings, replies: list[Any]) -> ScriptedProvider:
    path = tmp_path / "replies.json"
    path.write_text(
        json.dumps({"format": "anthropic", "model": "claude-sonnet-4-5", "replies": replies})
    )
    provider = get_provider(f"scripted:{path}", settings)
    assert isinstance(provider, ScriptedProvider)
    return provider


class Mailbox:
    """An inbox whose ``take()`` gives the next batch of messages (none once they run out)."""

    def __init__(self, *batches: list[str]) -> None:
        self.batches = list(batches)

    def take(self) -> list[str]:
        return self.batches.pop(0) if self.batches else []


TAKEN_OVER = "Not run: the user took the screen over. Look at it again before you go on."


def vetoes(*answers: str | None) -> Any:
    """A ``before_call`` answering calls in turn (None: run it)."""
    pending = list(answers)

    async def before_call() -> str | None:
        return pending.pop(0) if pending else None

    return before_call


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every text block the user side of a Messages request holds, in order."""
    out = []
    for message in body["messages"]:
        if message["role"] == "user":
            out += [b["text"] for b in message["content"] if b.get("type") == "text"]
    return out


@pytest.mark.asyncio
async def test_an_inbox_message_reaches_the_model_before_its_next_turn(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    provider = replay(
        tmp_path,
        agent_settings,
        [
            msg(text("Listing."), use(1, "list_windows")),
            msg(text("Noted: no calculator.")),
        ],
    )
    inbox = Mailbox([], ["Please do not open any app."])
    result = await computer_use_task(
        "List the windows", provider=provider, ctx=fake_ctx, inbox=inbox
    )

    assert result.outcome == "done" and result.steps == 2
    second = provider.requests[1][2]
    assert user_texts(second)[-1] == "Please do not open any app."
    last = second["messages"][-1]["content"]  # the results, then the message, in one turn
    assert [b["type"] for b in last] == ["tool_result", "text"]
    (said,) = events.of("user.message")
    assert said.data == {"text": "Please do not open any app.", "step": 1}
    assert said.run_id == result.run_id
    kinds = events.kinds()
    assert kinds.index("tool.result") < kinds.index("user.message") < kinds.index("run.finished")


@pytest.mark.asyncio
async def test_a_follow_up_continues_a_finished_run_in_the_same_context(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    provider = replay(
        tmp_path,
        agent_settings,
        [
            msg(text("Looking."), use(1, "list_windows")),
            msg(text("There are no windows.")),
            msg(text("Still none.")),
        ],
    )
    first = await computer_use_task("List the windows", provider=provider, ctx=fake_ctx)
    again = await follow_up(first, "And now?", fake_ctx)

    assert (first.answer, again.answer) == ("There are no windows.", "Still none.")
    assert again.run_id != first.run_id and again.outcome == "done" and again.steps == 1
    body = provider.requests[2][2]
    assert user_texts(body)[0] == "List the windows" and user_texts(body)[-1] == "And now?"
    assert [m["role"] for m in body["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert again.conversation is first.conversation  # one conversation, grown
    started = [e for e in events.of("run.started") if e.run_id == again.run_id]
    assert started[0].data["goal"] == "And now?"


def calculator(ctx: ToolContext) -> FakeDesktop:
    desktop = ctx.desktop
    assert isinstance(desktop, FakeDesktop)
    desktop.add_window(FAKE_APPS[0])
    return desktop


def computer(n: int, action: str, **inp: Any) -> dict[str, Any]:
    return use(n, "computer", action=action, **inp)


@pytest.mark.asyncio
async def test_an_inbox_message_joins_a_native_run_after_the_results(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    calculator(fake_ctx)
    provider = replay(
        tmp_path,
        agent_settings,
        [
            msg(computer(1, "screenshot")),
            msg(text("Understood.")),
        ],
    )
    inbox = Mailbox([], ["Only look, do not click."])
    result = await run_native_task(
        "Look at the calculator", provider=provider, ctx=fake_ctx, inbox=inbox
    )

    assert result.outcome == "done" and result.answer == "Understood."
    last = provider.requests[1][2]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
    assert last[1]["text"] == "Only look, do not click."


@pytest.mark.asyncio
async def test_a_native_follow_up_sees_the_screen_as_it_is_now(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    calculator(fake_ctx)
    provider = replay(
        tmp_path,
        agent_settings,
        [
            msg(text("The display is empty.")),
            msg(text("It still is.")),
        ],
    )
    first = await run_native_task("Read the calculator", provider=provider, ctx=fake_ctx)
    shots = [e for e in events.of("tool.result") if e.data["tool"] == "computer_view"]
    again = await follow_up(first, "Look again.", fake_ctx)

    assert again.answer == "It still is." and again.run_id != first.run_id
    body = provider.requests[1][2]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    question = body["messages"][-1]["content"]
    assert question[0] == {"type": "text", "text": "Look again."}
    assert question[1]["type"] == "image"  # a new screenshot with the question
    (shot,) = [
        e
        for e in events.of("tool.result")
        if e.data["tool"] == "computer_view" and e.run_id == again.run_id
    ]
    assert len(shots) == 1 and shot.images  # audited, like every screenshot the model gets


@pytest.mark.asyncio
async def test_a_call_answered_before_it_runs_never_reaches_the_desktop(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    provider = replay(
        tmp_path,
        agent_settings,
        [
            msg(use(1, "list_windows"), use(2, "open_app", bundleId="Calculator")),
            msg(text("I will look again.")),
        ],
    )
    result = await computer_use_task(
        "Open the calculator", provider=provider, ctx=fake_ctx, before_call=vetoes(None, TAKEN_OVER)
    )

    assert result.outcome == "done"
    ran = [e.data["tool"] for e in events.of("tool.result") if e.data["ok"]]
    assert ran == ["list_windows"]
    desktop = fake_ctx.desktop
    assert isinstance(desktop, FakeDesktop) and desktop.windows == []  # nothing was opened
    results = provider.requests[1][2]["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [False, True]
    assert results[1]["content"][0]["text"].endswith(TAKEN_OVER)


@pytest.mark.asyncio
async def test_a_computer_call_answered_before_it_runs_clicks_nothing(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    desktop = calculator(fake_ctx)
    provider = replay(
        tmp_path,
        agent_settings,
        [
            msg(computer(1, "type", text="12*7\n")),
            msg(text("Understood.")),
        ],
    )
    result = await run_native_task(
        "Work out 12*7", provider=provider, ctx=fake_ctx, before_call=vetoes(TAKEN_OVER)
    )

    assert result.outcome == "done" and desktop.typed == []
    (answer,) = provider.requests[1][2]["messages"][-1]["content"]
    assert answer["is_error"] is True and answer["content"][0]["text"] == TAKEN_OVER
