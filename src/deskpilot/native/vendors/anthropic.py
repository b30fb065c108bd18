"""Anthropic computer use: ``computer_20250124``, ``computer_20251124`` (zoom) and the GA toolset.

Wire shapes: protocols.md §2. The per-version tools are one ``computer`` tool whose
``tool_use.input`` names an ``action``; the GA ``computer_toolset_20260801`` has one member tool
per action (``tool_use.name`` is the action, ``toolset_name`` is ``"computer"``) and results
echo ``toolset_name``. The version follows the model: Claude 5.x → the toolset; Opus 4.5-4.7
and Sonnet 4.6 → ``computer_20251124``; older → ``computer_20250124``.

Batch rule (both shapes): a turn's computer calls run in order and stop at the first one that
fails or is refused; every later ``tool_use`` still gets a ``tool_result`` with ``is_error`` and
a fixed text. Error results carry text only. Coordinates are screenshot pixels; ``scroll_amount``
is wheel notches; click modifiers come in ``text`` (newer docs) or ``key`` (the 2025 quickstart).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from deskpilot.native import keymap
from deskpilot.native.actions import (
    Action,
    Click,
    CursorPosition,
    Drag,
    HoldKey,
    InvalidAction,
    KeyPress,
    MouseDown,
    MouseUp,
    Move,
    Screenshot,
    Scroll,
    TypeText,
    Wait,
    Zoom,
)
from deskpilot.native.calls import (
    CallError,
    ComputerCall,
    ComputerResult,
    FunctionCall,
    FunctionResult,
    Output,
    ScreenshotRef,
)
from deskpilot.native.scaling import Vendor, Viewport
from deskpilot.native.vendors.base import Turn, b64, translated
from deskpilot.tools.base import ToolSpec

V20250124 = "computer_20250124"
V20251124 = "computer_20251124"
TOOLSET = "computer_toolset_20260801"
BETAS = {V20250124: "computer-use-2025-01-24", V20251124: "computer-use-2025-11-24"}
API_VERSION = "2023-06-01"
CLICKS = {"left_click": ("left", 1), "right_click": ("right", 1), "middle_click": ("middle", 1),
          "double_click": ("left", 2), "triple_click": ("left", 3)}  # fmt: skip
SCROLLS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
_ZOOM_MODELS = ("opus-4-5", "opus-4-6", "opus-4-7", "sonnet-4-6")


def version_for_model(model: str) -> str:
    m = re.search(r"claude-(?:opus|sonnet|haiku)-(\d+)", model)
    if m and int(m.group(1)) >= 5:
        return TOOLSET
    if any(tag in model for tag in _ZOOM_MODELS):
        return V20251124
    return V20250124


def _coordinate(value: Any, viewport: Viewport, what: str) -> tuple[int, int]:
    if (not isinstance(value, list | tuple) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):  # fmt: skip
        raise InvalidAction(f"{what} must be [x, y] with integer x and y (got {value!r})")
    return viewport.to_target(value[0], value[1])


def _maybe_point(inp: Mapping[str, Any], viewport: Viewport, what: str) -> tuple[int | None, ...]:
    if inp.get("coordinate") is None:
        return (None, None)
    return _coordinate(inp["coordinate"], viewport, f"{what}: coordinate")


def translate_action(
    action: str, inp: Mapping[str, Any], viewport: Viewport, version: str
) -> list[Action]:
    """One Anthropic action (name + input) → deskpilot actions (target pixels)."""
    if action == "key":
        repeat = int(inp.get("repeat", 1))
        return [KeyPress(c, repeat=repeat) for c in keymap.xdotool_combos(str(inp.get("text")))]
    if action == "hold_key":
        return [HoldKey(keymap.plus_combo(str(inp.get("text", ""))), float(inp["duration"]))]
    if action == "type":
        return [TypeText(str(inp.get("text", "")))]
    if action == "cursor_position":
        return [CursorPosition()]
    if action == "mouse_move":
        return [Move(*_coordinate(inp.get("coordinate"), viewport, "mouse_move: coordinate"))]
    if action in ("left_mouse_down", "left_mouse_up"):
        x, y = _maybe_point(inp, viewport, action)
        kind = MouseDown if action == "left_mouse_down" else MouseUp
        return [kind(x, y)]
    if action in CLICKS:
        button, count = CLICKS[action]
        x, y = _maybe_point(inp, viewport, action)
        mods = keymap.modifiers(inp.get("text") or inp.get("key"))
        return [Click(x, y, button=button, count=count, modifiers=mods)]  # type: ignore[arg-type]
    if action == "left_click_drag":
        start = _coordinate(inp.get("start_coordinate"), viewport, "left_click_drag: start")
        end = _coordinate(inp.get("coordinate"), viewport, "left_click_drag: coordinate")
        return [Drag((start, end))]
    if action == "scroll":
        x, y = _maybe_point(inp, viewport, "scroll")
        direction = SCROLLS.get(str(inp.get("scroll_direction")))
        if direction is None:
            raise InvalidAction("scroll: scroll_direction must be up, down, left or right")
        amount = inp.get("scroll_amount")
        if not isinstance(amount, int) or amount < 1:
            raise InvalidAction(
                f"scroll: scroll_amount must be a positive integer (got {amount!r})"
            )
        mods = keymap.modifiers(inp.get("text"))
        return [Scroll(x, y, direction[0] * amount, direction[1] * amount, modifiers=mods)]
    if action == "wait":
        return [Wait(float(inp.get("duration", 1)))]
    if action == "screenshot":
        return [Screenshot()]
    if action == "zoom" and version != V20250124:
        region = inp.get("region")
        if not isinstance(region, list | tuple) or len(region) != 4:
            raise InvalidAction(f"zoom: region must be [x0, y0, x1, y1] (got {region!r})")
        return [Zoom(*viewport.region_to_target(*(int(v) for v in region)))]
    raise InvalidAction(f"Unknown action {action!r} for {version}.")


def _image(shot: ScreenshotRef) -> dict[str, Any]:
    if shot.data is not None:
        return {"type": "image", "source": {"type": "base64", "media_type": shot.mime,
                                            "data": b64(shot.data)}}  # fmt: skip
    if shot.uri is not None:
        return {"type": "image", "source": {"type": "url", "url": shot.uri}}
    return {"type": "image", "source": {"type": "file", "file_id": shot.file_id}}


def _result(
    call_id: str, content: list[dict[str, Any]], is_error: bool, toolset: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
    if toolset:
        out["toolset_name"] = "computer"
    out["is_error"] = is_error
    out["content"] = content
    return out


def render_outputs(outputs: Sequence[Output], toolset_calls: set[str]) -> list[dict[str, Any]]:
    """Results (original call order) → ``tool_result`` blocks for the next user message."""
    blocks: list[dict[str, Any]] = []
    for out in outputs:
        in_toolset = out.call_id in toolset_calls
        if isinstance(out, ComputerResult):
            if out.is_error:
                text = [{"type": "text", "text": out.text or "The action failed."}]
                blocks.append(_result(out.call_id, text, True, in_toolset))
                continue
            content: list[dict[str, Any]] = []
            if out.text:
                content.append({"type": "text", "text": out.text})
            content += [_image(i) for i in out.images]
            if out.screenshot is not None:
                content.append(_image(out.screenshot))
            if not content:
                content.append({"type": "text", "text": "Done."})
            blocks.append(_result(out.call_id, content, False, in_toolset))
        elif isinstance(out, FunctionResult):
            content = [{"type": "text", "text": out.output}, *(_image(i) for i in out.images)]
            blocks.append(_result(out.call_id, content, out.is_error, False))
        else:
            assert isinstance(out, CallError)
            text = [{"type": "text", "text": out.message}]
            blocks.append(_result(out.call_id, text, True, in_toolset))
    return blocks


class AnthropicConversation:
    """A Messages API conversation (the history is resent every turn)."""

    vendor: Vendor = "anthropic"
    screenshot_every_call = False
    path = "/v1/messages"  # under the base URL https://api.anthropic.com

    def __init__(
        self,
        model: str,
        viewport: Viewport,
        *,
        window: str | None = None,
        functions: Sequence[ToolSpec] = (),
        system: str | None = None,
        version: str | None = None,
        max_tokens: int = 4096,
    ) -> None:
        self.model = model
        self.viewport = viewport
        self.window = window
        self.functions = tuple(functions)
        self.system = system
        self.version = version or version_for_model(model)
        self.max_tokens = max_tokens
        self.messages: list[dict[str, Any]] = []
        self._toolset_calls: set[str] = set()

    def headers(self, api_key: str) -> dict[str, str]:
        out = {"x-api-key": api_key, "anthropic-version": API_VERSION}
        if self.version in BETAS:
            out["anthropic-beta"] = BETAS[self.version]
        return out

    def tools(self) -> list[dict[str, Any]]:
        if self.version == TOOLSET:
            computer: dict[str, Any] = {"type": TOOLSET}
        else:
            computer = {"type": self.version, "name": "computer",
                        "display_width_px": self.viewport.image.width,
                        "display_height_px": self.viewport.image.height}  # fmt: skip
            if self.version == V20251124:
                computer["enable_zoom"] = True
        funcs = [{"name": f.name, "description": f.description, "input_schema": f.input_schema}
                 for f in self.functions]  # fmt: skip
        return [computer, *funcs]

    def _body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens,
                                "messages": list(self.messages), "tools": self.tools()}  # fmt: skip
        if self.system:
            body["system"] = self.system
        return body

    def start(self, goal: str, screenshot: bytes | None) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": goal}]
        if screenshot is not None:
            content.append(_image(ScreenshotRef(data=screenshot)))
        self.messages = [{"role": "user", "content": content}]
        self._toolset_calls.clear()
        return self._body()

    def _computer(self, block: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        inp = block.get("input") or {}
        if self.version == TOOLSET:
            if block.get("toolset_name") == "computer":
                return str(block.get("name")), inp
            return None
        if block.get("name") == "computer":
            return str(inp.get("action")), inp
        return None

    def parse(self, response: Mapping[str, Any]) -> Turn:
        content = list(response.get("content") or [])
        self.messages.append({"role": "assistant", "content": content})
        turn = Turn()
        texts = []
        for block in content:
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            if block.get("type") != "tool_use":
                continue
            call_id = str(block.get("id"))
            found = self._computer(block)
            if found is None:
                turn.items.append(FunctionCall(call_id, str(block.get("name")),
                                               block.get("input") or {}, id=call_id))  # fmt: skip
                continue
            if self.version == TOOLSET:
                self._toolset_calls.add(call_id)
            action, inp = found
            actions, problem = translated(
                functools.partial(translate_action, action, inp, self.viewport, self.version),
                f"Invalid {action} call",
            )
            meta = {"toolset_name": "computer"} if self.version == TOOLSET else {}
            turn.items.append(ComputerCall(id=call_id, call_id=call_id, actions=actions,
                                           window=self.window, problem=problem,
                                           meta=meta))  # fmt: skip
        turn.text = "\n".join(t for t in texts if t)
        return turn

    def reply(self, outputs: Sequence[Output]) -> dict[str, Any]:
        blocks = render_outputs(outputs, self._toolset_calls)
        self.messages.append({"role": "user", "content": blocks})
        return self._body()

    def restart(self) -> None:
        self.messages = []
        self._toolset_calls.clear()

    def state(self) -> dict[str, Any]:
        return {"messages": list(self.messages), "toolset_calls": sorted(self._toolset_calls)}

    def load(self, state: Mapping[str, Any]) -> None:
        self.messages = list(state.get("messages", []))
        self._toolset_calls = set(state.get("toolset_calls", []))
