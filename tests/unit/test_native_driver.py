"""The native driver on a FakeDesktop with a scripted model: approvals, batch rules, hybrid
function calls, declines and cancellation, for each vendor's wire format."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import Event
from deskpilot.native.calls import CallError, ComputerFlowError
from deskpilot.native.driver import NativeDriver, open_conversation
from deskpilot.native.executor import NativeExecutor
from deskpilot.native.safety import CancelRequest, PauseRequest
from deskpilot.native.vendors.base import Conversation
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
    """A model that answers each request with the next scripted reply; records the bodies."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, conv: Conversation, body: dict[str, Any]) -> Mapping[str, Any]:
        self.bodies.append(json.loads(json.dumps(body)))  # as sent over the wire
        reply = self.replies.pop(0)
        return reply(body) if callable(reply) else reply


async def setup(
    settings: Settings, vendor: str, model: str, script: Script, approver: Approver,
    *apps: int, confirm: str = "consequential",
) -> tuple[NativeDriver, FakeDesktop, dict[str, tuple[int, int]], list[Event]]:  # fmt: skip
    """A driver on a FakeDesktop; ``confirm="all"`` makes every computer call ask."""
    settings = settings.with_overrides(confirm=confirm)
    desktop = FakeDesktop()
    windows = [desktop.add_window(FAKE_APPS[i]) for i in apps]
    snap = await desktop.snapshot(windows[0])
    at = {n.name: n.bounds.center for n in snap.nodes() if n.bounds is not None}
    events: list[Event] = []
    ctx = ToolContext(desktop=desktop, settings=settings, approver=approver, audit=events.append)
    conv = await open_conversation(vendor, model, ctx, functions=[echo])  # type: ignore[arg-type]
    driver = NativeDriver(conv, NativeExecutor(ToolSet(), ctx), script,
                          functions=ToolSet([echo]))  # fmt: skip
    return driver, desktop, at, events


def yes(log: list[ApprovalRequest]) -> CallbackApprover:
    return CallbackApprover(lambda r: log.append(r) or True, person=True)


@pytest.mark.asyncio
async def test_openai_batch_runs_after_a_person_acknowledges_its_check(
    settings: Settings,
) -> None:
    check = {"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check."}
    asked: list[ApprovalRequest] = []
    script = Script()
    driver, desktop, at, events = await setup(settings, "openai", "gpt-5.5", script,
                                              yes(asked), 0)  # fmt: skip
    clicks = [{"type": "click", "button": "left", "x": at[k][0], "y": at[k][1]}
              for k in ("7", "×", "6", "=")]  # fmt: skip
    script.replies = [
        {"id": "resp_1", "output": [{"type": "computer_call", "id": "cu_1", "call_id": "call_1",
                                     "actions": clicks, "pending_safety_checks": [check]}]},
        {"id": "resp_2", "output": [{"type": "message",
                                     "content": [{"type": "output_text", "text": "42"}]}]},
    ]  # fmt: skip
    result = await driver.run("compute 7×6")
    assert (result.status, result.text, result.turns) == ("done", "42", 2)
    assert desktop.display_text(desktop.windows[0].info.xid) == "42"
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
    driver, desktop, at, _ = await setup(settings, "anthropic", "claude-opus-5-5", script,
                                         AllowAll(), 0, 2)  # fmt: skip
    vault = desktop.windows[1].info.geometry.center
    seven = (115, at["7"][1])  # the left edge of "7": the vault window covers the rest
    member = {"type": "tool_use", "toolset_name": "computer"}
    script.replies = [
        {"content": [
            {**member, "id": "t1", "name": "left_click", "input": {"coordinate": list(seven)}},
            {"type": "tool_use", "id": "t2", "name": "echo", "input": {"text": "hi"}},
            {**member, "id": "t3", "name": "left_click", "input": {"coordinate": list(vault)}},
            {**member, "id": "t4", "name": "type", "input": {"text": "x"}},
            {"type": "tool_use", "id": "t5", "name": "echo", "input": {"text": "after"}},
        ]},
        {"content": [{"type": "text", "text": "Blocked."}], "stop_reason": "end_turn"},
    ]  # fmt: skip
    result = await driver.run("go")
    assert result.status == "done"
    blocks = script.bodies[1]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["t1", "t2", "t3", "t4", "t5"]
    assert [b["is_error"] for b in blocks] == [False, False, True, True, False]
    assert "blocked apps list" in blocks[2]["content"][0]["text"]
    assert blocks[3]["content"][0]["text"].startswith("Not executed: an earlier computer")
    assert blocks[4]["content"][0]["text"] == "echo: after"
    assert desktop.display_text(desktop.windows[0].info.xid) == "7" and desktop.typed == []


@pytest.mark.asyncio
async def test_gemini_safety_decision_declined_tells_the_model(settings: Settings) -> None:
    for approver in (DenyAll(), AllowAll()):  # a person says no; an automatic approver can't
        script = Script()
        driver, desktop, at, _ = await setup(settings, "gemini", "gemini-3.5-flash", script,
                                             approver, 0)  # fmt: skip
        vp = driver.conv.viewport
        gx, gy = vp.to_space(*at["7"])
        decision = {"decision": "require_confirmation", "explanation": "Sure?"}
        script.replies = [
            {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {
                "id": "fc-1", "name": "click",
                "args": {"x": gx, "y": gy, "safety_decision": decision}}}]}}]},
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Stopped."}]}}]},
        ]  # fmt: skip
        result = await driver.run("go")
        assert result.status == "done"
        response = script.bodies[1]["contents"][-1]["parts"][0]["functionResponse"]
        assert response["id"] == "fc-1" and response["response"]["error"].startswith("Declined")
        assert "safety_acknowledgement" not in response["response"]
        assert desktop.display_text(desktop.windows[0].info.xid) == ""


@pytest.mark.asyncio
async def test_gemini_acknowledges_a_check_a_person_approved(settings: Settings) -> None:
    script = Script()
    driver, desktop, at, _ = await setup(settings, "gemini", "gemini-3.5-flash", script,
                                         yes([]), 0)  # fmt: skip
    gx, gy = driver.conv.viewport.to_space(*at["7"])
    decision = {"decision": "require_confirmation", "explanation": "Sure?"}
    script.replies = [
        {"candidates": [{"content": {"parts": [{"functionCall": {
            "name": "click", "args": {"x": gx, "y": gy, "safety_decision": decision}}}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "Done."}]}}]},
    ]  # fmt: skip
    await driver.run("go")
    response = script.bodies[1]["contents"][-1]["parts"][0]["functionResponse"]
    assert response["response"] == {"status": "ok", "safety_acknowledgement": "true"}
    assert response["parts"][0]["inlineData"]["mimeType"] == "image/png"
    assert desktop.display_text(desktop.windows[0].info.xid) == "7"


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
    person = CallbackApprover(approve, person=True)
    driver, desktop, at, _ = await setup(settings, "anthropic", "claude-opus-4-6", script,
                                         person, 0, confirm="all")  # fmt: skip

    def use(call_id: str, key: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": call_id, "name": "computer",
                "input": {"action": "left_click", "coordinate": list(at[key])}}  # fmt: skip

    script.replies = [{"content": [use("t1", "7"), use("t2", "8"), use("t3", "9"),
                                   use("t4", "+")]}]  # fmt: skip
    result = await driver.run("go")
    assert result.status == "cancelled" and seen == ["t1", "t2", "t3"]
    outputs = result.sessions[0].results()
    assert [type(o).__name__ for o in outputs] == ["ComputerResult", "ComputerResult",
                                                   "CallError", "CallError"]  # fmt: skip
    assert isinstance(outputs[2], CallError) and outputs[2].cancelled_computer_call
    assert outputs[3].message == "Computer call t4 was cancelled without a result."  # type: ignore[union-attr]
    assert desktop.display_text(desktop.windows[0].info.xid) == "78"
    assert driver.conv.messages == []  # type: ignore[attr-defined]  # a fresh start next time


@pytest.mark.asyncio
async def test_openai_decline_sends_the_screen_without_acknowledging(settings: Settings) -> None:
    script = Script()
    driver, *_ = await setup(settings, "openai", "gpt-5.5", script, DenyAll(), 0, confirm="all")
    script.replies = [
        {"id": "r1", "output": [{"type": "computer_call", "id": "cu", "call_id": "c1",
                                 "actions": [{"type": "click", "button": "left", "x": 1,
                                              "y": 1}]}]},
        {"id": "r2", "output": []},
    ]  # fmt: skip
    assert (await driver.run("go")).status == "done"
    first, second = script.bodies[1]["input"]
    assert first["type"] == "computer_call_output" and first["acknowledged_safety_checks"] == []
    assert second["content"][0]["text"].startswith("Declined: computer call c1 was not run")


@pytest.mark.asyncio
async def test_cursor_position_is_reported_in_screenshot_pixels(settings: Settings) -> None:
    script = Script()
    driver, desktop, _, _ = await setup(settings, "anthropic", "claude-sonnet-4-5", script,
                                        AllowAll(), 0)  # fmt: skip
    desktop.width, desktop.height = 2560, 1600
    driver.conv.viewport = driver.conv.viewport.with_target(2560, 1600)
    await desktop.pointer_move(1001, 501)
    script.replies = [
        {"content": [{"type": "tool_use", "id": "t1", "name": "computer",
                      "input": {"action": "cursor_position"}}]},
        {"content": []},
    ]  # fmt: skip
    await driver.run("where")
    block = script.bodies[1]["messages"][-1]["content"][0]
    assert block["content"][0] == {"type": "text", "text": "X=500,Y=250"}  # WXGA, factor 2


@pytest.mark.asyncio
async def test_a_paused_run_resumes_from_a_checkpoint_in_a_new_driver(settings: Settings) -> None:
    def pause_at_t3(request: ApprovalRequest) -> bool:
        if request.call_id == "t3":
            raise PauseRequest
        return True

    script = Script()
    driver, desktop, at, _ = await setup(settings, "anthropic", "claude-opus-4-6", script,
                                         CallbackApprover(pause_at_t3, person=True), 0,
                                         confirm="all")  # fmt: skip

    def use(call_id: str, key: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": call_id, "name": "computer",
                "input": {"action": "left_click", "coordinate": list(at[key])}}  # fmt: skip

    echo_use = {"type": "tool_use", "id": "t2", "name": "echo", "input": {"text": "mid"}}
    script.replies = [{"content": [use("t1", "7"), echo_use, use("t3", "8"), use("t4", "9")]}]
    paused = await driver.run("type 789")
    assert paused.status == "paused" and desktop.display_text(desktop.windows[0].info.xid) == "7"
    saved = json.loads(json.dumps(driver.checkpoint()))  # survives a process boundary
    assert [c["call_id"] for c in saved["session"]["items"]] == ["t1", "t2", "t3", "t4"]
    assert sorted(saved["session"]["answers"]) == ["0", "1"]  # t1 and the echo are done

    asked: list[ApprovalRequest] = []
    ctx = dataclasses.replace(driver.ctx, approver=yes(asked))
    conv = await open_conversation("anthropic", "claude-opus-4-6", ctx, functions=[echo])
    later = NativeDriver(conv, NativeExecutor(ToolSet(), ctx), script,
                         functions=ToolSet([echo]))  # fmt: skip
    script.replies = [{"content": [{"type": "text", "text": "789"}]}]
    result = await later.resume(saved)
    assert (result.status, result.text, result.turns) == ("done", "789", 2)
    assert [r.call_id for r in asked] == ["t3", "t4"]  # only what was still pending
    assert desktop.display_text(desktop.windows[0].info.xid) == "789"
    blocks = script.bodies[-1]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["t1", "t2", "t3", "t4"]
    assert blocks[1]["content"][0]["text"] == "echo: mid"
    assert script.bodies[-1]["messages"][1]["role"] == "assistant"  # the history came back
    with pytest.raises(ComputerFlowError, match="claude-opus-4-6"):
        other = await open_conversation("anthropic", "claude-sonnet-4-5", ctx)
        await NativeDriver(other, NativeExecutor(ToolSet(), ctx), script).resume(saved)
