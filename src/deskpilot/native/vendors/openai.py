"""OpenAI Responses API: the GA ``computer`` tool and the older ``computer_use_preview``.

Wire shapes: protocols.md §1. The GA tool is ``{"type": "computer"}`` and its ``computer_call``
items carry batched ``actions[]``; the preview tool declares a display size and its calls carry
one ``action``. Which one is used follows the model name, as in the Agents SDK: only
``computer-use-preview*`` gets the preview tool.

Each call is answered by a ``computer_call_output`` with a ``computer_screenshot`` (a data URL
or a ``file_id``) and the ``acknowledged_safety_checks`` a person approved. OpenAI outputs carry
no text, so a step failure, a decline or an untranslatable call is also told in a user message
right after the output. Coordinates are screenshot pixels; scroll deltas are pixels (converted
to wheel notches, 100 px each).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from deskpilot.native import keymap
from deskpilot.native.actions import (
    Action,
    Click,
    Drag,
    InvalidAction,
    KeyPress,
    Move,
    Screenshot,
    Scroll,
    TypeText,
    Wait,
)
from deskpilot.native.calls import (
    CallError,
    ComputerCall,
    ComputerFlowError,
    ComputerResult,
    FunctionCall,
    FunctionResult,
    Output,
    SafetyCheck,
    ScreenshotRef,
)
from deskpilot.native.scaling import Vendor, Viewport
from deskpilot.native.vendors.base import Turn, notches, translated
from deskpilot.tools.base import ToolSpec

BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "middle": "middle",
           "back": "back", "forward": "forward"}  # fmt: skip
DEFAULT_WAIT = 1.0  # seconds; the samples wait about 1-2 s for a bare "wait"


def is_preview_model(model: str) -> bool:
    return model.startswith("computer-use-preview")


def _xy(raw: Mapping[str, Any], viewport: Viewport) -> tuple[int, int]:
    x, y = raw.get("x"), raw.get("y")
    if not isinstance(x, int) or not isinstance(y, int):
        raise InvalidAction(f"{raw.get('type')}: x and y must be integers (got {x!r}, {y!r})")
    return viewport.to_target(x, y)


def translate_action(raw: Mapping[str, Any], viewport: Viewport, wait: float) -> list[Action]:
    """One OpenAI action → deskpilot actions (target pixels)."""
    kind = raw.get("type")
    mods = keymap.modifiers(raw.get("keys")) if kind != "keypress" else ()
    if kind in ("click", "double_click"):
        button = BUTTONS.get(str(raw.get("button", "left")))
        if button is None:
            raise InvalidAction(f"click: unknown button {raw.get('button')!r}")
        count = 2 if kind == "double_click" else 1
        return [Click(*_xy(raw, viewport), button=button, count=count,  # type: ignore[arg-type]
                      modifiers=mods)]  # fmt: skip
    if kind == "move":
        return [Move(*_xy(raw, viewport), modifiers=mods)]
    if kind == "drag":
        path = raw.get("path") or []
        pts = []
        for p in path:
            px, py = (p.get("x"), p.get("y")) if isinstance(p, Mapping) else tuple(p)
            pts.append(_xy({"type": "drag", "x": px, "y": py}, viewport))
        return [Drag(tuple(pts), modifiers=mods)]
    if kind == "keypress":
        return [KeyPress(keymap.keys(raw.get("keys")))]
    if kind == "type":
        return [TypeText(str(raw.get("text", "")))]
    if kind == "scroll":
        x, y = _xy(raw, viewport)
        dx = notches(viewport.length_to_target(int(raw.get("scroll_x") or 0), "x"))
        dy = notches(viewport.length_to_target(int(raw.get("scroll_y") or 0), "y"))
        return [Scroll(x, y, dx, dy, modifiers=mods)]
    if kind == "wait":
        return [Wait(wait)]
    if kind == "screenshot":
        return [Screenshot()]
    raise InvalidAction(f"unknown computer action type {kind!r}")


def parse_computer_call(
    item: Mapping[str, Any], viewport: Viewport, window: str | None = None,
    wait: float = DEFAULT_WAIT,
) -> ComputerCall:  # fmt: skip
    """A ``computer_call`` output item → a ComputerCall (``problem`` set if untranslatable)."""
    call_id = str(item.get("call_id") or "")
    raw = item.get("actions")
    if raw is None:
        raw = [item["action"]] if item.get("action") else []
    checks = tuple(SafetyCheck.from_dict(c) for c in item.get("pending_safety_checks") or ())
    actions, problem = translated(
        lambda: [a for r in raw for a in translate_action(r, viewport, wait)],
        f"Computer call {call_id} was not run",
    )
    if not actions and problem is None:
        problem = "the computer call has no actions"
    return ComputerCall(id=str(item.get("id") or call_id), call_id=call_id, actions=actions,
                        pending_safety_checks=checks, window=window, problem=problem)  # fmt: skip


def _screenshot_output(shot: ScreenshotRef) -> dict[str, Any]:
    if shot.file_id is not None:
        return {"type": "computer_screenshot", "file_id": shot.file_id}
    return {"type": "computer_screenshot", "image_url": shot.data_url()}


def _message(text: str, images: Sequence[ScreenshotRef] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
    content += [{"type": "input_image", "image_url": i.data_url()} for i in images]
    return {"type": "message", "role": "user", "content": content}


def render_outputs(outputs: Sequence[Output]) -> list[dict[str, Any]]:
    """Results (original call order) → ``input`` items for the next request."""
    items: list[dict[str, Any]] = []
    for out in outputs:
        if isinstance(out, ComputerResult):
            if out.screenshot is None:
                raise ComputerFlowError(
                    f"OpenAI needs a screenshot in the result of computer call {out.call_id}"
                )
            acks = [c.to_dict() for c in out.acknowledged_safety_checks]
            items.append(
                {
                    "type": "computer_call_output",
                    "call_id": out.call_id,
                    "output": _screenshot_output(out.screenshot),
                    "acknowledged_safety_checks": acks,
                }
            )
            if out.is_error or out.text:
                items.append(_message(f"Computer call {out.call_id}: {out.text}"))
        elif isinstance(out, FunctionResult):
            items.append({"type": "function_call_output", "call_id": out.call_id,
                          "output": out.output})  # fmt: skip
            if out.images:
                items.append(_message(f"Images from function call {out.call_id}:", out.images))
        elif isinstance(out, CallError) and not out.computer:
            items.append({"type": "function_call_output", "call_id": out.call_id,
                          "output": out.message})  # fmt: skip
        else:
            if out.screenshot is not None:  # declined or not run: the screen as it is
                items.append({"type": "computer_call_output", "call_id": out.call_id,
                              "output": _screenshot_output(out.screenshot),
                              "acknowledged_safety_checks": []})  # fmt: skip
            items.append(_message(out.message))
    return items


class OpenAIConversation:
    """A Responses API conversation chained with ``previous_response_id``."""

    vendor: Vendor = "openai"
    screenshot_every_call = True
    path = "/responses"  # under the base URL https://api.openai.com/v1

    def __init__(
        self,
        model: str,
        viewport: Viewport,
        *,
        window: str | None = None,
        functions: Sequence[ToolSpec] = (),
        instructions: str | None = None,
        wait_seconds: float = DEFAULT_WAIT,
    ) -> None:
        self.model = model
        self.viewport = viewport
        self.window = window
        self.functions = tuple(functions)
        self.instructions = instructions
        self.wait_seconds = wait_seconds
        self.preview = is_preview_model(model)
        self.previous_response_id: str | None = None

    def headers(self, api_key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"}

    def tools(self) -> list[dict[str, Any]]:
        if self.preview:
            computer: dict[str, Any] = {
                "type": "computer_use_preview",
                "display_width": self.viewport.image.width,
                "display_height": self.viewport.image.height,
                "environment": "linux",
            }
        else:
            computer = {"type": "computer"}
        funcs = [
            {"type": "function", "name": f.name, "description": f.description,
             "parameters": f.input_schema, "strict": False}
            for f in self.functions
        ]  # fmt: skip
        return [computer, *funcs]

    def _body(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": items, "tools": self.tools()}
        if self.preview:
            body["truncation"] = "auto"
        if self.instructions:
            body["instructions"] = self.instructions
        if self.previous_response_id:
            body["previous_response_id"] = self.previous_response_id
        return body

    def start(self, goal: str, screenshot: bytes | None) -> dict[str, Any]:
        self.previous_response_id = None
        content: list[dict[str, Any]] = [{"type": "input_text", "text": goal}]
        if screenshot is not None:
            content.append({"type": "input_image",
                            "image_url": ScreenshotRef(data=screenshot).data_url()})  # fmt: skip
        return self._body([{"type": "message", "role": "user", "content": content}])

    def parse(self, response: Mapping[str, Any]) -> Turn:
        self.previous_response_id = response.get("id") or self.previous_response_id
        turn = Turn()
        texts: list[str] = []
        for item in response.get("output") or []:
            kind = item.get("type")
            if kind == "computer_call":
                turn.items.append(parse_computer_call(item, self.viewport, self.window,
                                                      self.wait_seconds))  # fmt: skip
            elif kind == "function_call":
                raw = str(item.get("arguments") or "{}")
                try:
                    args = json.loads(raw)
                except ValueError:
                    args = None
                meta = {} if isinstance(args, dict) else {"raw_arguments": raw}
                if not item.get("call_id"):
                    raise ComputerFlowError("the model sent a function_call without a call_id")
                turn.items.append(FunctionCall(str(item["call_id"]), str(item.get("name")),
                                               args if isinstance(args, dict) else {},
                                               id=str(item.get("id", "")), meta=meta))  # fmt: skip
            elif kind == "message":
                texts += [c.get("text", "") for c in item.get("content") or []
                          if c.get("type") == "output_text"]  # fmt: skip
        turn.text = "\n".join(t for t in texts if t)
        return turn

    def reply(self, outputs: Sequence[Output]) -> dict[str, Any]:
        return self._body(render_outputs(outputs))

    def restart(self) -> None:
        self.previous_response_id = None

    def state(self) -> dict[str, Any]:
        return {"previous_response_id": self.previous_response_id}

    def load(self, state: Mapping[str, Any]) -> None:
        self.previous_response_id = state.get("previous_response_id")
