"""How runs end: done, step budget, timeout, stop, provider failure, repeated bad format —
each with its final answer shape and exit code. Real loop, real tools, FakeDesktop, replies
replayed by the scripted provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from deskpilot.agent.loop import EXIT_CODES, RunOptions, RunResult, StopController
from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.config import Settings
from deskpilot.events import Event
from deskpilot.tools.context import ToolContext
from tests.e2e.conftest import Events


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def scripted(tmp_path: Path, settings: Settings, replies: list[Any]) -> ScriptedProvider:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"format": "neutral", "replies": replies}))
    provider = get_provider(f"scripted:{path}", settings)
    assert isinstance(provider, ScriptedProvider)
    return provider


def run(
    provider: ScriptedProvider,
    ctx: ToolContext,
    goal: str = "Work out 12*7",
    controller: StopController | None = None,
    **options: Any,
) -> RunResult:
    return asyncio.run(
        computer_use_task(
            goal, provider=provider, ctx=ctx, options=RunOptions(**options), controller=controller
        )
    )


def test_done(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"text": "Opening it.", "tool_calls": [call("open_app", bundleId="Calculator")]},
            {"text": "It shows 84."},
        ],
    )
    result = run(provider, fake_ctx)
    assert (result.outcome, result.reason, result.steps, result.exit_code) == (
        "done",
        "answered",
        2,
        0,
    )
    assert result.answer == "It shows 84."
    assert events.kinds() == [
        "run.started",
        "policy.grants",  # what the person's goal allows (#22): here, nothing to grant
        "model.text",
        "tool.call",
        "policy.decided",  # the door's record of its decision (#22)
        "tool.result",
        "run.finished",
    ]
    assert events.of("policy.decided")[0].data["outcome"] == "allowed"
    started, finished = events[0].data, events[-1].data
    assert started["goal"] == "Work out 12*7" and "not a live model" in started["model"]
    assert events[1].data["goal"] == "Work out 12*7" and events[1].data["grants"] == []
    assert finished == {
        "outcome": "done",
        "answer": "It shows 84.",
        "steps": 2,
        "reason": "answered",
    }
    assert len({e.run_id for e in events}) == 1


def test_step_budget_ends_with_one_tools_free_answer(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"tool_calls": [call("list_windows")]},
            {"tool_calls": [call("list_windows")]},
            {"text": "I listed the windows twice; the calculation was not started."},
            {"text": "never used"},
        ],
    )
    result = run(provider, fake_ctx, goal="Do it but do not submit the form", max_steps=2)
    assert (result.outcome, result.reason, result.exit_code) == ("needs_attention", "budget", 3)
    assert result.answer.startswith("⚠ Step budget reached (2 steps).\n\n")
    assert result.answer.endswith("the calculation was not started.")
    assert provider.position == 3  # exactly one extra call
    last = provider.requests[-1][2]
    assert last["tools"] == []  # the last call offers no tools
    note = result.conversation.messages[-2].text
    assert note.startswith("[deskpilot] The step budget of 2 steps is used up")
    assert "Constraints that still hold: do not submit the form" in note
    assert "# Constraints from the task (never break them)\n- do not submit the form" in (
        result.conversation.system
    )


def test_timeout_prefixes_the_answer(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"tool_calls": [call("open_app", bundleId="Calculator")]},
            {"tool_calls": [call("wait", seconds=3600)]},
            {"text": "The calculator is open; nothing was typed yet."},
        ],
    )
    result = run(provider, fake_ctx, timeout=0.5, grace=5)
    assert (result.outcome, result.reason, result.exit_code) == ("needs_attention", "timeout", 3)
    assert result.answer.startswith(
        "⏱ Timed out after 0.5 s — the task may be only partially complete.\n\n"
    )
    assert result.answer.endswith("nothing was typed yet.")
    waited = [r for m in result.conversation.messages for r in m.results if r.name == "wait"]
    assert [r.text for r in waited] == ["Not run: the task ran out of time."]
    assert result.conversation.pending_calls() == []


def test_stop_ends_with_a_progress_summary_and_no_retry(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    controller = StopController()

    def stop_on_wait(event: Event) -> None:
        events.append(event)
        if event.kind == "tool.call" and event.data["tool"] == "wait":
            assert controller.stop()

    fake_ctx.audit = stop_on_wait
    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"text": "Opening.", "tool_calls": [call("open_app", bundleId="Calculator")]},
            {"tool_calls": [call("wait", seconds=3600)]},
            {"text": "should never be asked for"},
        ],
    )
    result = run(provider, fake_ctx, controller=controller)
    assert (result.outcome, result.reason, result.exit_code) == ("stopped", "stopped", 4)
    assert result.answer.startswith(
        "Stopped by the user after 2 step(s); the task is not finished."
    )
    assert '1. open_app {"bundleId": "Calculator"} → ok: Target window: Calculator' in result.answer
    assert (
        '2. wait {"seconds": 3600} → failed: Not run: the user stopped the task.' in result.answer
    )
    assert result.answer.endswith(
        "Ask the user how to proceed. Do not retry this task automatically."
    )
    assert provider.position == 2  # no further model call, no retry
    assert not controller.active
    assert events.of("run.finished")[0].data["outcome"] == "stopped"
    cancelled = [e for e in events.of("tool.result") if e.data["tool"] == "wait"]
    assert cancelled[0].data["summary"].startswith("cancelled")


def test_provider_failure_needs_attention(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"tool_calls": [call("open_app", bundleId="Calculator")]},
        ],
    )
    result = run(provider, fake_ctx)
    assert (result.outcome, result.reason, result.exit_code) == (
        "needs_attention",
        "provider_error",
        3,
    )
    assert result.answer.startswith("The model provider failed: scripted: no recorded reply left")
    assert "1. open_app" in result.answer


def test_repeated_malformed_calls_give_up(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    bad = '@@TOOL@@ {"tool": "open_app", "args": {bundleId: Calculator}} @@END@@'
    provider = scripted(tmp_path, agent_settings, [bad, bad, bad, "unused"])
    result = run(provider, fake_ctx)
    assert (result.outcome, result.reason) == ("needs_attention", "format_errors")
    errors = [r.text for m in result.conversation.messages for r in m.results]
    assert len(errors) == 3 and all(
        e.startswith("Malformed tool call #1: not valid JSON") for e in errors
    )
    assert [e.data["ok"] for e in events.of("tool.result")] == [False] * 3


def test_a_failed_call_skips_the_rest_of_the_reply(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {
                "tool_calls": [
                    call("read_screen_ax", windowID="999/1"),
                    call("list_windows"),
                    call("nonexistent_tool"),
                ]
            },
            '@@TOOL@@ {"tool": "nonexistent_tool", "args": {}} @@END@@',
            "Window 999/1 does not exist.",
        ],
    )
    result = run(provider, fake_ctx)
    first, second = [m.results for m in result.conversation.messages if m.role == "tool"]
    assert first[0].is_error and first[0].text.startswith("Window 999/1 not found")
    assert [r.text.split(":")[0] for r in first[1:]] == ["Not run", "Not run"]
    assert second[0].text.startswith("Unknown tool 'nonexistent_tool'. Available tools:")
    assert result.outcome == "done"


def test_subagent_only_ever_sees_the_nine_tools(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    from deskpilot.agent.task import COMPUTER_USE_TOOLS
    from deskpilot.agent.workspace import workspace_tools
    from deskpilot.tools.builtin import computer_use_tools

    everything = computer_use_tools()
    for spec in workspace_tools(tmp_path):
        everything.add(spec)
    provider = scripted(
        tmp_path,
        agent_settings,
        [
            {"tool_calls": [call("run_command", command="touch pwned")]},
            "done",
        ],
    )
    result = asyncio.run(computer_use_task("x", provider=provider, ctx=fake_ctx, tools=everything))
    assert provider.requests[0][2]["tools"] == list(COMPUTER_USE_TOOLS)
    assert "Unknown tool 'run_command'" in result.conversation.messages[2].results[0].text
    assert not (tmp_path / "pwned").exists()


def test_exit_codes_are_documented() -> None:
    assert EXIT_CODES == {"done": 0, "needs_attention": 3, "stopped": 4}


@pytest.mark.parametrize("window", ["byid", "missing"])
def test_window_id_is_the_target_and_live_context_is_injected(
    window: str, tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    from deskpilot.desktop.fake_apps import FAKE_APPS

    opened = asyncio.run(fake_ctx.desktop.launch(FAKE_APPS[0]))
    window_id = opened.window_id if window == "byid" else "1/2"
    provider = scripted(tmp_path, agent_settings, ["ok"])
    settings = agent_settings.with_overrides(preferences={"browser": "Chromium"})
    fake_ctx.settings = settings
    result = asyncio.run(computer_use_task("x", window_id, provider=provider, ctx=fake_ctx))
    system = result.conversation.system
    assert f'- The user\'s frontmost window: {opened.stable_id} — "Calculator"' in system
    assert "- The user's app preferences: browser: Chromium" in system
    assert "- Agent browser: Chromium, deskpilot's own agent browser" in system
    assert "- Today: " in system
    expected = opened.stable_id if window == "byid" else "1/2"
    assert f'Pass windowID="{expected}" to every tool' in system
    assert fake_ctx.session.target == (opened.stable_id if window == "byid" else None)
