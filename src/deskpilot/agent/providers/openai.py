"""OpenAI's Responses API (``POST /v1/responses``): function calling and the computer tool.

**Function calling.** Native tools are ``{"type": "function", name, description,
parameters}``; the model answers with ``function_call`` items (arguments as a JSON string) and
gets ``function_call_output`` items back, whose ``output`` may be a list of ``input_text`` /
``input_image`` parts, so screenshots travel with their result. ``store`` is false: every
request carries the whole conversation (no ``previous_response_id``), which is what lets the
provider change mid-run. The Responses API has no stop sequences; under the text protocol the
parser alone cuts forged result markers.

**Computer use** (:class:`OpenAIComputer`; wire shapes: OpenAI's computer-use guide). The GA tool is
``{"type": "computer"}`` and its ``computer_call`` items carry batched ``actions[]``; the preview
tool declares a display size and its calls carry one ``action``. Which one is used follows the
model name, as in the Agents SDK: only ``computer-use-preview*`` gets the preview tool. Turns
are chained with ``previous_response_id``. Each call is answered by a
``computer_call_output`` with a ``computer_screenshot`` (a data URL or a ``file_id``) and the
``acknowledged_safety_checks`` a person approved. Outputs carry no text, so a step failure, a
decline or an untranslatable call is also told in a user message right after the output.
Coordinates are screenshot pixels (the screen as it is, scaled down only to fit 1920×1200);
scroll deltas are pixels (converted to wheel notches, 100 px each).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from deskpilot.agent import textproto
from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    Message,
    ToolCall,
    ToolProtocol,
    data_url,
)
from deskpilot.agent.providers import base
from deskpilot.agent.providers.base import Provider, Request
from deskpilot.events import Image
from deskpilot.native import actions as act
from deskpilot.native import calls, keymap
from deskpilot.native.scaling import Viewport, fit_within, pixel_viewport
from deskpilot.native.wire import Turn, WireSetup, int_counts, notches, translated
from deskpilot.tools.base import ToolSpec

BUTTONS = {
    "left": "left",
    "right": "right",
    "wheel": "middle",
    "middle": "middle",
    "back": "back",
    "forward": "forward",
}
DEFAULT_WAIT = 1.0  # seconds; the samples wait about 1-2 s for a bare "wait"
MAX_IMAGE = (1920, 1200)


# -- function calling ----------------------------------------------------------------------------


def _image(image: Image) -> dict[str, Any]:
    return {"type": "input_image", "image_url": data_url(image)}


def _user(text: str, images: Sequence[Image]) -> dict[str, Any]:
    parts = [{"type": "input_text", "text": text}] if text else []
    return {"role": "user", "content": parts + [_image(i) for i in images]}


def _function(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.input_schema,
        "strict": False,
    }


def _history(messages: Sequence[Message], protocol: ToolProtocol) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "user":
            items.append(_user(m.text, m.images))
        elif m.role == "assistant" and protocol == "text":
            items.append({"role": "assistant", "content": textproto.render_assistant(m)})
        elif m.role == "assistant":
            if m.text:
                items.append({"role": "assistant", "content": m.text})
            items += [
                {
                    "type": "function_call",
                    "call_id": base.safe_id(c.id),
                    "name": base.safe_name(c.name),
                    "arguments": json.dumps(c.arguments, ensure_ascii=False),
                }
                for c in m.tool_calls
            ]
        elif protocol == "text":
            items.append(
                _user(textproto.render_results(m.results), [i for r in m.results for i in r.images])
            )
        else:
            for r in m.results:
                text = base.result_text(r.text, r.is_error) or "(no output)"
                output: str | list[dict[str, Any]] = text
                if r.images:
                    output = [{"type": "input_text", "text": text}, *map(_image, r.images)]
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": base.safe_id(r.call_id),
                        "output": output,
                    }
                )
    return items


def _tool_call(item: Mapping[str, Any]) -> ToolCall:
    name = str(item.get("name", ""))
    raw = str(item.get("arguments") or "")
    args, error = base.args_from_json(name, raw)
    return ToolCall(
        str(item.get("call_id") or item.get("id") or ""), name, args, error=error, raw=raw
    )


# -- computer use ----------------------------------------------------------------------------------


def is_preview_model(model: str) -> bool:
    return model.startswith("computer-use-preview")


def _xy(raw: Mapping[str, Any], viewport: Viewport) -> tuple[int, int]:
    x, y = raw.get("x"), raw.get("y")
    if not isinstance(x, int) or not isinstance(y, int):
        raise act.InvalidAction(f"{raw.get('type')}: x and y must be integers (got {x!r}, {y!r})")
    return viewport.to_target(x, y)


def translate_action(raw: Mapping[str, Any], viewport: Viewport, wait: float) -> list[act.Action]:
    """One OpenAI action → deskpilot actions (target pixels)."""
    kind = raw.get("type")
    mods = keymap.modifiers(raw.get("keys")) if kind != "keypress" else ()
    if kind in ("click", "double_click"):
        button = BUTTONS.get(str(raw.get("button", "left")))
        if button is None:
            raise act.InvalidAction(f"click: unknown button {raw.get('button')!r}")
        count = 2 if kind == "double_click" else 1
        return [
            act.Click(
                *_xy(raw, viewport),
                button=button,  # type: ignore[arg-type]
                count=count,
                modifiers=mods,
            )
        ]
    if kind == "move":
        return [act.Move(*_xy(raw, viewport), modifiers=mods)]
    if kind == "drag":
        pts = []
        for p in raw.get("path") or []:
            px, py = (p.get("x"), p.get("y")) if isinstance(p, Mapping) else tuple(p)
            pts.append(_xy({"type": "drag", "x": px, "y": py}, viewport))
        return [act.Drag(tuple(pts), modifiers=mods)]
    if kind == "keypress":
        return [act.KeyPress(keymap.keys(raw.get("keys")))]
    if kind == "type":
        return [act.TypeText(str(raw.get("text", "")))]
    if kind == "scroll":
        x, y = _xy(raw, viewport)
        dx = notches(viewport.length_to_target(int(raw.get("scroll_x") or 0), "x"))
        dy = notches(viewport.length_to_target(int(raw.get("scroll_y") or 0), "y"))
        return [act.Scroll(x, y, dx, dy, modifiers=mods)]
    if kind == "wait":
        return [act.Wait(wait)]
    if kind == "screenshot":
        return [act.Screenshot()]
    raise act.InvalidAction(f"unknown computer action type {kind!r}")


def parse_computer_call(
    item: Mapping[str, Any],
    viewport: Viewport,
    window: str | None = None,
    wait: float = DEFAULT_WAIT,
) -> calls.ComputerCall:
    """A ``computer_call`` output item → a ComputerCall (``problem`` set if untranslatable)."""
    call_id = str(item.get("call_id") or "")
    raw = item.get("actions")
    if raw is None:
        raw = [item["action"]] if item.get("action") else []
    checks = tuple(calls.SafetyCheck.from_dict(c) for c in item.get("pending_safety_checks") or ())
    actions, problem = translated(
        lambda: [a for r in raw for a in translate_action(r, viewport, wait)],
        f"Computer call {call_id} was not run",
    )
    if not actions and problem is None:
        problem = "the computer call has no actions"
    return calls.ComputerCall(
        id=str(item.get("id") or call_id),
        call_id=call_id,
        actions=actions,
        pending_safety_checks=checks,
        window=window,
        problem=problem,
    )


def _screenshot_output(shot: calls.ScreenshotRef) -> dict[str, Any]:
    if shot.file_id is not None:
        return {"type": "computer_screenshot", "file_id": shot.file_id}
    return {"type": "computer_screenshot", "image_url": shot.data_url()}


def _message(text: str, images: Sequence[calls.ScreenshotRef] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
    content += [{"type": "input_image", "image_url": i.data_url()} for i in images]
    return {"type": "message", "role": "user", "content": content}


def render_outputs(outputs: Sequence[calls.Output]) -> list[dict[str, Any]]:
    """Results (original call order) → ``input`` items for the next request."""
    items: list[dict[str, Any]] = []
    for out in outputs:
        if isinstance(out, calls.ComputerResult):
            if out.screenshot is None:
                raise calls.ComputerFlowError(
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
        elif isinstance(out, calls.FunctionResult):
            items.append(
                {"type": "function_call_output", "call_id": out.call_id, "output": out.output}
            )
            if out.images:
                items.append(_message(f"Images from function call {out.call_id}:", out.images))
        elif isinstance(out, calls.CallError) and not out.computer:
            items.append(
                {"type": "function_call_output", "call_id": out.call_id, "output": out.message}
            )
        else:
            if out.screenshot is not None:  # declined or not run: the screen as it is
                items.append(
                    {
                        "type": "computer_call_output",
                        "call_id": out.call_id,
                        "output": _screenshot_output(out.screenshot),
                        "acknowledged_safety_checks": [],
                    }
                )
            items.append(_message(out.message))
    return items


class OpenAIComputer:
    """A Responses API computer-use conversation chained with ``previous_response_id``."""

    vendor = "openai"
    screenshot_every_call = True
    tools_off: ClassVar[Mapping[str, Any]] = {"tool_choice": "none"}

    def __init__(self, setup: WireSetup, *, wait_seconds: float = DEFAULT_WAIT) -> None:
        self.setup = setup
        self.wait_seconds = wait_seconds
        self.preview = is_preview_model(setup.model)
        self.previous_response_id: str | None = None
        self._input: list[dict[str, Any]] = []  # what the next request sends

    def headers(self) -> dict[str, str]:
        return {}

    def tools(self) -> list[dict[str, Any]]:
        if self.preview:
            image = self.setup.viewport.image
            computer: dict[str, Any] = {
                "type": "computer_use_preview",
                "display_width": image.width,
                "display_height": image.height,
                "environment": "linux",
            }
        else:
            computer = {"type": "computer"}
        return [computer, *map(_function, self.setup.functions)]

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.setup.model,
            "input": list(self._input),
            "tools": self.tools(),
        }
        if self.preview:
            body["truncation"] = "auto"
        if self.setup.instructions:
            body["instructions"] = self.setup.instructions
        if self.previous_response_id:
            body["previous_response_id"] = self.previous_response_id
        return body

    def say(self, text: str, screenshot: bytes | None = None) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
        if screenshot is not None:
            content.append(
                {
                    "type": "input_image",
                    "image_url": calls.ScreenshotRef(data=screenshot).data_url(),
                }
            )
        self._input.append({"type": "message", "role": "user", "content": content})
        return self.body()

    def parse(self, response: Mapping[str, Any]) -> Turn:
        self.previous_response_id = response.get("id") or self.previous_response_id
        self._input = []
        turn = Turn(usage=int_counts(response.get("usage")))
        texts: list[str] = []
        for item in response.get("output") or []:
            kind = item.get("type")
            if kind == "computer_call":
                turn.items.append(
                    parse_computer_call(
                        item, self.setup.viewport, self.setup.window, self.wait_seconds
                    )
                )
            elif kind == "function_call":
                raw = str(item.get("arguments") or "{}")
                try:
                    args = json.loads(raw)
                except ValueError:
                    args = None
                meta = {} if isinstance(args, dict) else {"raw_arguments": raw}
                if not item.get("call_id"):
                    raise calls.ComputerFlowError(
                        "the model sent a function_call without a call_id"
                    )
                turn.items.append(
                    calls.FunctionCall(
                        str(item["call_id"]),
                        str(item.get("name")),
                        args if isinstance(args, dict) else {},
                        id=str(item.get("id", "")),
                        meta=meta,
                    )
                )
            elif kind == "message":
                texts += [
                    c.get("text", "")
                    for c in item.get("content") or []
                    if c.get("type") == "output_text"
                ]
        turn.text = "\n".join(t for t in texts if t)
        return turn

    def reply(self, outputs: Sequence[calls.Output]) -> dict[str, Any]:
        self._input = render_outputs(outputs)
        return self.body()

    def pruned(self, body: Mapping[str, Any], keep: int) -> dict[str, Any]:
        # chained turns: a request carries only the newest outputs, nothing to prune
        return dict(body)

    def without_calls(self, response: Mapping[str, Any]) -> dict[str, Any]:
        kinds = ("computer_call", "function_call")
        output = [i for i in response.get("output") or [] if i.get("type") not in kinds]
        return {**response, "output": output}

    def restart(self) -> None:
        self.previous_response_id = None
        self._input = []

    def state(self) -> dict[str, Any]:
        return {"previous_response_id": self.previous_response_id}

    def load(self, state: Mapping[str, Any]) -> None:
        self.previous_response_id = state.get("previous_response_id")


# -- the adapter -----------------------------------------------------------------------------------


class OpenAIProvider(Provider):
    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    replay_model = "gpt-5.4"

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}", "content-type": "application/json"}

    def endpoint(self) -> str:
        return f"{self.base_url}/responses"

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        body = {
            "model": self.model,
            "input": _history(self.messages(conversation), protocol),
            "store": False,
            "max_output_tokens": self.max_tokens,
            **base.present(
                instructions=self.system_prompt(conversation, tools, protocol),
                tools=[_function(t) for t in tools] if protocol == "native" else None,
            ),
        }
        return self.endpoint(), self.headers(), body

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        output = base.reply_items(data, "output", self.name)
        parts = [p for i in output if i.get("type") == "message" for p in i.get("content") or []]
        texts = [
            str(p.get("text") or p.get("refusal") or "")
            for p in parts
            if isinstance(p, dict) and p.get("type") in ("output_text", "refusal")
        ]
        tool_calls = [_tool_call(i) for i in output if i.get("type") == "function_call"]
        status = str(data.get("status") or "")
        details = data.get("incomplete_details")
        if status == "incomplete" and isinstance(details, dict):
            status = f"incomplete: {details.get('reason', '')}"
        return self.turn(
            "".join(texts), protocol, calls=tool_calls, stop_reason=status, usage=data.get("usage")
        )

    # -- computer use --------------------------------------------------------------------------

    @classmethod
    def speaks_computer(cls, model: str) -> bool:
        """``computer-use-preview*``, and GPT-5.4 and later."""
        if is_preview_model(model):
            return True
        m = re.match(r"gpt-(\d+)(?:\.(\d+))?", model)
        return m is not None and (int(m.group(1)), int(m.group(2) or 0)) >= (5, 4)

    def computer_viewport(self, width: int, height: int) -> Viewport:
        # the screen as it is, scaled down only to fit 1920×1200: typical screens pass
        # through unresampled, bigger ones stay within the image limits
        return pixel_viewport(width, height, fit_within(width, height, *MAX_IMAGE))

    def computer_wire(self, setup: WireSetup) -> OpenAIComputer:
        return OpenAIComputer(setup)
