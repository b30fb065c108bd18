"""``deskpilot run --native`` / ``--hybrid`` on a FakeDesktop: replays in the vendors' native
formats (``scripted:``) through the real native run, driver, ToolSet and audit log.

What each test shows: the hybrid replay shipped with deskpilot computes 84 through the CLI and
leaves a verifiable audit trail with screenshots; providers without a native computer tool are
refused with a clear message before anything is opened; budget, timeout, Ctrl-C and "stop" end
a run with the loop's outcomes and exit codes; a safety check is never acknowledged by an
automatic approver (the model is told it was declined); a paused run resumes from its
checkpoint file with ``--resume``; only the newest images go back to the model.
(Real desktops and HTTP servers per vendor: tests/desktop/test_native_run.py.)
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from deskpilot.agent.loop import RunOptions, StopController
from deskpilot.agent.native_run import load_checkpoint, resume_native_task, run_native_task
from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.providers.base import OMITTED_IMAGE
from deskpilot.audit import AuditLog
from deskpilot.cli import main
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.errors import ConfigError
from deskpilot.native.safety import CancelRequest, PauseRequest
from deskpilot.policy import AllowAll, ApprovalRequest, CallbackApprover
from deskpilot.tools.context import ToolContext
from tests.e2e.conftest import KEYS, Events
from tests.wires import anthropic_message

GOAL = "In the calculator, work out 12*7 and tell me the result"
CALC = FAKE_APPS[0]


# -- helpers ---------------------------------------------------------------------------------


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def computer(n: int, action: str, **inp: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{n}",
        "name": "computer",
        "input": {"action": action, **inp},
    }


def replay(path: Path, fmt: str, model: str, replies: list[Any]) -> str:
    path.write_text(json.dumps({"format": fmt, "model": model, "replies": replies}))
    return f"scripted:{path}"


def calc_ctx(ctx: ToolContext, **changes: Any) -> tuple[ToolContext, FakeDesktop]:
    desktop = ctx.desktop
    assert isinstance(desktop, FakeDesktop)
    desktop.add_window(CALC)
    return dataclasses.replace(ctx, **changes), desktop


def display(desktop: FakeDesktop) -> str:
    return desktop.display_text(desktop.windows[0].info.handle)


def last_user_blocks(provider: ScriptedProvider) -> list[dict[str, Any]]:
    body = provider.requests[-1][2]
    blocks: list[dict[str, Any]] = body["messages"][-1]["content"]
    return blocks


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "DESKPILOT_HOME": str(tmp_path / "home"),
        "DESKPILOT_MODEL": "",
        "ANTHROPIC_API_KEY": "",
        "OPENAI_API_KEY": "",
    }


class Desktops:
    def __init__(self) -> None:
        self.made: list[FakeDesktop] = []
        self.with_calculator = False
        self.interrupt = False


class InterruptingDesktop(FakeDesktop):
    """Presses Ctrl-C (SIGINT to this process) on its first screenshot."""

    async def capture(self, window: Any = None) -> bytes:
        if not any("SIGINT" in line for line in self.log):
            self.log.append("SIGINT")
            os.kill(os.getpid(), signal.SIGINT)
        return await super().capture(window)


@pytest.fixture
def desktops(monkeypatch: pytest.MonkeyPatch) -> Desktops:
    made = Desktops()

    async def open_desktop(settings: Any) -> FakeDesktop:
        desktop = InterruptingDesktop() if made.interrupt else FakeDesktop()
        if made.with_calculator:
            desktop.add_window(CALC)
        made.made.append(desktop)
        return desktop

    monkeypatch.setattr("deskpilot.runtime.open_desktop", open_desktop)
    return made


def invoke(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


# -- the CLI -----------------------------------------------------------------------------------


def test_hybrid_replay_computes_84_with_an_audit_trail(
    env: dict[str, str], desktops: Desktops, tmp_path: Path
) -> None:
    result = invoke(env, "run", "--hybrid", "--model", "scripted:calculator-hybrid", GOAL)

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("12 × 7 = 84.")
    assert "model hybrid · replay, not a live model: recorded anthropic" in result.stderr
    (desktop,) = desktops.made
    assert display(desktop) == "84" and desktop.typed == ["12*7\n"]
    with AuditLog(load_settings(env=env).audit_db) as log:
        assert log.verify().ok
        (run,) = log.list_runs()
        events = log.run_events(run.id)
        trace = log.export_markdown(run.id, image_dir=tmp_path / "images")
    kinds = [e.kind for e in events]
    assert kinds[0] == "run.started" and kinds[-1] == "run.finished"
    assert events[0].data["mode"] == "hybrid"
    tools = [e.data["tool"] for e in events if e.kind == "tool.result"]
    assert tools == [
        "computer_view",
        "open_app",
        "computer",
        "computer_view",
        "computer_call",
        "read_screen_ax",
    ]
    # the model's computer call went through the door as it was (nobody was asked for it)
    (call,) = [e for e in events if e.kind == "tool.call" and e.data["tool"] == "computer_call"]
    assert call.data["args"]["actions"] == [{"type": "type", "text": "12*7\n"}]
    assert "confirm.asked" not in kinds
    shots = [e for e in events if e.kind == "tool.result" and e.images]
    assert len(shots) == 2 and all(e.images[0].data.startswith(b"\x89PNG") for e in shots)
    assert trace.count("![screenshot") == 2 and len(list((tmp_path / "images").iterdir())) == 2
    # the model's text of tool-calling replies is a model.text event; the answer is not
    assert [e.data["text"] for e in events if e.kind == "model.text"][-1].startswith("Let me")
    assert events[-1].data == {
        "outcome": "done",
        "answer": result.stdout.strip(),
        "steps": 4,
        "reason": "answered",
    }


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("compatible:qwen2.5-vl", "has no native computer tool: OpenAI-compatible servers"),
        ("openai:gpt-4o", "openai:gpt-4o has no native computer tool. --native works with"),
        ("gemini:gemini-2.5-flash", "gemini:gemini-2.5-flash has no native computer tool"),
        ("anthropic:claude-3-5-haiku-latest", "has no native computer tool"),
        ("scripted:NEUTRAL", "a --native replay must be recorded in a vendor's native format"),
    ],
)
def test_providers_without_a_native_computer_tool_are_refused(
    model: str, says: str, env: dict[str, str], desktops: Desktops, tmp_path: Path
) -> None:
    if model == "scripted:NEUTRAL":
        model = replay(tmp_path / "neutral.json", "neutral", "", ["hi"])
    keys = {**env, **KEYS, "DESKPILOT_BASE_URL": "http://127.0.0.1:9/v1"}
    result = invoke(keys, "run", "--native", "--model", model, GOAL)
    assert result.exit_code == 2
    assert says in result.stderr
    assert ("openai:gpt-5.4" in result.stderr) != model.startswith("scripted:")
    assert desktops.made == []  # refused before anything was opened


def test_native_with_the_text_protocol_is_a_usage_error(
    env: dict[str, str], desktops: Desktops
) -> None:
    result = invoke(
        env,
        "run",
        "--hybrid",
        "--tool-protocol",
        "text",
        "--model",
        "scripted:calculator-hybrid",
        GOAL,
    )
    assert result.exit_code == 2 and "not the text protocol" in result.stderr
    assert invoke(env, "run", "--native").exit_code == 2


def test_ctrl_c_stops_a_native_run_with_exit_4(
    env: dict[str, str], desktops: Desktops, tmp_path: Path
) -> None:
    desktops.interrupt = True
    model = replay(
        tmp_path / "r.json",
        "anthropic",
        "claude-sonnet-4-5",
        [anthropic_message(computer(1, "wait", duration=100)), anthropic_message(text("never"))],
    )
    result = invoke(env, "run", "--native", "--model", model, GOAL)
    assert result.exit_code == 4, result.output
    assert result.stdout.startswith("Stopped by the user after")
    assert "Do not retry this task automatically." in result.stdout
    with AuditLog(load_settings(env=env).audit_db) as log:
        (run,) = log.list_runs()
        assert run.outcome == "stopped"


# -- the run API (budget, timeout, safety, stop, pause) ----------------------------------------


@pytest.mark.asyncio
async def test_step_budget_gets_one_tools_free_last_answer(
    fake_ctx: ToolContext, agent_settings: Settings, tmp_path: Path
) -> None:
    spec = replay(
        tmp_path / "r.json",
        "anthropic",
        "claude-sonnet-4-5",
        [
            anthropic_message(computer(1, "screenshot")),
            anthropic_message(computer(2, "screenshot")),
            anthropic_message(
                text("Partial: nothing computed yet."), computer(3, "left_click", coordinate=[1, 1])
            ),
        ],
    )
    provider = get_provider(spec, agent_settings)
    assert isinstance(provider, ScriptedProvider)
    ctx, desktop = calc_ctx(fake_ctx)
    result = await run_native_task(
        GOAL, provider=provider, ctx=ctx, options=RunOptions(max_steps=2)
    )

    assert (result.outcome, result.reason, result.exit_code) == ("needs_attention", "budget", 3)
    assert result.answer == "⚠ Step budget reached (2 steps).\n\nPartial: nothing computed yet."
    assert result.steps == 2
    last = provider.requests[-1][2]
    assert last["tool_choice"] == {"type": "none"}
    assert last_user_blocks(provider)[-1]["text"].startswith(
        "[deskpilot] The step budget of 2 steps is used up. You cannot call tools any more."
    )
    assert not any(line.startswith("pointer_click") for line in desktop.log)  # never ran


@pytest.mark.asyncio
async def test_timeout_answers_the_interrupted_call_and_asks_for_a_last_answer(
    fake_ctx: ToolContext, agent_settings: Settings, tmp_path: Path, events: Events
) -> None:
    spec = replay(
        tmp_path / "r.json",
        "anthropic",
        "claude-sonnet-4-5",
        [
            anthropic_message(text("Waiting for the app."), computer(1, "wait", duration=100)),
            anthropic_message(text("Nothing done yet.")),
        ],
    )
    provider = get_provider(spec, agent_settings)
    assert isinstance(provider, ScriptedProvider)
    ctx, _ = calc_ctx(fake_ctx)
    result = await run_native_task(
        GOAL, provider=provider, ctx=ctx, options=RunOptions(timeout=0.5)
    )

    assert (result.outcome, result.reason, result.exit_code) == ("needs_attention", "timeout", 3)
    assert result.answer.startswith("⏱ Timed out after 0.5 s")
    assert result.answer.endswith("\n\nNothing done yet.")
    interrupted, note = last_user_blocks(provider)
    assert interrupted["tool_use_id"] == "toolu_1" and interrupted["is_error"] is True
    assert interrupted["content"] == [
        {"type": "text", "text": "Not run: the task ran out of time."}
    ]
    assert note["text"].startswith("[deskpilot] Time is up: the 0.5 s limit was reached.")
    assert provider.requests[-1][2]["tool_choice"] == {"type": "none"}
    assert events.of("run.finished")[0].data["reason"] == "timeout"


@pytest.mark.asyncio
async def test_a_safety_check_is_never_acknowledged_automatically(
    fake_ctx: ToolContext, agent_settings: Settings, tmp_path: Path, events: Events
) -> None:
    check = {"id": "cu_sc_1", "code": "malicious_instructions", "message": "Odd text on screen."}
    spec = replay(
        tmp_path / "r.json",
        "openai",
        "gpt-5.4",
        [
            {
                "id": "resp_1",
                "output": [
                    {
                        "type": "computer_call",
                        "id": "cu_1",
                        "call_id": "call_1",
                        "actions": [{"type": "type", "text": "12*7\n"}],
                        "pending_safety_checks": [check],
                    }
                ],
            },
            {
                "id": "resp_2",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "Declined."}],
                    }
                ],
            },
        ],
    )
    provider = get_provider(spec, agent_settings)
    assert isinstance(provider, ScriptedProvider)
    ctx, desktop = calc_ctx(fake_ctx, approver=AllowAll())  # allows everything else
    result = await run_native_task(GOAL, provider=provider, ctx=ctx)

    assert result.outcome == "done" and result.answer == "Declined."
    assert desktop.typed == [] and display(desktop) == ""
    output, told = provider.requests[-1][2]["input"]
    assert output["type"] == "computer_call_output" and output["call_id"] == "call_1"
    assert output["acknowledged_safety_checks"] == []
    assert told["content"][0]["text"].startswith(
        "Declined: computer call call_1 was not run (only a person may approve it; the "
        "approver is automatic)."
    )
    asked, answered = events.of("confirm.asked"), events.of("confirm.answered")
    assert asked[0].data["call_id"] == "call_1" and answered[0].data["approved"] is False
    assert "Odd text on screen." in " ".join(asked[0].data["details"])


@pytest.mark.asyncio
async def test_stop_at_a_computer_call_ends_the_run_as_stopped(
    fake_ctx: ToolContext, agent_settings: Settings, tmp_path: Path
) -> None:
    asked: list[ApprovalRequest] = []

    def stop(request: ApprovalRequest) -> bool:
        asked.append(request)
        if request.tool == "computer_call":
            raise CancelRequest()
        return True

    settings = agent_settings.with_overrides(confirm="all")
    ctx, desktop = calc_ctx(
        fake_ctx, approver=CallbackApprover(stop, person=True), settings=settings
    )
    provider = get_provider("scripted:calculator-hybrid", settings)
    controller = StopController()
    result = await run_native_task(
        GOAL, provider=provider, ctx=ctx, hybrid=True, controller=controller
    )

    assert (result.outcome, result.exit_code) == ("stopped", 4)
    assert result.answer.startswith("Stopped by the user after 2 step(s)")
    assert "open_app" in result.answer  # the progress summary
    assert [r.tool for r in asked] == ["open_app", "computer_call"]
    assert desktop.typed == [] and not controller.active
    assert any("Calculator" in line for line in desktop.log)  # open_app was allowed and ran


def test_a_paused_run_resumes_from_its_checkpoint_in_the_cli(
    fake_ctx: ToolContext, agent_settings: Settings, env: dict[str, str], desktops: Desktops
) -> None:
    def pause(request: ApprovalRequest) -> bool:
        if request.tool == "computer_call":
            raise PauseRequest()
        return True

    settings = load_settings(env={**env, **KEYS}).with_overrides(confirm="all")
    ctx, desktop = calc_ctx(
        fake_ctx, approver=CallbackApprover(pause, person=True), settings=settings
    )
    provider = get_provider("scripted:calculator-hybrid", settings)
    paused = asyncio.run(run_native_task(GOAL, provider=provider, ctx=ctx, hybrid=True))

    assert (paused.outcome, paused.reason, paused.exit_code) == ("needs_attention", "paused", 3)
    path = Path(paused.answer.rsplit("deskpilot run --resume ", 1)[1])
    assert path.parent == settings.state_dir / "native-runs" and desktop.typed == []
    saved = load_checkpoint(path)
    assert saved["plan"]["hybrid"] is True and saved["replay_position"] == 2
    assert saved["checkpoint"]["session"]["items"][0]["call_id"] == "toolu_01HybType"

    desktops.with_calculator = True  # the calculator the first run opened
    result = invoke(env, "run", "--resume", str(path))
    assert result.exit_code == 0, result.output
    assert "84" in result.stdout
    (resumed,) = desktops.made
    assert display(resumed) == "84"
    with AuditLog(settings.audit_db) as log:
        (run,) = log.list_runs()
        kinds = [e.kind for e in log.run_events(run.id)]
    assert run.id == paused.run_id and run.outcome == "done"
    assert kinds.count("run.started") == 1  # the first half was recorded by the API caller


@pytest.mark.asyncio
async def test_resume_refuses_another_model(
    fake_ctx: ToolContext, agent_settings: Settings, tmp_path: Path
) -> None:
    checkpoint = {
        "deskpilot_native_run": 1,
        "checkpoint": {"turns": 1},
        "plan": {"goal": GOAL, "vendor": "openai", "model": "gpt-5.4", "spec": "openai:gpt-5.4"},
    }
    provider = get_provider("scripted:calculator-hybrid", agent_settings)
    with pytest.raises(ConfigError, match=r"resume it with --model openai:gpt-5\.4"):
        await resume_native_task(checkpoint, provider=provider, ctx=fake_ctx)


@pytest.mark.asyncio
async def test_only_the_newest_images_go_back_to_the_model(
    fake_ctx: ToolContext, agent_settings: Settings, tmp_path: Path
) -> None:
    replies = [anthropic_message(computer(n, "screenshot"), n=n) for n in range(1, 6)] + [
        anthropic_message(text("Seen."))
    ]
    spec = replay(tmp_path / "r.json", "anthropic", "claude-sonnet-4-5", replies)
    provider = get_provider(spec, agent_settings)
    assert isinstance(provider, ScriptedProvider)
    ctx, _ = calc_ctx(fake_ctx)
    result = await run_native_task(GOAL, provider=provider, ctx=ctx)

    assert result.outcome == "done"
    body = provider.requests[-1][2]
    dumped = json.dumps(body)
    assert dumped.count('"type": "image"') == provider.keep_images == 3
    assert dumped.count(OMITTED_IMAGE) == 3  # the goal's screenshot and two older results
    assert body["messages"][-1]["content"][0]["content"][-1]["type"] == "image"  # the newest


def test_events_as_json_lines(env: dict[str, str], desktops: Desktops) -> None:
    result = invoke(
        env, "run", "--hybrid", "--events", "jsonl", "--model", "scripted:calculator-hybrid", GOAL
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["kind"] == "run.started" and lines[0]["data"]["mode"] == "hybrid"
    assert "computer_call" in [r["data"].get("tool") for r in lines if r["kind"] == "tool.call"]
    shots = [r for r in lines if r["images"]]
    assert shots and shots[0]["images"][0]["mime"] == "image/png"
    assert lines[-1]["kind"] == "run.finished" and "84" in lines[-1]["data"]["answer"]


def test_a_provider_failure_ends_the_run_with_a_progress_summary(
    env: dict[str, str], desktops: Desktops, tmp_path: Path
) -> None:
    desktops.with_calculator = True
    model = replay(
        tmp_path / "r.json",
        "anthropic",
        "claude-sonnet-4-5",
        [anthropic_message(computer(1, "type", text="12*7\n"))],
    )  # the recording ends here
    result = invoke(env, "run", "--native", "--model", model, GOAL)
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("The model provider failed: scripted: no recorded reply left")
    assert 'computer {"action": {"type": "type", "text": "12*7\\n"}' in result.stdout
    assert display(desktops.made[0]) == "84"
