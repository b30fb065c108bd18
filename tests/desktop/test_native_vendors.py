"""Each vendor's native computer tool, end to end on the sandbox desktop.

A local HTTP server (tests/desktop/native_server.py) stands in for the vendor's API and replays
computer calls in the vendor's recorded wire format; deskpilot reaches it through the vendor's
adapter and the production HTTP client, in a native run. Like a real model, it finds the
calculator's buttons in the screenshot deskpilot sent it (their positions come from the real
window's AT-SPI snapshot, scaled into the screenshot's space) and clicks 7 × 6 =. deskpilot
runs the calls on gnome-calculator and answers in the vendor's format; the calculator must show
42 and every request must have the vendor's shape.
"""

from __future__ import annotations

import base64
import dataclasses
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from PIL import Image

from deskpilot._wait import async_wait_for
from deskpilot.agent.computer import ComputerCalls
from deskpilot.agent.loop import RunResult
from deskpilot.agent.native_run import run_native_task
from deskpilot.desktop.base import Rect, WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.native.scaling import Viewport
from deskpilot.policy import ApprovalRequest, CallbackApprover
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps
from tests.desktop.native_server import ReplayServer, Request, image_of, vendor_provider
from tests.wires import anthropic_message, openai_computer_reply

pytestmark = pytest.mark.asyncio(loop_scope="session")

KEYS = ("7", "×", "6", "=")
CHECK = {"id": "cu_sc_1", "code": "malicious_instructions", "message": "Review before clicking."}


@dataclass
class Calc:
    window: WindowInfo
    buttons: dict[str, tuple[int, int]]  # centres, root pixels, from AT-SPI
    display: tuple[str, str]  # the display's accessible key
    display_rect: Rect


async def open_calculator(apps: Apps, desktop: DesktopFacade) -> Calc:
    window = await apps.open("Calculator")
    snap = await desktop.snapshot(window)
    buttons = {
        n.name.split(" ")[0]: n.bounds.center
        for n in snap.nodes()
        if n.role == "push-button" and n.bounds is not None
    }
    display = next(n for n in snap.nodes() if n.name == "GtkSourceView")
    assert display.bounds is not None and set(KEYS) <= set(buttons)
    return Calc(window, buttons, display.key, display.bounds)


async def shows(desktop: DesktopFacade, calc: Calc, value: str) -> None:
    async def check() -> bool:
        return (await desktop.read_text(calc.display) or "").strip() == value

    await async_wait_for(check, timeout=10, what=f"the calculator to show {value}")


class Eye:
    """A model's view: where each button is in the screenshot (or on Gemini's grid)."""

    def __init__(self, calc: Calc, target: Rect, image: Image.Image, grid: bool) -> None:
        self.calc, self.target, self.size, self.grid = calc, target, image.size, grid

    def at(self, key: str) -> tuple[int, int]:
        return self.point(*self.calc.buttons[key])

    def point(self, x: int, y: int) -> tuple[int, int]:
        rx, ry = x - self.target.x, y - self.target.y
        if self.grid:
            return int(rx / self.target.width * 1000), int(ry / self.target.height * 1000)
        return (
            int(rx * self.size[0] / self.target.width),
            int(ry * self.size[1] / self.target.height),
        )


Reply = Callable[[Request, int, Eye], dict[str, Any]]


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def openai_ga(req: Request, i: int, eye: Eye) -> dict[str, Any]:
    if i == 0:
        actions = [
            {"type": "click", "button": "left", "x": x, "y": y} for x, y in map(eye.at, KEYS)
        ]
        return openai_computer_reply(actions, [CHECK])
    return {"id": "resp_2", "output": [_message("The calculator shows 42.")]}


def openai_preview(req: Request, i: int, eye: Eye) -> dict[str, Any]:
    if i < len(KEYS):
        x, y = eye.at(KEYS[i])
        return {
            "id": f"resp_{i + 1}",
            "output": [
                {
                    "type": "computer_call",
                    "id": f"cu_{i + 1}",
                    "call_id": f"call_{i + 1}",
                    "status": "completed",
                    "pending_safety_checks": [],
                    "action": {"type": "click", "button": "left", "x": x, "y": y},
                }
            ],
        }
    return {"id": "resp_9", "output": [_message("42")]}


def _tool_use(n: int, action: str, toolset: bool, **inp: Any) -> dict[str, Any]:
    if toolset:
        return {
            "type": "tool_use",
            "id": f"toolu_{n}",
            "toolset_name": "computer",
            "name": action,
            "input": inp,
        }
    return {
        "type": "tool_use",
        "id": f"toolu_{n}",
        "name": "computer",
        "input": {"action": action, **inp},
    }


def anthropic(toolset: bool, zoom: bool) -> Reply:
    def reply(req: Request, i: int, eye: Eye) -> dict[str, Any]:
        if i == 0:
            uses = [
                _tool_use(n, "left_click", toolset, coordinate=list(eye.at(k)))
                for n, k in enumerate(KEYS, 1)
            ]
            return anthropic_message({"type": "text", "text": "Clicking 7 × 6 =."}, *uses)
        if i == 1 and zoom:
            r = eye.calc.display_rect
            x0, y0 = eye.point(r.x, r.y)
            x1, y1 = eye.point(r.x + r.width, r.y + r.height)
            return anthropic_message(_tool_use(9, "zoom", toolset, region=[x0, y0, x1, y1]), n=2)
        return anthropic_message({"type": "text", "text": "It shows 42."}, n=3)

    return reply


def gemini(current: bool) -> Reply:
    def reply(req: Request, i: int, eye: Eye) -> dict[str, Any]:
        if i == 0:
            name = "click" if current else "click_at"
            parts: list[dict[str, Any]] = [{"text": "I will click 7 × 6 =."}]
            for n, key in enumerate(KEYS, 1):
                x, y = eye.at(key)
                call: dict[str, Any] = {"name": name, "args": {"x": x, "y": y}}
                if current:
                    call["id"] = f"fc-{n}"
                if current and key == "=":
                    call["args"]["safety_decision"] = {
                        "decision": "require_confirmation",
                        "explanation": "Confirm the result?",
                    }
                parts.append({"functionCall": call})
            return {
                "candidates": [
                    {"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}
                ]
            }
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": "42"}]}}]}

    return reply


@dataclass(frozen=True)
class Case:
    vendor: str
    model: str
    reply: Reply
    on_window: bool = False


CASES = {
    "openai-computer": Case("openai", "gpt-5.5", openai_ga),
    "openai-preview": Case("openai", "computer-use-preview", openai_preview),
    "anthropic-20250124": Case("anthropic", "claude-sonnet-4-5", anthropic(False, False)),
    "anthropic-20251124-zoom": Case("anthropic", "claude-opus-4-6", anthropic(False, True)),
    "anthropic-toolset-window": Case(
        "anthropic", "claude-opus-5-5", anthropic(True, False), on_window=True
    ),
    "gemini-legacy": Case("gemini", "gemini-2.5-computer-use-preview-10-2025", gemini(False)),
    "gemini-3.5-window": Case("gemini", "gemini-3.5-flash", gemini(True), on_window=True),
}


async def play(
    case: Case, calc: Calc, ctx: ToolContext, asked: list[ApprovalRequest]
) -> tuple[RunResult, ReplayServer, Viewport]:
    desktop = ctx.desktop
    window = calc.window.stable_id if case.on_window else None
    w, h = await desktop.screen_size()
    target = calc.window.geometry if case.on_window else Rect(0, 0, w, h)
    eyes: list[Eye] = []

    def script(req: Request, i: int) -> dict[str, Any]:
        if i == 0:
            eyes.append(
                Eye(calc, target, image_of(case.vendor, req.body), grid=case.vendor == "gemini")
            )
        return case.reply(req, i, eyes[0])

    # --confirm all: every computer call is shown to the approver (its actions are covered)
    person = CallbackApprover(lambda r: asked.append(r) or True, person=True)
    ctx = dataclasses.replace(
        ctx, approver=person, settings=ctx.settings.with_overrides(confirm="all")
    )
    with ReplayServer(script) as server:
        async with vendor_provider(f"{case.vendor}:{case.model}", server) as provider:
            result = await run_native_task(
                "Compute 7 × 6 in the calculator.", window, provider=provider, ctx=ctx
            )
    assert server.errors == []
    assert isinstance(result.acting, ComputerCalls) and result.acting.wire is not None
    return result, server, result.acting.wire.setup.viewport


@pytest.mark.parametrize("name", list(CASES))
async def test_a_replayed_model_computes_42_on_the_calculator(
    name: str, apps: Apps, desktop: DesktopFacade, ctx: ToolContext
) -> None:
    case = CASES[name]
    calc = await open_calculator(apps, desktop)
    asked: list[ApprovalRequest] = []
    result, server, vp = await play(case, calc, ctx, asked)
    await shows(desktop, calc, "42")
    assert result.outcome == "done" and "42" in result.answer, result.answer
    first = image_of(case.vendor, server.requests[0].body)
    assert first.size == (vp.image.width, vp.image.height)
    if case.on_window:
        g = calc.window.geometry
        assert (vp.target.width, vp.target.height) == (g.width, g.height)
    CHECKS[case.vendor](case, server.requests, vp.image.width, vp.image.height, asked)


def check_openai(
    case: Case, reqs: list[Request], w: int, h: int, asked: list[ApprovalRequest]
) -> None:
    assert all(r.path == "/v1/responses" for r in reqs)
    assert reqs[0].headers["authorization"] == "Bearer test-key"
    if case.model == "gpt-5.5":
        assert reqs[0].body["tools"] == [{"type": "computer"}]
        assert len(reqs) == 2 and len(asked) == 1
        assert asked[0].details[-1].startswith("WARNING: safety check cu_sc_1")
        (out,) = reqs[1].body["input"]
        assert out["call_id"] == "call_1" and out["acknowledged_safety_checks"] == [CHECK]
    else:
        preview = {
            "type": "computer_use_preview",
            "display_width": w,
            "display_height": h,
            "environment": "linux",
        }
        assert reqs[0].body["tools"][0] == preview
        assert reqs[0].body["truncation"] == "auto"
        assert len(reqs) == 5 and len(asked) == 4
        for n, req in enumerate(reqs[1:], 1):
            (out,) = req.body["input"]
            assert req.body["previous_response_id"] == f"resp_{n}"
            assert out["call_id"] == f"call_{n}" and out["acknowledged_safety_checks"] == []
    for req in reqs[1:]:
        shot = req.body["input"][0]["output"]
        assert shot["type"] == "computer_screenshot"
        assert shot["image_url"].startswith("data:image/png;base64,")


def check_anthropic(
    case: Case, reqs: list[Request], w: int, h: int, asked: list[ApprovalRequest]
) -> None:
    assert all(r.path == "/v1/messages" for r in reqs)
    assert reqs[0].headers["x-api-key"] == "test-key"
    toolset = case.model == "claude-opus-5-5"
    if toolset:
        assert reqs[0].body["tools"] == [{"type": "computer_toolset_20260801"}]
        assert "anthropic-beta" not in reqs[0].headers
    else:
        decl = reqs[0].body["tools"][0]
        assert (decl["display_width_px"], decl["display_height_px"]) == (w, h)
        assert reqs[0].headers["anthropic-beta"].startswith("computer-use-2025-")
    results = reqs[1].body["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]
    assert not any(r["is_error"] for r in results) and len(asked) >= 4
    assert all(("toolset_name" in r) == toolset for r in results)
    assert results[-1]["content"][-1]["type"] == "image"  # the turn's screenshot, once
    assert all(r["content"] == [{"type": "text", "text": "Done."}] for r in results[:-1])
    if case.model == "claude-opus-4-6":
        zoomed = reqs[2].body["messages"][-1]["content"][0]["content"]
        data = base64.b64decode(zoomed[0]["source"]["data"])
        assert Image.open(io.BytesIO(data)).size[0] >= 300  # the display, at full resolution


def check_gemini(
    case: Case, reqs: list[Request], w: int, h: int, asked: list[ApprovalRequest]
) -> None:
    assert reqs[0].path == f"/v1beta/models/{case.model}:generateContent"
    assert reqs[0].headers["x-goog-api-key"] == "test-key"
    responses = [p["functionResponse"] for p in reqs[1].body["contents"][-1]["parts"]]
    assert [r["name"] for r in responses] == ["click" if "3.5" in case.model else "click_at"] * 4
    assert "parts" in responses[-1] and all("parts" not in r for r in responses[:-1])
    if "3.5" in case.model:
        assert [r["id"] for r in responses] == ["fc-1", "fc-2", "fc-3", "fc-4"]
        assert responses[-1]["response"]["safety_acknowledgement"] == "true"
        assert all("safety_acknowledgement" not in r["response"] for r in responses[:-1])
        assert asked[-1].details[-1] == (
            "WARNING: safety check fc-4:safety_decision [require_confirmation]: "
            '"Confirm the result?"'
        )


CHECKS = {"openai": check_openai, "anthropic": check_anthropic, "gemini": check_gemini}
