"""Computer calls through the agent loop on a FakeDesktop, with a scripted model answering over
the production HTTP client: approvals, batch rules, hybrid function calls, declines,
cancellation and pause/resume, for each vendor's wire format."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from deskpilot.agent.computer import ComputerCalls, NativePlan
from deskpilot.agent.loop import AgentRun, RunOptions, RunResult
from deskpilot.agent.native_run import load_checkpoint
from deskpilot.agent.providers import PROVIDERS, HttpClient
from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import Event
from deskpilot.native.calls import CallError
from deskpilot.native.safety import CancelRequest, PauseRequest
from deskpilot.native.scaling import Viewport
from deskpilot.policy import AllowAll, ApprovalRequest, Approver, CallbackApprover, DenyAll, Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

CALC, _, VAULT = FAKE_APPS
Reply = Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]


@tool(risk=Risk.READ_ONLY, title="Echo")
async def echo(ctx: ToolContext, text: str) -> ToolResult:
    """Say it back."""
    return ToolResult(text=f"echo: {text}")


class Script:
    """A model that answers each request with the next scripted reply (an httpx transport under
    the provider's own HTTP client); records the bodies as sent."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        reply = self.replies.pop(0)
        return httpx.Response(200, json=reply(body) if callable(reply) else reply)


@dataclasses.dataclass
class Rig:
    acting: ComputerCalls
    ctx: ToolContext
    desktop: FakeDesktop
    at: dict[str, tuple[int, int]]
    events: list[Event]
    vendor: str
    model: str
    script: Script

    async def run(self, goal: str = "go") -> RunResult:
        return await AgentRun(self.acting, self.ctx, RunOptions(), goal=goal).run()

    def click(self, call_id: str, key: str) -> dict[str, Any]:
        """An Anthropic ``left_click`` at the fake calculator's ``key``."""
        return {
            "type": "tool_use",
            "id": call_id,
            "name": "computer",
            "input": {"action": "left_click", "coordinate": list(self.at[key])},
        }

    async def viewport(self) -> Viewport:
        """The viewport the run will have: the vendor's for the screen."""
        width, height = await self.desktop.screen_size()
        return self.acting.provider.computer_viewport(width, height)


def computer_calls(
    vendor: str, model: str, script: Script, *, checkpoint: Mapping[str, Any] | None = None
) -> ComputerCalls:
    http = HttpClient(transport=httpx.MockTransport(script))
    provider = PROVIDERS[vendor](model, api_key="k", http=http)
    plan = NativePlan("go", vendor, model, provider.spec, hybrid=True)
    return ComputerCalls(provider, plan, tools=ToolSet([echo]), checkpoint=checkpoint)


async def setup(
    settings: Settings,
    vendor: str,
    model: str,
    script: Script,
    approver: Approver,
    *apps: int,
    confirm: str = "consequential",
) -> Rig:
    """A hybrid run (``echo`` beside the computer tool) on a FakeDesktop; ``confirm="all"``
    makes every computer call ask."""
    settings = settings.with_overrides(confirm=confirm)
    desktop = FakeDesktop()
    windows = [desktop.add_window(FAKE_APPS[i]) for i in apps]
    snap = await desktop.snapshot(windows[0])
    at = {n.name: n.bounds.center for n in snap.nodes() if n.bounds is not None}
    events: list[Event] = []
    ctx = ToolContext(desktop=desktop, settings=settings, approver=approver, audit=events.append)
    acting = computer_calls(vendor, model, script)
    return Rig(acting, ctx, desktop, at, events, vendor, model, script)


def yes(log: list[ApprovalRequest]) -> CallbackApprover:
    return CallbackApprover(lambda r: log.append(r) or True, person=True)


@pytest.mark.asyncio
async def test_openai_batch_runs_after_a_person_acknowledges_its_check(
    settings: Settings,
) -> None:
    check = {"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check."}
    asked: list[ApprovalRequest] = []
    script = Script()
    rig = await setup(settings, "openai", "gpt-5.5", script, yes(asked), 0)
    desktop, at, events = rig.desktop, rig.at, rig.events
    clicks = [
        {"type": "click", "button": "left", "x": at[k][0], "y": at[k][1]}
        for k in ("7", "×", "6", "=")
    ]
    script.replies = [
        {
            "id": "resp_1",
            "output": [
                {
                    "type": "computer_call",
                    "id": "cu_1",
                    "call_id": "call_1",
                    "actions": clicks,
                    "pending_safety_checks": [check],
                }
            ],
        },
        {
            "id": "resp_2",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "42"}]}],
        },
    ]
    result = await rig.run("compute 7×6")
    assert (result.outcome, result.answer, result.steps) == ("done", "42", 2)
    assert desktop.display_text(desktop.windows[0].info.handle) == "42"
    assert len(asked) == 1 and asked[0].details[-1].startswith("WARNING: safety check cu_sc_1")
    output = script.bodies[1]["input"][0]
    assert output["type"] == "computer_call_output" and output["call_id"] == "call_1"
    assert output["acknowledged_safety_checks"] == [check]
    assert output["output"]["image_url"].startswith("data:image/png;base64,")
    assert script.bodies[1]["previous_response_id"] == "resp_1"
    assert [e.kind for e in events].count("confirm.asked") == 1


@pytest.mark.asyncio
async def test_anthropic_turn_stops_at_the_first_failure_and_keeps_call_order(
    settings: Settings,
) -> None:
    script = Script()
    rig = await setup(settings, "anthropic", "claude-opus-5-5", script, AllowAll(), 0, 2)
    desktop, at = rig.desktop, rig.at
    vault = desktop.windows[1].info.geometry.center
    seven = (115, at["7"][1])  # the left edge of "7": the vault window covers the rest
    member = {"type": "tool_use", "toolset_name": "computer"}
    script.replies = [
        {
            "content": [
                {**member, "id": "t1", "name": "left_click", "input": {"coordinate": list(seven)}},
                {"type": "tool_use", "id": "t2", "name": "echo", "input": {"text": "hi"}},
                {**member, "id": "t3", "name": "left_click", "input": {"coordinate": list(vault)}},
                {**member, "id": "t4", "name": "type", "input": {"text": "x"}},
                {"type": "tool_use", "id": "t5", "name": "echo", "input": {"text": "after"}},
            ]
        },
        {"content": [{"type": "text", "text": "Blocked."}], "stop_reason": "end_turn"},
    ]
    result = await rig.run("go")
    assert result.outcome == "done"
    blocks = script.bodies[1]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["t1", "t2", "t3", "t4", "t5"]
    assert [b["is_error"] for b in blocks] == [False, False, True, True, False]
    assert "blocked apps list" in blocks[2]["content"][0]["text"]
    assert blocks[3]["content"][0]["text"].startswith("Not executed: an earlier computer")
    assert blocks[4]["content"][0]["text"] == "echo: after"
    assert desktop.display_text(desktop.windows[0].info.handle) == "7" and desktop.typed == []


@pytest.mark.asyncio
async def test_gemini_safety_decision_declined_tells_the_model(settings: Settings) -> None:
    for approver in (DenyAll(), AllowAll()):  # a person says no; an automatic approver can't
        script = Script()
        rig = await setup(settings, "gemini", "gemini-3.5-flash", script, approver, 0)
        desktop = rig.desktop
        gx, gy = (await rig.viewport()).to_space(*rig.at["7"])
        decision = {"decision": "require_confirmation", "explanation": "Sure?"}
        script.replies = [
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [
                                {
                                    "functionCall": {
                                        "id": "fc-1",
                                        "name": "click",
                                        "args": {"x": gx, "y": gy, "safety_decision": decision},
                                    }
                                }
                            ],
                        }
                    }
                ]
            },
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Stopped."}]}}]},
        ]
        result = await rig.run("go")
        assert result.outcome == "done"
        response = script.bodies[1]["contents"][-1]["parts"][0]["functionResponse"]
        assert response["id"] == "fc-1" and response["response"]["error"].startswith("Declined")
        assert "safety_acknowledgement" not in response["response"]
        assert desktop.display_text(desktop.windows[0].info.handle) == ""


@pytest.mark.asyncio
async def test_gemini_acknowledges_a_check_a_person_approved(settings: Settings) -> None:
    script = Script()
    rig = await setup(settings, "gemini", "gemini-3.5-flash", script, yes([]), 0)
    desktop = rig.desktop
    gx, gy = (await rig.viewport()).to_space(*rig.at["7"])
    decision = {"decision": "require_confirmation", "explanation": "Sure?"}
    script.replies = [
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "functionCall": {
                                    "name": "click",
                                    "args": {"x": gx, "y": gy, "safety_decision": decision},
                                }
                            }
                        ]
                    }
                }
            ]
        },
        {"candidates": [{"content": {"parts": [{"text": "Done."}]}}]},
    ]
    await rig.run("go")
    response = script.bodies[1]["contents"][-1]["parts"][0]["functionResponse"]
    assert response["response"] == {"status": "ok", "safety_acknowledgement": "true"}
    assert response["parts"][0]["inlineData"]["mimeType"] == "image/png"
    assert desktop.display_text(desktop.windows[0].info.handle) == "7"


@pytest.mark.asyncio
async def test_cancelling_a_request_ends_the_run_and_keeps_finished_results(
    settings: Settings,
) -> None:
    seen: list[str] = []

    def approve(request: ApprovalRequest) -> bool:
        seen.append(request.call_id)
        if request.call_id == "t3":
            raise CancelRequest
        return True

    script = Script()
    rig = await setup(
        settings,
        "anthropic",
        "claude-opus-4-6",
        script,
        CallbackApprover(approve, person=True),
        0,
        confirm="all",
    )
    desktop, use = rig.desktop, rig.click

    script.replies = [{"content": [use("t1", "7"), use("t2", "8"), use("t3", "9"), use("t4", "+")]}]
    result = await rig.run("go")
    assert (result.outcome, result.exit_code) == ("stopped", 4) and seen == ["t1", "t2", "t3"]
    assert rig.acting.session is not None
    outputs = rig.acting.session.results()  # the cancelled turn
    assert [type(o).__name__ for o in outputs] == [
        "ComputerResult",
        "ComputerResult",
        "CallError",
        "CallError",
    ]
    assert isinstance(outputs[2], CallError) and outputs[2].cancelled_computer_call
    assert outputs[3].message == "Computer call t4 was cancelled without a result."  # type: ignore[union-attr]
    assert desktop.display_text(desktop.windows[0].info.handle) == "78"
    assert rig.acting.wire.messages == []  # type: ignore[attr-defined]  # a fresh start next time


@pytest.mark.asyncio
async def test_openai_decline_sends_the_screen_without_acknowledging(settings: Settings) -> None:
    script = Script()
    rig = await setup(settings, "openai", "gpt-5.5", script, DenyAll(), 0, confirm="all")
    script.replies = [
        {
            "id": "r1",
            "output": [
                {
                    "type": "computer_call",
                    "id": "cu",
                    "call_id": "c1",
                    "actions": [{"type": "click", "button": "left", "x": 1, "y": 1}],
                }
            ],
        },
        {"id": "r2", "output": []},
    ]
    assert (await rig.run("go")).outcome == "done"
    first, second = script.bodies[1]["input"]
    assert first["type"] == "computer_call_output" and first["acknowledged_safety_checks"] == []
    assert second["content"][0]["text"].startswith("Declined: computer call c1 was not run")


@pytest.mark.asyncio
async def test_cursor_position_is_reported_in_screenshot_pixels(settings: Settings) -> None:
    script = Script()
    rig = await setup(settings, "anthropic", "claude-sonnet-4-5", script, AllowAll(), 0)
    desktop = rig.desktop
    desktop.width, desktop.height = 2560, 1600
    await desktop.pointer_move(1001, 501)
    script.replies = [
        {
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "computer",
                    "input": {"action": "cursor_position"},
                }
            ]
        },
        {"content": []},
    ]
    await rig.run("where")
    block = script.bodies[1]["messages"][-1]["content"][0]
    assert block["content"][0] == {"type": "text", "text": "X=500,Y=250"}  # WXGA, factor 2


@pytest.mark.asyncio
async def test_a_paused_run_resumes_from_its_checkpoint_in_a_new_run(settings: Settings) -> None:
    def pause_at_t3(request: ApprovalRequest) -> bool:
        if request.call_id == "t3":
            raise PauseRequest
        return True

    script = Script()
    rig = await setup(
        settings,
        "anthropic",
        "claude-opus-4-6",
        script,
        CallbackApprover(pause_at_t3, person=True),
        0,
        confirm="all",
    )
    desktop, use = rig.desktop, rig.click

    echo_use = {"type": "tool_use", "id": "t2", "name": "echo", "input": {"text": "mid"}}
    script.replies = [{"content": [use("t1", "7"), echo_use, use("t3", "8"), use("t4", "9")]}]
    paused = await rig.run("type 789")
    assert (paused.outcome, paused.reason) == ("needs_attention", "paused")
    assert desktop.display_text(desktop.windows[0].info.handle) == "7"
    path = paused.answer.rsplit("deskpilot run --resume ", 1)[1]
    saved = load_checkpoint(Path(path))  # a file: it survives a process boundary
    turn = saved["checkpoint"]["session"]
    assert [c["call_id"] for c in turn["items"]] == ["t1", "t2", "t3", "t4"]
    assert sorted(turn["answers"]) == ["0", "1"]  # t1 and the echo are done
    assert saved["plan"]["run_id"] == paused.run_id

    asked: list[ApprovalRequest] = []
    ctx = dataclasses.replace(rig.ctx, approver=yes(asked), run_id=paused.run_id)
    later = computer_calls("anthropic", "claude-opus-4-6", script, checkpoint=saved["checkpoint"])
    script.replies = [{"content": [{"type": "text", "text": "789"}]}]
    result = await AgentRun(later, ctx, RunOptions(), goal="type 789").run()
    assert (result.outcome, result.answer, result.steps) == ("done", "789", 2)
    assert result.run_id == paused.run_id
    assert [r.call_id for r in asked] == ["t3", "t4"]  # only what was still pending
    assert desktop.display_text(desktop.windows[0].info.handle) == "789"
    blocks = script.bodies[-1]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["t1", "t2", "t3", "t4"]
    assert blocks[1]["content"][0]["text"] == "echo: mid"
    assert script.bodies[-1]["messages"][1]["role"] == "assistant"  # the history came back

    other = computer_calls("anthropic", "claude-sonnet-4-5", script, checkpoint=saved["checkpoint"])
    refused = await AgentRun(other, ctx, RunOptions(), goal="type 789").run()
    assert (refused.outcome, refused.reason) == ("needs_attention", "error")
    assert "this checkpoint is for anthropic:claude-opus-4-6" in refused.answer
