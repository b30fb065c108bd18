"""Anthropic's Messages API (``POST /v1/messages``): function calling and computer use.

**Function calling.** Native tools are ``tools: [{name, description, input_schema}]``; the
model answers with ``tool_use`` blocks and gets ``tool_result`` blocks (text + base64 images)
back in the next user message. Under the text protocol no tools are
declared, results are user text, and ``stop_sequences`` stops the model at a result marker.

**Computer use** (:class:`AnthropicComputer`; wire shapes: Anthropic's computer-use tool docs):
``computer_20250124``, ``computer_20251124`` (zoom) and the GA ``computer_toolset_20260801``.
The per-version tools are one ``computer`` tool whose ``tool_use.input`` names an ``action``;
the GA toolset has one member tool per action (``tool_use.name`` is the action,
``toolset_name`` is ``"computer"``) and results echo ``toolset_name``. The version follows the
model: Claude 5.x → the toolset; Opus 4.5-4.7 and Sonnet 4.6 → ``computer_20251124``; older →
``computer_20250124``. Batch rule (both shapes): a turn's computer calls run in order and stop
at the first one that fails or is refused; every later ``tool_use`` still gets a
``tool_result`` with ``is_error`` and a fixed text. Error results carry text only. Coordinates
are screenshot pixels; ``scroll_amount`` is wheel notches; click modifiers come in ``text``
(newer docs) or ``key`` (the 2025 quickstart). The screenshot size is the quickstart's
``scale_coordinates`` rule — XGA 1024×768, WXGA 1280×800 or FWXGA 1366×768 when the screen's
aspect ratio is within 0.02 of the target's and the screen is wider; otherwise unscaled, but
(deskpilot's addition) never above the API's silent-downsample limits (long edge 1568 px,
1.15 MP), which would make clicks miss. The whole history is resent every turn; only the
newest images go (:meth:`AnthropicComputer.pruned`).
"""

from __future__ import annotations

import copy
import functools
import math
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
    b64,
)
from deskpilot.agent.providers import base
from deskpilot.agent.providers.base import Provider, Request
from deskpilot.events import Image
from deskpilot.native import actions as act
from deskpilot.native import calls, keymap
from deskpilot.native.scaling import Size, Viewport, pixel_viewport
from deskpilot.native.wire import OMITTED_IMAGE, Turn, WireSetup, int_counts, translated
from deskpilot.native.wire import b64 as b64_bytes
from deskpilot.tools.base import ToolSpec

API_VERSION = "2023-06-01"
BAD_INPUT = "Invalid arguments for {name}: expected a JSON object; nothing was run."
V20250124 = "computer_20250124"
V20251124 = "computer_20251124"
TOOLSET = "computer_toolset_20260801"
BETAS = {V20250124: "computer-use-2025-01-24", V20251124: "computer-use-2025-11-24"}
CLICKS = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
SCROLLS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
_ZOOM_MODELS = ("opus-4-5", "opus-4-6", "opus-4-7", "sonnet-4-6")
#: The quickstart's screenshot sizes, in its order (the first aspect match wins).
SCALE_TARGETS = ((1024, 768), (1280, 800), (1366, 768))
MAX_LONG_EDGE = 1568
MAX_PIXELS = 1_150_000


# -- function calling ----------------------------------------------------------------------------


def _image(image: Image) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime, "data": b64(image)},
    }


def _declaration(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text or "(empty)"}


def _messages(history: Sequence[Message], protocol: ToolProtocol) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for m in history:
        if m.role == "user":
            text = [_text(m.text)] if m.text or not m.images else []
            base.append_turn(messages, "user", "content", text + [_image(i) for i in m.images])
        elif m.role == "assistant" and protocol == "text":
            base.append_turn(
                messages, "assistant", "content", [_text(textproto.render_assistant(m))]
            )
        elif m.role == "assistant":
            blocks = [_text(m.text)] if m.text or not m.tool_calls else []
            blocks += [
                {
                    "type": "tool_use",
                    "id": base.safe_id(c.id, "toolu"),
                    "name": base.safe_name(c.name),
                    "input": c.arguments,
                }
                for c in m.tool_calls
            ]
            base.append_turn(messages, "assistant", "content", blocks)
        elif protocol == "text":
            images = [_image(i) for r in m.results for i in r.images]
            base.append_turn(
                messages, "user", "content", [_text(textproto.render_results(m.results)), *images]
            )
        else:
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": base.safe_id(r.call_id, "toolu"),
                    "is_error": r.is_error,
                    "content": [
                        _text(base.result_text(r.text, r.is_error)),
                        *map(_image, r.images),
                    ],
                }
                for r in m.results
            ]
            base.append_turn(messages, "user", "content", results)
    return messages


# -- computer use ----------------------------------------------------------------------------------


def image_size(width: int, height: int) -> Size:
    """The quickstart's scale target for a screen (see the module docstring)."""
    ratio = width / height
    for tw, th in SCALE_TARGETS:
        if abs(tw / th - ratio) < 0.02:
            if tw < width:
                return Size(tw, th)
            break
    factor = min(1.0, MAX_LONG_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    return Size(max(1, math.floor(width * factor)), max(1, math.floor(height * factor)))


def version_for_model(model: str) -> str:
    m = re.search(r"claude-(?:opus|sonnet|haiku)-(\d+)", model)
    if m and int(m.group(1)) >= 5:
        return TOOLSET
    if any(tag in model for tag in _ZOOM_MODELS):
        return V20251124
    return V20250124


def _coordinate(value: Any, viewport: Viewport, what: str) -> tuple[int, int]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise act.InvalidAction(f"{what} must be [x, y] with integer x and y (got {value!r})")
    return viewport.to_target(value[0], value[1])


def _maybe_point(inp: Mapping[str, Any], viewport: Viewport, what: str) -> tuple[int | None, ...]:
    if inp.get("coordinate") is None:
        return (None, None)
    return _coordinate(inp["coordinate"], viewport, f"{what}: coordinate")


def translate_action(
    action: str, inp: Mapping[str, Any], viewport: Viewport, version: str
) -> list[act.Action]:
    """One Anthropic action (name + input) → deskpilot actions (target pixels)."""
    if action == "key":
        repeat = int(inp.get("repeat", 1))
        return [act.KeyPress(c, repeat=repeat) for c in keymap.xdotool_combos(str(inp.get("text")))]
    if action == "hold_key":
        return [act.HoldKey(keymap.plus_combo(str(inp.get("text", ""))), float(inp["duration"]))]
    if action == "type":
        return [act.TypeText(str(inp.get("text", "")))]
    if action == "cursor_position":
        return [act.CursorPosition()]
    if action == "mouse_move":
        return [act.Move(*_coordinate(inp.get("coordinate"), viewport, "mouse_move: coordinate"))]
    if action in ("left_mouse_down", "left_mouse_up"):
        x, y = _maybe_point(inp, viewport, action)
        kind = act.MouseDown if action == "left_mouse_down" else act.MouseUp
        return [kind(x, y)]
    if action in CLICKS:
        button, count = CLICKS[action]
        x, y = _maybe_point(inp, viewport, action)
        mods = keymap.modifiers(inp.get("text") or inp.get("key"))
        return [act.Click(x, y, button=button, count=count, modifiers=mods)]  # type: ignore[arg-type]
    if action == "left_click_drag":
        start = _coordinate(inp.get("start_coordinate"), viewport, "left_click_drag: start")
        end = _coordinate(inp.get("coordinate"), viewport, "left_click_drag: coordinate")
        return [act.Drag((start, end))]
    if action == "scroll":
        x, y = _maybe_point(inp, viewport, "scroll")
        direction = SCROLLS.get(str(inp.get("scroll_direction")))
        if direction is None:
            raise act.InvalidAction("scroll: scroll_direction must be up, down, left or right")
        amount = inp.get("scroll_amount")
        if not isinstance(amount, int) or amount < 1:
            raise act.InvalidAction(
                f"scroll: scroll_amount must be a positive integer (got {amount!r})"
            )
        mods = keymap.modifiers(inp.get("text"))
        return [act.Scroll(x, y, direction[0] * amount, direction[1] * amount, modifiers=mods)]
    if action == "wait":
        return [act.Wait(float(inp.get("duration", 1)))]
    if action == "screenshot":
        return [act.Screenshot()]
    if action == "zoom" and version != V20250124:
        region = inp.get("region")
        if not isinstance(region, list | tuple) or len(region) != 4:
            raise act.InvalidAction(f"zoom: region must be [x0, y0, x1, y1] (got {region!r})")
        return [act.Zoom(*viewport.region_to_target(*(int(v) for v in region)))]
    raise act.InvalidAction(f"Unknown action {action!r} for {version}.")


def _shot(shot: calls.ScreenshotRef) -> dict[str, Any]:
    if shot.data is not None:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": shot.mime, "data": b64_bytes(shot.data)},
        }
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


def render_outputs(
    outputs: Sequence[calls.Output], toolset_calls: set[str]
) -> list[dict[str, Any]]:
    """Results (original call order) → ``tool_result`` blocks for the next user message."""
    blocks: list[dict[str, Any]] = []
    for out in outputs:
        in_toolset = out.call_id in toolset_calls
        if isinstance(out, calls.ComputerResult):
            if out.is_error:
                text = [{"type": "text", "text": out.text or "The action failed."}]
                blocks.append(_result(out.call_id, text, True, in_toolset))
                continue
            content: list[dict[str, Any]] = []
            if out.text:
                content.append({"type": "text", "text": out.text})
            content += [_shot(i) for i in out.images]
            if out.screenshot is not None:
                content.append(_shot(out.screenshot))
            if not content:
                content.append({"type": "text", "text": "Done."})
            blocks.append(_result(out.call_id, content, False, in_toolset))
        elif isinstance(out, calls.FunctionResult):
            content = [{"type": "text", "text": out.output}, *(_shot(i) for i in out.images)]
            blocks.append(_result(out.call_id, content, out.is_error, False))
        else:
            assert isinstance(out, calls.CallError)
            text = [{"type": "text", "text": out.message}]
            blocks.append(_result(out.call_id, text, True, in_toolset))
    return blocks


def _is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image"


def prune_images(body: Mapping[str, Any], keep: int) -> dict[str, Any]:
    """``body`` with all but the newest ``keep`` image blocks (inside tool results too)
    replaced by a note; a copy (strings, the base64 data, are shared, not copied)."""
    out = copy.deepcopy(dict(body))
    slots = base.image_slots(
        out.get("messages"), "content", _is_image, lambda block: (block, block.get("content"))
    )
    for container, index, _ in slots[: max(0, len(slots) - keep)]:
        container[index] = {"type": "text", "text": OMITTED_IMAGE}
    return out


class AnthropicComputer:
    """A Messages API computer-use conversation (the history is resent every turn)."""

    vendor = "anthropic"
    screenshot_every_call = False
    tools_off: ClassVar[Mapping[str, Any]] = {"tool_choice": {"type": "none"}}

    def __init__(
        self, setup: WireSetup, *, version: str | None = None, max_tokens: int = 4096
    ) -> None:
        self.setup = setup
        self.version = version or version_for_model(setup.model)
        self.max_tokens = max_tokens
        self.messages: list[dict[str, Any]] = []
        self._toolset_calls: set[str] = set()

    def headers(self) -> dict[str, str]:
        return {"anthropic-beta": BETAS[self.version]} if self.version in BETAS else {}

    def tools(self) -> list[dict[str, Any]]:
        if self.version == TOOLSET:
            computer: dict[str, Any] = {"type": TOOLSET}
        else:
            computer = {
                "type": self.version,
                "name": "computer",
                "display_width_px": self.setup.viewport.image.width,
                "display_height_px": self.setup.viewport.image.height,
            }
            if self.version == V20251124:
                computer["enable_zoom"] = True
        return [computer, *map(_declaration, self.setup.functions)]

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.setup.model,
            "max_tokens": self.max_tokens,
            "messages": list(self.messages),
            "tools": self.tools(),
        }
        if self.setup.instructions:
            body["system"] = self.setup.instructions
        return body

    def say(self, text: str, screenshot: bytes | None = None) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if screenshot is not None:
            content.append(_shot(calls.ScreenshotRef(data=screenshot)))
        base.append_turn(self.messages, "user", "content", content)
        return self.body()

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
        turn = Turn(usage=int_counts(response.get("usage")))
        texts = []
        for block in content:
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            if block.get("type") != "tool_use":
                continue
            call_id = str(block.get("id"))
            found = self._computer(block)
            if found is None:
                turn.items.append(
                    calls.FunctionCall(
                        call_id, str(block.get("name")), block.get("input") or {}, id=call_id
                    )
                )
                continue
            if self.version == TOOLSET:
                self._toolset_calls.add(call_id)
            action, inp = found
            actions, problem = translated(
                functools.partial(translate_action, action, inp, self.setup.viewport, self.version),
                f"Invalid {action} call",
            )
            meta = {"toolset_name": "computer"} if self.version == TOOLSET else {}
            turn.items.append(
                calls.ComputerCall(
                    id=call_id,
                    call_id=call_id,
                    actions=actions,
                    window=self.setup.window,
                    problem=problem,
                    meta=meta,
                )
            )
        turn.text = "\n".join(t for t in texts if t)
        return turn

    def reply(self, outputs: Sequence[calls.Output]) -> dict[str, Any]:
        blocks = render_outputs(outputs, self._toolset_calls)
        self.messages.append({"role": "user", "content": blocks})
        return self.body()

    def pruned(self, body: Mapping[str, Any], keep: int) -> dict[str, Any]:
        return prune_images(body, keep)

    def without_calls(self, response: Mapping[str, Any]) -> dict[str, Any]:
        content = [b for b in response.get("content") or [] if b.get("type") != "tool_use"]
        return {**response, "content": content}

    def restart(self) -> None:
        self.messages = []
        self._toolset_calls.clear()

    def state(self) -> dict[str, Any]:
        return {"messages": list(self.messages), "toolset_calls": sorted(self._toolset_calls)}

    def load(self, state: Mapping[str, Any]) -> None:
        self.messages = list(state.get("messages", []))
        self._toolset_calls = set(state.get("toolset_calls", []))


# -- the adapter -----------------------------------------------------------------------------------


class AnthropicProvider(Provider):
    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    replay_model = "claude-sonnet-4-5"

    def endpoint(self) -> str:
        return f"{self.base_url}/v1/messages"

    def headers(self) -> dict[str, str]:
        return {
            "x-api-key": self.api_key or "",
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
        }

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        text = protocol == "text"
        body = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": _messages(self.messages(conversation), protocol),
            **base.present(
                system=self.system_prompt(conversation, tools, protocol),
                tools=None if text else [_declaration(t) for t in tools],
                stop_sequences=list(textproto.STOP_SEQUENCES) if text else None,
            ),
        }
        return self.endpoint(), self.headers(), body

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        texts: list[str] = []
        tool_calls: list[ToolCall] = []
        for block in base.reply_items(data, "content", self.name):
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                name = str(block.get("name", ""))
                args = block.get("input")
                tool_calls.append(
                    ToolCall(
                        id=str(block.get("id") or f"toolu_{len(tool_calls)}"),
                        name=name,
                        arguments=args if isinstance(args, dict) else {},
                        error=None if isinstance(args, dict) else BAD_INPUT.format(name=name),
                    )
                )
        return self.turn(
            "".join(texts),
            protocol,
            calls=tool_calls,
            stop_reason=str(data.get("stop_reason") or ""),
            usage=data.get("usage"),
        )

    # -- computer use --------------------------------------------------------------------------

    @classmethod
    def speaks_computer(cls, model: str) -> bool:
        """Claude Sonnet/Opus 4 and later, Haiku 4.5 and later, claude-3-7-sonnet."""
        if model.startswith("claude-3-7-sonnet"):
            return True
        m = re.match(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2})(?!\d))?", model)
        if m is None:
            return False
        version = (int(m.group(2)), int(m.group(3) or 0))
        return version >= ((4, 5) if m.group(1) == "haiku" else (4, 0))

    def computer_viewport(self, width: int, height: int) -> Viewport:
        return pixel_viewport(width, height, image_size(width, height))

    def computer_wire(self, setup: WireSetup) -> AnthropicComputer:
        return AnthropicComputer(setup)
