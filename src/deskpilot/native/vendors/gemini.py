"""Gemini computer use: the 0–999 grid, legacy and 3.5 function names, safety decisions.

Wire shapes: protocols.md §3 (REST JSON, camelCase; snake_case is accepted on input). The model
calls predefined functions whose ``x``/``y`` are on a 1000×1000 grid; deskpilot maps them to
target pixels with the grid :class:`~deskpilot.native.scaling.Viewport`. Legacy names
(``click_at``, ``type_text_at``, ``key_combination``, ...) serve the 2.5 / 3.x previews; the
3.5 names (``click``, ``hotkey``, ``press_key``, ``take_screenshot``, ...) serve newer models —
both are understood whatever the model.

A ``safety_decision`` of ``require_confirmation`` inside a call's args becomes a pending safety
check; after a person approves, the function response carries ``"safety_acknowledgement":
"true"``. Browser-only functions (``open_web_browser``, ``search``, ``navigate``) are excluded
from the declaration and refused if called; ``go_back``/``go_forward`` press Alt+Left/Right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from deskpilot.native import keymap
from deskpilot.native.actions import (
    Action,
    Click,
    Drag,
    InvalidAction,
    KeyDown,
    KeyPress,
    KeyUp,
    MouseDown,
    MouseUp,
    Move,
    Screenshot,
    Scroll,
    TypeText,
    Wait,
)
from deskpilot.native.calls import (
    CallError,
    ComputerCall,
    ComputerResult,
    FunctionCall,
    FunctionResult,
    Output,
    SafetyCheck,
    ScreenshotRef,
)
from deskpilot.native.scaling import Vendor, Viewport
from deskpilot.native.vendors.base import Turn, b64, notches, translated
from deskpilot.tools.base import ToolSpec

LEGACY = frozenset({"open_web_browser", "click_at", "hover_at", "type_text_at", "scroll_document",
                    "scroll_at", "wait_5_seconds", "go_back", "go_forward", "search", "navigate",
                    "key_combination", "drag_and_drop"})  # fmt: skip
CURRENT = frozenset({"click", "double_click", "triple_click", "middle_click", "right_click",
                     "mouse_down", "mouse_up", "move", "type", "drag_and_drop", "wait",
                     "press_key", "key_down", "key_up", "hotkey", "take_screenshot", "scroll",
                     "go_back", "go_forward", "navigate"})  # fmt: skip
COMPUTER_FUNCTIONS = LEGACY | CURRENT
BROWSER_ONLY = ("open_web_browser", "search", "navigate")
LEGACY_MODELS = ("gemini-2.5-computer-use", "gemini-3-flash", "gemini-3.1-pro")
CLICKS = {"click_at": ("left", 1), "click": ("left", 1), "double_click": ("left", 2),
          "triple_click": ("left", 3), "middle_click": ("middle", 1),
          "right_click": ("right", 1)}  # fmt: skip
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
        raise InvalidAction(f"{kx} and {ky} must be integers on the 0-999 grid")
    return viewport.to_target(x, y)


def _scroll(
    args: Mapping[str, Any], viewport: Viewport, at: tuple[int, int], default: int | None
) -> Scroll:
    direction = DIRECTIONS.get(str(args.get("direction")))
    if direction is None:
        raise InvalidAction("direction must be up, down, left or right")
    if default is None:
        count = DOCUMENT_SCROLL_NOTCHES
    else:
        magnitude = int(args.get("magnitude", default))
        axis: Literal["x", "y"] = "x" if direction[0] else "y"
        count = abs(notches(viewport.length_to_target(magnitude, axis))) or 1
    return Scroll(at[0], at[1], direction[0] * count, direction[1] * count)


def translate_call(name: str, args: Mapping[str, Any], viewport: Viewport) -> list[Action]:
    """One predefined function call → deskpilot actions (target pixels)."""
    if name in CLICKS:
        button, count = CLICKS[name]
        return [Click(*_xy(args, viewport), button=button, count=count)]  # type: ignore[arg-type]
    if name in ("hover_at", "move"):
        return [Move(*_xy(args, viewport))]
    if name in ("mouse_down", "mouse_up"):
        return [(MouseDown if name == "mouse_down" else MouseUp)(*_xy(args, viewport))]
    if name in ("type_text_at", "type"):
        out: list[Action] = []
        if name == "type_text_at":
            out.append(Click(*_xy(args, viewport)))
            if args.get("clear_before_typing", True):
                out += [KeyPress(("Control_L", "a")), KeyPress(("BackSpace",))]
        out.append(TypeText(str(args.get("text", ""))))
        if args.get("press_enter", False):
            out.append(KeyPress(("Return",)))
        return out
    if name == "scroll_document":
        t = viewport.target
        return [_scroll(args, viewport, (t.width // 2, t.height // 2), None)]
    if name in ("scroll_at", "scroll"):
        return [_scroll(args, viewport, _xy(args, viewport), DEFAULT_MAGNITUDE)]
    if name == "wait_5_seconds":
        return [Wait(5.0)]
    if name == "wait":
        return [Wait(float(args.get("seconds", 1)))]
    if name in ("go_back", "go_forward"):
        return [KeyPress(("Alt_L", "Left" if name == "go_back" else "Right"))]
    if name in ("key_combination", "hotkey", "press_key"):
        return [KeyPress(keymap.keys(args.get("keys", args.get("key"))))]
    if name in ("key_down", "key_up"):
        return [(KeyDown if name == "key_down" else KeyUp)(keymap.keys(args.get("key")))]
    if name == "drag_and_drop":
        start = _xy(args, viewport)
        end = _xy(args, viewport, "destination_x", "destination_y")
        return [Drag((start, end))]
    if name == "take_screenshot":
        return [Screenshot()]
    if name in BROWSER_ONLY:
        raise InvalidAction(f"{name} is not available on a desktop; use the screen instead")
    raise InvalidAction(f"unknown computer use function {name!r}")


def _safety(call_id: str, args: Mapping[str, Any]) -> tuple[SafetyCheck, ...]:
    decision = args.get("safety_decision")
    if not isinstance(decision, Mapping) or decision.get("decision") != "require_confirmation":
        return ()
    message = decision.get("explanation")
    return (SafetyCheck(f"{call_id}:safety_decision", "require_confirmation",
                        None if message is None else str(message)),)  # fmt: skip


def _inline(shot: ScreenshotRef) -> dict[str, Any]:
    if shot.data is not None:
        return {"inlineData": {"mimeType": shot.mime, "data": b64(shot.data)}}
    return {"fileData": {"mimeType": shot.mime, "fileUri": shot.uri or shot.file_id}}


class GeminiConversation:
    """A generateContent conversation (the contents are resent every turn)."""

    vendor: Vendor = "gemini"
    screenshot_every_call = False

    def __init__(
        self,
        model: str,
        viewport: Viewport,
        *,
        window: str | None = None,
        functions: Sequence[ToolSpec] = (),
        system: str | None = None,
    ) -> None:
        self.model = model
        self.viewport = viewport
        self.window = window
        # a local tool named like a predefined function ("wait", "scroll") cannot be declared
        self.functions = tuple(f for f in functions if f.name not in COMPUTER_FUNCTIONS)
        self.system = system
        self.contents: list[dict[str, Any]] = []
        self._names: dict[str, tuple[str, str | None]] = {}  # call_id → (name, wire id)
        self._serial = 0

    @property
    def path(self) -> str:
        # under the base URL https://generativelanguage.googleapis.com/v1beta
        return f"/models/{self.model}:generateContent"

    def headers(self, api_key: str) -> dict[str, str]:
        return {"x-goog-api-key": api_key}

    def tools(self) -> list[dict[str, Any]]:
        # "ENVIRONMENT_DESKTOP" for 3.5 models is not verified against the API (protocols §3.1)
        env = "ENVIRONMENT_BROWSER" if is_legacy_model(self.model) else "ENVIRONMENT_DESKTOP"
        tools: list[dict[str, Any]] = [{"computerUse": {
            "environment": env, "excludedPredefinedFunctions": list(BROWSER_ONLY)}}]  # fmt: skip
        if self.functions:
            decls = []
            for f in self.functions:
                schema = {k: v for k, v in f.input_schema.items() if k != "additionalProperties"}
                decls.append({"name": f.name, "description": f.description,
                              "parameters": schema})  # fmt: skip
            tools.append({"functionDeclarations": decls})
        return tools

    def _body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"contents": list(self.contents), "tools": self.tools()}
        if self.system:
            body["systemInstruction"] = {"parts": [{"text": self.system}]}
        return body

    def start(self, goal: str, screenshot: bytes | None) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": goal}]
        if screenshot is not None:
            parts.append(_inline(ScreenshotRef(data=screenshot)))
        self.contents = [{"role": "user", "parts": parts}]
        self._names.clear()
        return self._body()

    def _call(self, fc: Mapping[str, Any]) -> ComputerCall | FunctionCall:
        self._serial += 1
        name = str(fc.get("name"))
        wire_id = fc.get("id")
        call_id = str(wire_id) if wire_id else f"gemini-call-{self._serial}"
        self._names[call_id] = (name, None if wire_id is None else str(wire_id))
        args = fc.get("args") or {}
        if name not in COMPUTER_FUNCTIONS:
            return FunctionCall(call_id, name, args, id=call_id, meta={"name": name})
        actions, problem = translated(
            lambda: translate_call(name, args, self.viewport), f"{name} was not run"
        )
        return ComputerCall(id=call_id, call_id=call_id, actions=actions,
                            pending_safety_checks=_safety(call_id, args), window=self.window,
                            problem=problem, meta={"name": name})  # fmt: skip

    def parse(self, response: Mapping[str, Any]) -> Turn:
        candidates = response.get("candidates") or []
        content = dict((candidates[0].get("content") if candidates else None) or {})
        content.setdefault("role", "model")
        self.contents.append(content)
        turn = Turn()
        texts = []
        for part in content.get("parts") or []:
            fc = part.get("functionCall") or part.get("function_call")
            if fc:
                turn.items.append(self._call(fc))
            elif part.get("text") and not part.get("thought"):
                texts.append(str(part["text"]))
        turn.text = "\n".join(texts)
        return turn

    def _response(self, call_id: str, response: dict[str, Any],
                  images: Sequence[ScreenshotRef] = ()) -> dict[str, Any]:  # fmt: skip
        name, wire_id = self._names.get(call_id, (call_id, None))
        fr: dict[str, Any] = {"name": name, "response": response}
        if wire_id is not None:
            fr["id"] = wire_id
        if images:
            fr["parts"] = [_inline(i) for i in images]
        return {"functionResponse": fr}

    def render_outputs(self, outputs: Sequence[Output]) -> list[dict[str, Any]]:
        parts = []
        for out in outputs:
            if isinstance(out, ComputerResult):
                resp: dict[str, Any] = {"error": out.text} if out.is_error else {"status": "ok"}
                if out.text and not out.is_error:
                    resp["output"] = out.text
                if out.acknowledged_safety_checks:
                    resp["safety_acknowledgement"] = "true"
                shots = [*out.images, *([out.screenshot] if out.screenshot else [])]
                parts.append(self._response(out.call_id, resp, shots))
            elif isinstance(out, FunctionResult):
                key = "error" if out.is_error else "output"
                parts.append(self._response(out.call_id, {key: out.output}, out.images))
            else:
                assert isinstance(out, CallError)
                parts.append(self._response(out.call_id, {"error": out.message}))
        return parts

    def reply(self, outputs: Sequence[Output]) -> dict[str, Any]:
        self.contents.append({"role": "user", "parts": self.render_outputs(outputs)})
        return self._body()

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
