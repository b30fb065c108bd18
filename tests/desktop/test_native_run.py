"""``deskpilot run --native`` / ``--hybrid`` on the sandbox desktop, one local server per vendor.

A :class:`~tests.desktop.native_server.ReplayServer` stands in for each vendor's API and speaks
its wire format; like a real model it finds the calculator's buttons in the screenshot
deskpilot sent (positions from the window's AT-SPI snapshot, scaled into the screenshot's space,
see tests/desktop/test_native_vendors.py) and clicks 12 × 7 =. What each test shows:

* per vendor, the native run (the same entry point as ``deskpilot run --native``) drives
  gnome-calculator to 84 through the ToolSet, and every event lands in the audit log with the
  screenshots the model was sent; safety checks a person approves are acknowledged exactly;
* hybrid: one run uses read_screen_ax and perform (element IDs) and the computer tool (pixels),
  in one turn, and the results go back in the original call order;
* the CLI, with no terminal: a computer call carrying a safety check is declined and the model
  is told so; nothing of it runs; the next call (no check) runs; exit code 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from deskpilot.agent.native_run import run_native_task
from deskpilot.agent.providers import get_provider
from deskpilot.audit import AuditLog
from deskpilot.cli import main
from deskpilot.config import Settings
from deskpilot.desktop.base import Rect
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.events import Event, Fanout
from deskpilot.policy import ApprovalRequest, CallbackApprover
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps
from tests.desktop.helpers import find_id
from tests.desktop.native_server import ReplayServer, Request, image_of
from tests.desktop.test_native_vendors import Calc, Eye, open_calculator, shows

pytestmark = pytest.mark.asyncio(loop_scope="session")

GOAL = "In the calculator, work out 12*7 and tell me the result"
KEYS = ("1", "2", "×", "7", "=")
CHECK = {"id": "cu_sc_1", "code": "malicious_instructions", "message": "Review before clicking."}
PATHS = {"openai": "/v1", "anthropic": "", "gemini": "/v1beta"}  # the vendors' base URL paths
Reply = Callable[[Request, int, Eye], dict[str, Any]]


def answer(vendor: str, text: str) -> dict[str, Any]:
    if vendor == "openai":
        return {
            "id": "resp_end",
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }
            ],
        }
    if vendor == "anthropic":
        return {
            "id": "msg_end",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
        }
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}


def openai_batch(call_id: str, eye: Eye, checks: list[dict[str, Any]]) -> dict[str, Any]:
    actions = [{"type": "click", "button": "left", "x": x, "y": y} for x, y in map(eye.at, KEYS)]
    return {
        "id": f"resp_{call_id}",
        "output": [
            {
                "type": "computer_call",
                "id": f"cu_{call_id}",
                "call_id": call_id,
                "status": "completed",
                "actions": actions,
                "pending_safety_checks": checks,
            }
        ],
    }


def openai(req: Request, i: int, eye: Eye) -> dict[str, Any]:
    if i == 0:
        return openai_batch("call_1", eye, [CHECK])
    (output,) = req.body["input"]
    assert output["acknowledged_safety_checks"] == [CHECK]  # what the person approved
    return answer("openai", "The calculator shows 84.")


def click(n: int, eye: Eye, key: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{n}",
        "name": "computer",
        "input": {"action": "left_click", "coordinate": list(eye.at(key))},
    }


def anthropic(req: Request, i: int, eye: Eye) -> dict[str, Any]:
    if i == 0:
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "stop_reason": "tool_use",
            "content": [
                {"type": "text", "text": "Clicking 12 × 7 =."},
                *(click(n, eye, k) for n, k in enumerate(KEYS, 1)),
            ],
        }
    return answer("anthropic", "It shows 84.")


def gemini(req: Request, i: int, eye: Eye) -> dict[str, Any]:
    if i == 0:
        parts: list[dict[str, Any]] = []
        for n, key in enumerate(KEYS, 1):
            x, y = eye.at(key)
            call: dict[str, Any] = {"id": f"fc-{n}", "name": "click", "args": {"x": x, "y": y}}
            if key == "=":
                decision = {"decision": "require_confirmation", "explanation": "Confirm?"}
                call["args"]["safety_decision"] = decision
            parts.append({"functionCall": call})
        return {"candidates": [{"content": {"role": "model", "parts": parts}}]}
    responses = [p["functionResponse"] for p in req.body["contents"][-1]["parts"]]
    assert responses[-1]["response"]["safety_acknowledgement"] == "true"
    assert [r["id"] for r in responses] == ["fc-1", "fc-2", "fc-3", "fc-4", "fc-5"]
    return answer("gemini", "84")


CASES: dict[str, tuple[str, Reply, bool]] = {  # model, reply, target the window
    "openai": ("openai:gpt-5.4", openai, False),
    "anthropic": ("anthropic:claude-opus-4-6", anthropic, False),
    "gemini": ("gemini:gemini-3.5-flash", gemini, True),
}


def keyed(settings: Settings) -> Settings:
    return settings.with_overrides(api_keys={v: "test-key" for v in PATHS})


async def run_case(
    spec: str, reply: Reply, calc: Calc, ctx: ToolContext, *, window: bool, hybrid: bool = False
) -> tuple[Any, ReplayServer]:
    vendor = spec.split(":")[0]
    w, h = await ctx.desktop.screen_size()
    target = calc.window.geometry if window else Rect(0, 0, w, h)
    eyes: list[Eye] = []

    def script(req: Request, i: int) -> dict[str, Any]:
        if i == 0:
            eyes.append(Eye(calc, target, image_of(vendor, req.body), grid=vendor == "gemini"))
        return reply(req, i, eyes[0])

    with ReplayServer(script) as server:
        provider = get_provider(spec, ctx.settings, base_url=server.url + PATHS[vendor])
        async with provider:
            result = await run_native_task(
                GOAL,
                calc.window.stable_id if window else None,
                provider=provider,
                ctx=ctx,
                hybrid=hybrid,
            )
    assert server.errors == []
    return result, server


def person(asked: list[ApprovalRequest]) -> CallbackApprover:
    return CallbackApprover(lambda r: asked.append(r) or True, person=True)


@pytest.mark.parametrize("vendor", list(CASES))
async def test_each_vendor_computes_84_through_the_native_run(
    vendor: str, apps: Apps, desktop: DesktopFacade, ctx: ToolContext, tmp_path: Path
) -> None:
    spec, reply, window = CASES[vendor]
    calc = await open_calculator(apps, desktop)
    asked: list[ApprovalRequest] = []
    events: list[Event] = []
    with AuditLog(tmp_path / "audit.sqlite3") as audit:
        run_ctx = dataclasses.replace(
            ctx,
            settings=keyed(ctx.settings),
            approver=person(asked),
            audit=Fanout(audit, events.append),
        )
        result, server = await run_case(spec, reply, calc, run_ctx, window=window)
        await shows(desktop, calc, "84")
        logged = audit.run_events(result.run_id)
        trace = audit.export_markdown(result.run_id, image_dir=tmp_path / "images")
        assert audit.verify().ok

    assert (result.outcome, result.exit_code) == ("done", 0) and "84" in result.answer
    assert len(server.requests) == 2
    assert [e.kind for e in logged] == [e.kind for e in events]  # every event, in order
    assert logged[0].data["model"] == f"native · {spec}" and logged[0].data["mode"] == "native"
    clicks = [e for e in logged if e.kind == "tool.call" and e.data["tool"] == "computer"]
    assert [c.data["args"]["action"]["type"] for c in clicks] == ["click"] * 5
    shots = [e for e in logged if e.kind == "tool.result" and e.images]
    assert len(shots) >= 2 and trace.count("![screenshot") == len(shots)
    # safety checks reach the person, who approved them; other calls run without asking
    assert [r.tool for r in asked] == (["computer_call"] if vendor != "anthropic" else [])
    assert logged[-1].kind == "run.finished" and logged[-1].data["outcome"] == "done"


@pytest.mark.xfail(
    reason="known, open: failed once in the full suite of 2026-12-02 (the calculator did not "
    "show 84 within 10 s after the hybrid run's clicks); passes alone. Cause not found.",
    strict=False,
)
async def test_hybrid_uses_element_tools_and_the_computer_tool_in_one_run(
    apps: Apps, desktop: DesktopFacade, ctx: ToolContext
) -> None:
    calc = await open_calculator(apps, desktop)
    win = calc.window.stable_id
    reads: list[str] = []

    def result_texts(req: Request) -> list[str]:
        out = []
        for block in req.body["messages"][-1]["content"]:
            out += [c["text"] for c in block["content"] if c["type"] == "text"]
        return out

    def reply(req: Request, i: int, eye: Eye) -> dict[str, Any]:
        def use(n: int, name: str, **inp: Any) -> dict[str, Any]:
            return {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": inp}

        def message(*content: dict[str, Any]) -> dict[str, Any]:
            return {
                "id": f"msg_{i}",
                "type": "message",
                "role": "assistant",
                "content": list(content),
                "stop_reason": "tool_use",
            }

        if i == 0:
            assert [t["name"] for t in req.body["tools"][1:]][:3] == [
                "list_windows",
                "open_app",
                "read_screen_ax",
            ]
            return message(use(1, "read_screen_ax", windowID=win))
        if i == 1:
            (tree,) = result_texts(req)
            reads.append(tree)
            one, two = find_id(tree, "button", "1"), find_id(tree, "button", "2")
            return message(
                use(2, "perform", windowID=win, elementID=one),
                use(3, "perform", windowID=win, elementID=two),
                click(4, eye, "×"),
                click(5, eye, "7"),
                click(6, eye, "="),
            )
        if i == 2:
            ids = [b["tool_use_id"] for b in req.body["messages"][-1]["content"]]
            assert ids == ["toolu_2", "toolu_3", "toolu_4", "toolu_5", "toolu_6"]
            return message(use(7, "read_screen_ax", windowID=win))
        (tree,) = result_texts(req)
        m = re.search(r'textbox = "([^"]*)"', tree)
        if m and "×" in m.group(1) and i < 12:
            # the display still shows the sum, not its result: the app is behind the clicks
            # (seen once in five full runs); a model reads again
            return message(use(7 + i, "read_screen_ax", windowID=win))
        return answer("anthropic", f"12 × 7 = {m.group(1) if m else '?'}")

    events: list[Event] = []
    run_ctx = dataclasses.replace(ctx, settings=keyed(ctx.settings), audit=events.append)
    result, server = await run_case(
        "anthropic:claude-sonnet-4-5", reply, calc, run_ctx, window=False, hybrid=True
    )

    await shows(desktop, calc, "84")
    assert result.outcome == "done" and result.answer == "12 × 7 = 84"
    tools = [e.data["tool"] for e in events if e.kind == "tool.result"]
    acted = [t for t in tools if t != "computer_view"]
    native = ["computer", "computer_call"] * 3  # the three native clicks (×, 7, =)
    assert acted[:10] == ["read_screen_ax", "perform", "perform", *native, "read_screen_ax"]
    assert set(acted[10:]) <= {"read_screen_ax"}  # reads again while the display catches up
    assert server.requests[0].body["tools"][0]["type"] == "computer_20250124"
    assert "the computer tool acts at pixel coordinates" in server.requests[0].body["system"]


async def test_cli_declines_a_safety_check_without_a_terminal_and_tells_the_model(
    apps: Apps, desktop: DesktopFacade, desktop_settings: Settings, tmp_path: Path
) -> None:
    calc = await open_calculator(apps, desktop)
    w, h = await desktop.screen_size()
    eyes: list[Eye] = []

    def script(req: Request, i: int) -> dict[str, Any]:
        if i == 0:
            eyes.append(Eye(calc, Rect(0, 0, w, h), image_of("openai", req.body), grid=False))
            return openai_batch("call_1", eyes[0], [CHECK])
        if i == 1:
            output, told = req.body["input"]
            assert output["call_id"] == "call_1" and output["acknowledged_safety_checks"] == []
            assert output["output"]["image_url"].startswith("data:image/png;base64,")
            assert told["content"][0]["text"].startswith(
                "Declined: computer call call_1 was not run (there is no terminal to ask). Do not "
                "retry it"
            )
            return openai_batch("call_2", eyes[0], [])
        return answer("openai", "The calculator shows 84.")

    home = tmp_path / "home"
    env = {
        **desktop_settings.environ,
        "DESKPILOT_HOME": str(home),
        "OPENAI_API_KEY": "test-key",
        "DESKPILOT_MODEL": "",
        "DESKPILOT_CONFIRM": "",
    }
    with ReplayServer(script) as server:
        args = [
            "run",
            "--native",
            "--model",
            "openai:gpt-5.4",
            "--base-url",
            server.url + "/v1",
            GOAL,
        ]
        # the CLI runs its own event loop: in a thread, so the desktop's loop stays free
        result = await asyncio.to_thread(
            CliRunner().invoke, main, args, env=env, catch_exceptions=False
        )
    assert server.errors == []
    assert result.exit_code == 0, result.output
    assert result.stdout == "The calculator shows 84.\n"
    assert "declined: no terminal to ask" in result.stderr
    assert "WARNING: safety check cu_sc_1 [malicious_instructions]" in result.stderr
    await shows(desktop, calc, "84")
    with AuditLog(home / "data" / "audit.sqlite3") as audit:
        assert audit.verify().ok
        (run,) = audit.list_runs()
        events = audit.run_events(run.id)
    answered = [e.data for e in events if e.kind == "confirm.answered"]
    assert answered == [
        {
            "tool": "computer_call",
            "call_id": "call_1",
            "approved": False,
            "by": "NativeTerminalApprover",
            "person": True,
        }
    ]
    calls = [e.data for e in events if e.kind == "tool.call" and e.data["tool"] == "computer_call"]
    assert [c["call_id"] for c in calls] == ["call_1", "call_2"]  # both reached the door as sent
    results = [
        e.data for e in events if e.kind == "tool.result" and e.data["tool"] == "computer_call"
    ]
    assert [r.get("refused") for r in results] == ["declined", None]
    assert all(
        not c.startswith("call_1.")
        for c in (e.data["call_id"] for e in events if e.kind == "tool.call")
    )
    assert sum(1 for e in events if e.kind == "tool.result" and e.images) == 3
    assert run.outcome == "done" and run.steps == 3
