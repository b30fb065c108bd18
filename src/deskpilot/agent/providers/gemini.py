"""Google Gemini ``generateContent`` (``POST {base}/models/{model}:generateContent``):
function calling and computer use.

**Function calling.** Native tools are ``functionDeclarations`` (their schemas reduced to the
OpenAPI subset Gemini takes: ``$ref`` inlined, ``additionalProperties`` dropped); the model
answers with ``functionCall`` parts and gets ``functionResponse`` parts back, followed by
``inlineData`` images. Gemini 3 models sign their function calls
(``thoughtSignature``); signatures are kept on the neutral call and echoed back, and calls
written by another provider carry Google's documented placeholder signature, so a conversation
can move to Gemini midway. A ``MALFORMED_FUNCTION_CALL`` reply is asked again, twice.

**Computer use** (:class:`GeminiComputer`; Gemini's computer-use docs, REST JSON, camelCase;
snake_case is accepted on input). The model calls predefined functions whose ``x``/``y`` are
on a 1000×1000 grid (the image fits the reference 1440×900); deskpilot maps them to target
pixels with the grid :class:`~deskpilot.native.scaling.Viewport`. Legacy names (``click_at``,
``type_text_at``, ``key_combination``, ...) serve the 2.5 / 3.x previews; the 3.5 names
(``click``, ``hotkey``, ``press_key``, ``take_screenshot``, ...) serve newer models — both are
understood whatever the model. A ``safety_decision`` of ``require_confirmation`` inside a
call's args becomes a pending safety check; after a person approves, the function response
carries ``"safety_acknowledgement": "true"``. Browser-only functions (``open_web_browser``,
``search``, ``navigate``) are excluded from the declaration and refused if called;
``go_back``/``go_forward`` press Alt+Left/Right.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from deskpilot.agent import textproto
from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    Message,
    ToolCall,
    ToolProtocol,
    new_call_id,
)
from deskpilot.agent.providers import base
from deskpilot.agent.providers.base import Provider, Request
from deskpilot.errors import ProviderError
from deskpilot.events import Image
from deskpilot.native import actions as act
from deskpilot.native import calls, keymap
from deskpilot.native.scaling import Viewport, fit_within, grid_viewport
from deskpilot.native.wire import OMITTED_IMAGE, Turn, WireSetup, int_counts, notches, translated
from deskpilot.native.wire import b64 as b64_bytes
from deskpilot.tools.base import ToolSpec

GRID = 1000
MAX_IMAGE = (1440, 900)

# -- function calling ----------------------------------------------------------------------------

#: Google's documented stand-in for calls that no Gemini model signed (other providers' calls).
FOREIGN_SIGNATURE = "skip_thought_signature_validator"
_SCHEMA_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
    }
)


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema → Gemini's Schema subset (refs inlined, unsupported keywords dropped)."""
    defs = schema.get("$defs", {})

    def walk(node: Any, depth: int = 0) -> Any:
        if not isinstance(node, dict) or depth > 20:
            return node
        if "$ref" in node:
            target = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}}, depth + 1)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key not in _SCHEMA_KEYS:
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {k: walk(v, depth + 1) for k, v in value.items()}
            elif key == "items":
                out[key] = walk(value, depth + 1)
            elif key == "anyOf" and isinstance(value, list):
                options = [walk(v, depth + 1) for v in value if v != {"type": "null"}]
                if len(options) < len(value):
                    out["nullable"] = True
                if len(options) == 1:
                    out.update(options[0])
                else:
                    out[key] = options
            else:
                out[key] = value
        return out

    result: dict[str, Any] = walk(schema)
    return result


def _image(image: Image) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.mime, "data": b64_bytes(image.data)}}


def _declaration(spec: ToolSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters": gemini_schema(spec.input_schema),
    }


def _contents(history: Sequence[Message], protocol: ToolProtocol) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        base.append_turn(contents, role, "parts", parts or [{"text": "(empty)"}])

    for m in history:
        if m.role == "user":
            add("user", ([{"text": m.text}] if m.text else []) + [_image(i) for i in m.images])
        elif m.role == "assistant" and protocol == "text":
            add("model", [{"text": textproto.render_assistant(m) or "(empty)"}])
        elif m.role == "assistant":
            parts: list[dict[str, Any]] = [{"text": m.text}] if m.text else []
            for index, call in enumerate(m.tool_calls):
                part: dict[str, Any] = {
                    "functionCall": {"name": base.safe_name(call.name), "args": call.arguments}
                }
                signature = call.extra.get("gemini", {}).get("thoughtSignature")
                if signature or index == 0:
                    part["thoughtSignature"] = signature or FOREIGN_SIGNATURE
                parts.append(part)
            add("model", parts)
        elif protocol == "text":
            images = [_image(i) for r in m.results for i in r.images]
            add("user", [{"text": textproto.render_results(m.results)}, *images])
        else:
            responses = [
                {
                    "functionResponse": {
                        "name": base.safe_name(r.name),
                        "response": {
                            "error" if r.is_error else "output": base.result_text(
                                r.text, r.is_error
                            )
                        },
                    }
                }
                for r in m.results
            ]
            add("user", responses + [_image(i) for r in m.results for i in r.images])
    return contents


# -- computer use ----------------------------------------------------------------------------------

LEGACY = frozenset(
    {
        "open_web_browser",
        "click_at",
        "hover_at",
        "type_text_at",
        "scroll_document",
        "scroll_at",
        "wait_5_seconds",
        "go_back",
        "go_forward",
        "search",
        "navigate",
        "key_combination",
        "drag_and_drop",
    }
)
CURRENT = frozenset(
    {
        "click",
        "double_click",
        "triple_click",
        "middle_click",
        "right_click",
        "mouse_down",
        "mouse_up",
        "move",
        "type",
        "drag_and_drop",
        "wait",
        "press_key",
        "key_down",
        "key_up",
        "hotkey",
        "take_screenshot",
        "scroll",
        "go_back",
        "go_forward",
        "navigate",
    }
)
COMPUTER_FUNCTIONS = LEGACY | CURRENT
BROWSER_ONLY = ("open_web_browser", "search", "navigate")
LEGACY_MODELS = ("gemini-2.5-computer-use", "gemini-3-flash", "gemini-3.1-pro")
CLICKS = {
    "click_at": ("left", 1),
    "click": ("left", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
    "middle_click": ("middle", 1),
    "right_click": ("right", 1),
}
DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
DOCUMENT_SCROLL_NOTCHES = 5
DEFAULT_MAGNITUDE = 800  # on the grid, as in the reference implementation


def is_legacy_model(model: str) -> bool:
    return any(model.startswith(p) for p in LEGACY_MODELS)


def _xy(
    args: Mapping[str, Any], viewport: Viewport, kx: str = "x", ky: str = "y"
) -> tuple[int, int]:
    x, y = args.get(kx), args.get(ky)
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    if isinstance(y, float) and y.is_integer():
        y = int(y)
    if not isinstance(x, int) or not isinstance(y, int):
        raise act.InvalidAction(f"{kx} and {ky} must be integers on the 0-999 grid")
    return viewport.to_target(x, y)


def _scroll(
    args: Mapping[str, Any], viewport: Viewport, at: tuple[int, int], default: int | None
) -> act.Scroll:
    direction = DIRECTIONS.get(str(args.get("direction")))
    if direction is None:
        raise act.InvalidAction("direction must be up, down, left or right")
    if default is None:
        count = DOCUMENT_SCROLL_NOTCHES
    else:
        magnitude = int(args.get("magnitude", default))
        axis: Literal["x", "y"] = "x" if direction[0] else "y"
        count = abs(notches(viewport.length_to_target(magnitude, axis))) or 1
    return act.Scroll(at[0], at[1], direction[0] * count, direction[1] * count)


def translate_call(name: str, args: Mapping[str, Any], viewport: Viewport) -> list[act.Action]:
    """One predefined function call → deskpilot actions (target pixels)."""
    if name in CLICKS:
        button, count = CLICKS[name]
        return [act.Click(*_xy(args, viewport), button=button, count=count)]  # type: ignore[arg-type]
    if name in ("hover_at", "move"):
        return [act.Move(*_xy(args, viewport))]
    if name in ("mouse_down", "mouse_up"):
        return [(act.MouseDown if name == "mouse_down" else act.MouseUp)(*_xy(args, viewport))]
    if name in ("type_text_at", "type"):
        out: list[act.Action] = []
        if name == "type_text_at":
            out.append(act.Click(*_xy(args, viewport)))
            if args.get("clear_before_typing", True):
                out += [act.KeyPress(("Control_L", "a")), act.KeyPress(("BackSpace",))]
        out.append(act.TypeText(str(args.get("text", ""))))
        if args.get("press_enter", False):
            out.append(act.KeyPress(("Return",)))
        return out
    if name == "scroll_document":
        t = viewport.target
        return [_scroll(args, viewport, (t.width // 2, t.height // 2), None)]
    if name in ("scroll_at", "scroll"):
        return [_scroll(args, viewport, _xy(args, viewport), DEFAULT_MAGNITUDE)]
    if name == "wait_5_seconds":
        return [act.Wait(5.0)]
    if name == "wait":
        return [act.Wait(float(args.get("seconds", 1)))]
    if name in ("go_back", "go_forward"):
        return [act.KeyPress(("Alt_L", "Left" if name == "go_back" else "Right"))]
    if name in ("key_combination", "hotkey", "press_key"):
        return [act.KeyPress(keymap.keys(args.get("keys", args.get("key"))))]
    if name in ("key_down", "key_up"):
        return [(act.KeyDown if name == "key_down" else act.KeyUp)(keymap.keys(args.get("key")))]
    if name == "drag_and_drop":
        start = _xy(args, viewport)
        end = _xy(args, viewport, "destination_x", "destination_y")
        return [act.Drag((start, end))]
    if name == "take_screenshot":
        return [act.Screenshot()]
    if name in BROWSER_ONLY:
        raise act.InvalidAction(f"{name} is not available on a desktop; use the screen instead")
    raise act.InvalidAction(f"unknown computer use function {name!r}")


def _safety(call_id: str, args: Mapping[str, Any]) -> tuple[calls.SafetyCheck, ...]:
    decision = args.get("safety_decision")
    if not isinstance(decision, Mapping) or decision.get("decision") != "require_confirmation":
        return ()
    message = decision.get("explanation")
    return (
        calls.SafetyCheck(
            f"{call_id}:safety_decision",
            "require_confirmation",
            None if message is None else str(message),
        ),
    )


def _inline(shot: calls.ScreenshotRef) -> dict[str, Any]:
    if shot.data is not None:
        return {"inlineData": {"mimeType": shot.mime, "data": b64_bytes(shot.data)}}
    return {"fileData": {"mimeType": shot.mime, "fileUri": shot.uri or shot.file_id}}


def _is_call(part: Mapping[str, Any]) -> bool:
    return bool(part.get("functionCall") or part.get("function_call"))


_IMAGE_KEYS = ("inlineData", "inline_data", "fileData", "file_data")


def _is_image(part: Any) -> bool:
    return isinstance(part, dict) and any(k in part for k in _IMAGE_KEYS)


def _response_parts(part: dict[str, Any]) -> tuple[dict[str, Any], Any] | None:
    response = part.get("functionResponse")
    return (response, response.get("parts")) if isinstance(response, dict) else None


def prune_images(body: Mapping[str, Any], keep: int) -> dict[str, Any]:
    """``body`` with all but the newest ``keep`` image parts replaced by a note (in a
    ``functionResponse``, the note goes in its ``response``); a copy."""
    out = copy.deepcopy(dict(body))
    slots = base.image_slots(out.get("contents"), "parts", _is_image, _response_parts)
    emptied: list[dict[str, Any]] = []
    for parts, index, fr in reversed(slots[: max(0, len(slots) - keep)]):  # indexes stay valid
        if fr is None:
            parts[index] = {"text": OMITTED_IMAGE}
            continue
        del parts[index]
        response = fr.get("response")
        fr["response"] = {**(response if isinstance(response, dict) else {}), "note": OMITTED_IMAGE}
        if not parts:
            emptied.append(fr)
    for fr in emptied:
        fr.pop("parts", None)
    return out


class GeminiComputer:
    """A generateContent computer-use conversation (the contents are resent every turn)."""

    vendor = "gemini"
    screenshot_every_call = False
    tools_off: ClassVar[Mapping[str, Any]] = {
        "toolConfig": {"functionCallingConfig": {"mode": "NONE"}}
    }

    def __init__(self, setup: WireSetup) -> None:
        # a local tool named like a predefined function ("wait", "scroll") cannot be declared
        functions = tuple(f for f in setup.functions if f.name not in COMPUTER_FUNCTIONS)
        self.setup = dataclasses.replace(setup, functions=functions)
        self.contents: list[dict[str, Any]] = []
        self._names: dict[str, tuple[str, str | None]] = {}  # call_id → (name, wire id)
        self._serial = 0

    def headers(self) -> dict[str, str]:
        return {}

    def tools(self) -> list[dict[str, Any]]:
        # "ENVIRONMENT_DESKTOP" for 3.5 models is not verified against the API
        env = "ENVIRONMENT_BROWSER" if is_legacy_model(self.setup.model) else "ENVIRONMENT_DESKTOP"
        tools: list[dict[str, Any]] = [
            {"computerUse": {"environment": env, "excludedPredefinedFunctions": list(BROWSER_ONLY)}}
        ]
        if self.setup.functions:
            tools.append({"functionDeclarations": [_declaration(f) for f in self.setup.functions]})
        return tools

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"contents": list(self.contents), "tools": self.tools()}
        if self.setup.instructions:
            body["systemInstruction"] = {"parts": [{"text": self.setup.instructions}]}
        return body

    def say(self, text: str, screenshot: bytes | None = None) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": text}]
        if screenshot is not None:
            parts.append(_inline(calls.ScreenshotRef(data=screenshot)))
        base.append_turn(self.contents, "user", "parts", parts)
        return self.body()

    def _call(self, fc: Mapping[str, Any]) -> calls.ComputerCall | calls.FunctionCall:
        self._serial += 1
        name = str(fc.get("name"))
        wire_id = fc.get("id")
        call_id = str(wire_id) if wire_id else f"gemini-call-{self._serial}"
        self._names[call_id] = (name, None if wire_id is None else str(wire_id))
        args = fc.get("args") or {}
        if name not in COMPUTER_FUNCTIONS:
            return calls.FunctionCall(call_id, name, args, id=call_id, meta={"name": name})
        actions, problem = translated(
            lambda: translate_call(name, args, self.setup.viewport), f"{name} was not run"
        )
        return calls.ComputerCall(
            id=call_id,
            call_id=call_id,
            actions=actions,
            pending_safety_checks=_safety(call_id, args),
            window=self.setup.window,
            problem=problem,
            meta={"name": name},
        )

    def parse(self, response: Mapping[str, Any]) -> Turn:
        candidates = response.get("candidates") or []
        content = dict((candidates[0].get("content") if candidates else None) or {})
        content.setdefault("role", "model")
        self.contents.append(content)
        turn = Turn(usage=int_counts(response.get("usageMetadata")))
        texts = []
        for part in content.get("parts") or []:
            fc = part.get("functionCall") or part.get("function_call")
            if fc:
                turn.items.append(self._call(fc))
            elif part.get("text") and not part.get("thought"):
                texts.append(str(part["text"]))
        turn.text = "\n".join(texts)
        return turn

    def _response(
        self, call_id: str, response: dict[str, Any], images: Sequence[calls.ScreenshotRef] = ()
    ) -> dict[str, Any]:
        name, wire_id = self._names.get(call_id, (call_id, None))
        fr: dict[str, Any] = {"name": name, "response": response}
        if wire_id is not None:
            fr["id"] = wire_id
        if images:
            fr["parts"] = [_inline(i) for i in images]
        return {"functionResponse": fr}

    def render_outputs(self, outputs: Sequence[calls.Output]) -> list[dict[str, Any]]:
        parts = []
        for out in outputs:
            if isinstance(out, calls.ComputerResult):
                resp: dict[str, Any] = {"error": out.text} if out.is_error else {"status": "ok"}
                if out.text and not out.is_error:
                    resp["output"] = out.text
                if out.acknowledged_safety_checks:
                    resp["safety_acknowledgement"] = "true"
                shots = [*out.images, *([out.screenshot] if out.screenshot else [])]
                parts.append(self._response(out.call_id, resp, shots))
            elif isinstance(out, calls.FunctionResult):
                key = "error" if out.is_error else "output"
                parts.append(self._response(out.call_id, {key: out.output}, out.images))
            else:
                assert isinstance(out, calls.CallError)
                parts.append(self._response(out.call_id, {"error": out.message}))
        return parts

    def reply(self, outputs: Sequence[calls.Output]) -> dict[str, Any]:
        self.contents.append({"role": "user", "parts": self.render_outputs(outputs)})
        return self.body()

    def pruned(self, body: Mapping[str, Any], keep: int) -> dict[str, Any]:
        return prune_images(body, keep)

    def without_calls(self, response: Mapping[str, Any]) -> dict[str, Any]:
        candidates = list(response.get("candidates") or [])
        if not candidates:
            return dict(response)
        first = dict(candidates[0])
        content = dict(first.get("content") or {})
        content["parts"] = [p for p in content.get("parts") or [] if not _is_call(p)]
        first["content"] = content
        return {**response, "candidates": [first, *candidates[1:]]}

    def restart(self) -> None:
        self.contents = []
        self._names.clear()

    def state(self) -> dict[str, Any]:
        names = {k: list(v) for k, v in self._names.items()}
        return {"contents": list(self.contents), "names": names, "serial": self._serial}

    def load(self, state: Mapping[str, Any]) -> None:
        self.contents = list(state.get("contents", []))
        self._names = {k: (str(v[0]), v[1]) for k, v in state.get("names", {}).items()}
        self._serial = int(state.get("serial", 0))


# -- the adapter -----------------------------------------------------------------------------------


class GeminiProvider(Provider):
    name = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    replay_model = "gemini-2.5-computer-use-preview-10-2025"
    #: Gemini's own advice: ask again after a malformed function call
    ask_again = ("MALFORMED_FUNCTION_CALL", "the model sent a malformed function call")

    def endpoint(self) -> str:
        return f"{self.base_url}/models/{self.model}:generateContent"

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key or "", "content-type": "application/json"}

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        text = protocol == "text"
        system = self.system_prompt(conversation, tools, protocol)
        declared = [_declaration(t) for t in tools]
        config = {
            "maxOutputTokens": self.max_tokens,
            **base.present(stopSequences=list(textproto.STOP_SEQUENCES) if text else None),
        }
        body = {
            "contents": _contents(self.messages(conversation), protocol),
            "generationConfig": config,
            **base.present(
                systemInstruction={"parts": [{"text": system}]} if system else None,
                tools=[{"functionDeclarations": declared}] if declared and not text else None,
            ),
        }
        return self.endpoint(), self.headers(), body

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = data.get("promptFeedback") or {}
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if reason:
                return self.turn(
                    f"(Gemini blocked the request: {reason})", protocol, stop_reason=str(reason)
                )
            raise ProviderError(f"gemini: unexpected reply (no candidates): {str(data)[:200]}")
        candidate = candidates[0] if isinstance(candidates[0], dict) else {}
        content = candidate.get("content") or {}
        texts: list[str] = []
        tool_calls: list[ToolCall] = []
        for part in content.get("parts") or []:
            if not isinstance(part, dict) or part.get("thought"):
                continue
            if "text" in part:
                texts.append(str(part["text"]))
            call = part.get("functionCall")
            if isinstance(call, dict):
                name = str(call.get("name", ""))
                args = call.get("args")
                extra = (
                    {"gemini": {"thoughtSignature": part["thoughtSignature"]}}
                    if part.get("thoughtSignature")
                    else {}
                )
                tool_calls.append(
                    ToolCall(
                        id=str(call.get("id") or new_call_id("gem")),
                        name=name,
                        arguments=args if isinstance(args, dict) else {},
                        extra=extra,
                    )
                )
        return self.turn(
            "".join(texts),
            protocol,
            calls=tool_calls,
            stop_reason=str(candidate.get("finishReason") or ""),
            usage=data.get("usageMetadata"),
        )

    # -- computer use --------------------------------------------------------------------------

    @classmethod
    def speaks_computer(cls, model: str) -> bool:
        """The computer-use previews, gemini-3-flash, gemini-3.1-pro, and 3.5 and later."""
        if "computer-use" in model or model.startswith(("gemini-3-flash", "gemini-3.1-pro")):
            return True
        m = re.match(r"gemini-(\d+)(?:\.(\d+))?", model)
        return m is not None and (int(m.group(1)), int(m.group(2) or 0)) >= (3, 5)

    def computer_viewport(self, width: int, height: int) -> Viewport:
        return grid_viewport(width, height, fit_within(width, height, *MAX_IMAGE), GRID)

    def computer_wire(self, setup: WireSetup) -> GeminiComputer:
        return GeminiComputer(setup)
