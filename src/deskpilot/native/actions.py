"""The coordinate action model: one dataclass per action, shared by every vendor.

Coordinates are integer pixels of the *target*: the screen (root window), or one window's client
area when the caller names a window (then ``(0, 0)`` is the window's top-left corner). A pointer
action without a point (``Click(x=None, y=None)``) acts where the pointer already is. Key names
are X keysym names (``Control_L``, ``Return``, ``a``); vendor names are mapped in
:mod:`deskpilot.native.keymap`.

Every limit is validated, never clamped: an out-of-range value is an :class:`InvalidAction`
whose text the model reads. ``action_to_dict`` / ``action_from_dict`` give the wire form
(``{"type": "click", "x": 10, "y": 20, ...}``) used by checkpoints and the ``computer`` tool.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from deskpilot.desktop.base import MouseButton
from deskpilot.desktop.ports.keys import is_key_name
from deskpilot.errors import InvalidArguments
from deskpilot.tools.base import describe_validation_error

MAX_CLICKS = 3
MAX_DRAG_POINTS = 100
MAX_SCROLL_NOTCHES = 200
MAX_TEXT = 10_000
MAX_COMBO_KEYS = 8
MAX_REPEAT = 100
MAX_SECONDS = 100.0  # hold_key / wait: the Anthropic reference rejects longer durations


class InvalidAction(InvalidArguments, ValueError):
    """An action with a missing, malformed or out-of-range field (the model reads the text)."""


def _point(x: int | None, y: int | None, what: str, *, required: bool) -> None:
    if x is None and y is None:
        if required:
            raise InvalidAction(f"{what} needs a point (x, y)")
        return
    if x is None or y is None:
        raise InvalidAction(f"{what}: give both x and y, or neither")
    if x < 0 or y < 0:
        raise InvalidAction(f"{what}: coordinates must not be negative (got {x}, {y})")


def _keys(keys: Sequence[str], what: str, *, minimum: int = 1) -> None:
    if not minimum <= len(keys) <= MAX_COMBO_KEYS:
        raise InvalidAction(f"{what}: give {minimum} to {MAX_COMBO_KEYS} keys (got {len(keys)})")
    for key in keys:
        if not isinstance(key, str) or not is_key_name(key):
            raise InvalidAction(f"{what}: {key!r} is not an X keysym name (e.g. Control_L, a)")


def _seconds(value: float, what: str, *, positive: bool) -> None:
    low_ok = value > 0 if positive else value >= 0
    if not low_ok or value > MAX_SECONDS:
        bound = "more than 0" if positive else "at least 0"
        raise InvalidAction(
            f"{what}: {value:g} s is out of range ({bound} and at most {MAX_SECONDS:g} s)"
        )


@dataclasses.dataclass(frozen=True)
class Click:
    """Press and release a button ``count`` times (2 = double, 3 = triple click)."""

    x: int | None = None
    y: int | None = None
    button: MouseButton = "left"
    count: int = 1
    modifiers: tuple[str, ...] = ()
    type: Literal["click"] = "click"

    def __post_init__(self) -> None:
        _point(self.x, self.y, "click", required=False)
        if not 1 <= self.count <= MAX_CLICKS:
            raise InvalidAction(f"click: count must be 1 to {MAX_CLICKS} (got {self.count})")
        _keys(self.modifiers, "click modifiers", minimum=0)


@dataclasses.dataclass(frozen=True)
class Move:
    x: int
    y: int
    modifiers: tuple[str, ...] = ()
    type: Literal["move"] = "move"

    def __post_init__(self) -> None:
        _point(self.x, self.y, "move", required=True)
        _keys(self.modifiers, "move modifiers", minimum=0)


@dataclasses.dataclass(frozen=True)
class Drag:
    """Press the left button at the first point, move through the path, release at the last."""

    path: tuple[tuple[int, int], ...]
    modifiers: tuple[str, ...] = ()
    type: Literal["drag"] = "drag"

    def __post_init__(self) -> None:
        if not 2 <= len(self.path) <= MAX_DRAG_POINTS:
            raise InvalidAction(
                f"drag: the path needs 2 to {MAX_DRAG_POINTS} points (got {len(self.path)})"
            )
        for px, py in self.path:
            _point(px, py, "drag", required=True)
        _keys(self.modifiers, "drag modifiers", minimum=0)


@dataclasses.dataclass(frozen=True)
class MouseDown:
    x: int | None = None
    y: int | None = None
    button: MouseButton = "left"
    type: Literal["mouse_down"] = "mouse_down"

    def __post_init__(self) -> None:
        _point(self.x, self.y, "mouse_down", required=False)


@dataclasses.dataclass(frozen=True)
class MouseUp:
    x: int | None = None
    y: int | None = None
    button: MouseButton = "left"
    type: Literal["mouse_up"] = "mouse_up"

    def __post_init__(self) -> None:
        _point(self.x, self.y, "mouse_up", required=False)


@dataclasses.dataclass(frozen=True)
class Scroll:
    """Wheel notches at a point: ``dy > 0`` scrolls down, ``dx > 0`` scrolls right."""

    x: int | None = None
    y: int | None = None
    dx: int = 0
    dy: int = 0
    modifiers: tuple[str, ...] = ()
    type: Literal["scroll"] = "scroll"

    def __post_init__(self) -> None:
        _point(self.x, self.y, "scroll", required=False)
        if self.dx == 0 and self.dy == 0:
            raise InvalidAction("scroll: dx and dy are both 0; give a direction and an amount")
        if max(abs(self.dx), abs(self.dy)) > MAX_SCROLL_NOTCHES:
            raise InvalidAction(
                f"scroll: at most {MAX_SCROLL_NOTCHES} notches per action "
                f"(got dx={self.dx}, dy={self.dy})"
            )
        _keys(self.modifiers, "scroll modifiers", minimum=0)


@dataclasses.dataclass(frozen=True)
class TypeText:
    """Type text into whatever has keyboard focus."""

    text: str
    type: Literal["type"] = "type"

    def __post_init__(self) -> None:
        if not self.text:
            raise InvalidAction("type: text is empty")
        if len(self.text) > MAX_TEXT:
            raise InvalidAction(f"type: at most {MAX_TEXT} characters per action")


@dataclasses.dataclass(frozen=True)
class KeyPress:
    """Press a combination together (modifiers first), release it; ``repeat`` times."""

    keys: tuple[str, ...]
    repeat: int = 1
    type: Literal["keypress"] = "keypress"

    def __post_init__(self) -> None:
        _keys(self.keys, "keypress")
        if not 1 <= self.repeat <= MAX_REPEAT:
            raise InvalidAction(f"keypress: repeat must be 1 to {MAX_REPEAT}")


@dataclasses.dataclass(frozen=True)
class KeyDown:
    keys: tuple[str, ...]
    type: Literal["key_down"] = "key_down"

    def __post_init__(self) -> None:
        _keys(self.keys, "key_down")


@dataclasses.dataclass(frozen=True)
class KeyUp:
    keys: tuple[str, ...]
    type: Literal["key_up"] = "key_up"

    def __post_init__(self) -> None:
        _keys(self.keys, "key_up")


@dataclasses.dataclass(frozen=True)
class HoldKey:
    keys: tuple[str, ...]
    duration: float
    type: Literal["hold_key"] = "hold_key"

    def __post_init__(self) -> None:
        _keys(self.keys, "hold_key")
        _seconds(self.duration, "hold_key duration", positive=True)


@dataclasses.dataclass(frozen=True)
class Wait:
    seconds: float
    type: Literal["wait"] = "wait"

    def __post_init__(self) -> None:
        _seconds(self.seconds, "wait", positive=False)


@dataclasses.dataclass(frozen=True)
class Screenshot:
    type: Literal["screenshot"] = "screenshot"


@dataclasses.dataclass(frozen=True)
class Zoom:
    """A region of the target at full resolution: ``x0 <= x < x1``, ``y0 <= y < y1``."""

    x0: int
    y0: int
    x1: int
    y1: int
    type: Literal["zoom"] = "zoom"

    def __post_init__(self) -> None:
        _point(self.x0, self.y0, "zoom", required=True)
        if self.x1 <= self.x0 or self.y1 <= self.y0:
            raise InvalidAction(
                f"zoom: the region must have x1 > x0 and y1 > y0 (got "
                f"[{self.x0}, {self.y0}, {self.x1}, {self.y1}])"
            )


@dataclasses.dataclass(frozen=True)
class CursorPosition:
    type: Literal["cursor_position"] = "cursor_position"


Action = Annotated[
    Click
    | Move
    | Drag
    | MouseDown
    | MouseUp
    | Scroll
    | TypeText
    | KeyPress
    | KeyDown
    | KeyUp
    | HoldKey
    | Wait
    | Screenshot
    | Zoom
    | CursorPosition,
    Field(discriminator="type"),
]

for _cls in (
    Click,
    Move,
    Drag,
    MouseDown,
    MouseUp,
    Scroll,
    TypeText,
    KeyPress,
    KeyDown,
    KeyUp,
    HoldKey,
    Wait,
    Screenshot,
    Zoom,
    CursorPosition,
):
    setattr(_cls, "__pydantic_config__", ConfigDict(extra="forbid"))  # noqa: B010

#: Actions that only look (or pause): they run through the read-only ``computer_view`` tool.
VIEW_TYPES = frozenset({"screenshot", "zoom", "cursor_position", "wait"})
KEYBOARD_TYPES = frozenset({"type", "keypress", "key_down", "key_up", "hold_key"})

_ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)


def action_from_dict(data: Mapping[str, Any]) -> Action:
    """Validate a wire dict into an action, or raise :class:`InvalidAction`."""
    if not isinstance(data, Mapping):
        raise InvalidAction(f"an action must be an object with a type, not {type(data).__name__}")
    try:
        return _ADAPTER.validate_python(dict(data))
    except ValidationError as exc:
        raise InvalidAction(describe_validation_error("action", exc)) from exc


def action_to_dict(action: Action) -> dict[str, Any]:
    """The wire dict: ``type`` first, unset optional points left out, tuples as lists."""
    out: dict[str, Any] = {"type": action.type}
    for f in dataclasses.fields(action):
        value = getattr(action, f.name)
        if f.name == "type" or value is None:
            continue
        if isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        out[f.name] = value
    return out


def points(action: Action) -> list[tuple[int, int]]:
    """The target points an action touches (empty when it acts where the pointer is)."""
    if isinstance(action, Drag):
        return list(action.path)
    if isinstance(action, Zoom):
        return []
    x, y = getattr(action, "x", None), getattr(action, "y", None)
    return [(x, y)] if isinstance(x, int) and isinstance(y, int) else []


def shown(text: str) -> str:
    """``text`` quoted with every invisible, control or non-ASCII character escaped.

    What a person approves must be what runs: a zero-width or right-to-left character would
    otherwise hide what is typed.
    """
    parts: list[str] = []
    for ch in text:
        if ch == "\n":
            parts.append("\\n")
        elif ch == "\t":
            parts.append("\\t")
        elif ch in '\\"':
            parts.append("\\" + ch)
        elif 0x20 <= ord(ch) < 0x7F:
            parts.append(ch)
        else:
            name = unicodedata.name(ch, "")
            code = f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
            parts.append(f"{code}" + (f"{{{name}}}" if name else ""))
    return '"' + "".join(parts) + '"'


def describe(action: Action) -> str:
    """One line for people (approval prompts, chips): exact values, text escaped."""
    where = ""
    pts = points(action)
    if len(pts) == 1:
        where = f" at ({pts[0][0]}, {pts[0][1]})"
    mods = getattr(action, "modifiers", ())
    held = f" holding {'+'.join(mods)}" if mods else ""
    if isinstance(action, Click):
        times = {1: "", 2: " double", 3: " triple"}[action.count]
        at = where or " at the pointer"
        return f"{action.button}{times} click{at}{held}"
    if isinstance(action, Move):
        return f"move the pointer{where}{held}"
    if isinstance(action, Drag):
        path = " → ".join(f"({x}, {y})" for x, y in action.path)
        return f"drag {path}{held}"
    if isinstance(action, MouseDown | MouseUp):
        verb = "press" if isinstance(action, MouseDown) else "release"
        return f"{verb} the {action.button} button{where or ' at the pointer'}"
    if isinstance(action, Scroll):
        return f"scroll dx={action.dx} dy={action.dy} notches{where or ' at the pointer'}{held}"
    if isinstance(action, TypeText):
        return f"type {shown(action.text)}"
    if isinstance(action, KeyPress):
        times = f" ×{action.repeat}" if action.repeat > 1 else ""
        return f"press {'+'.join(action.keys)}{times}"
    if isinstance(action, KeyDown | KeyUp):
        verb = "hold down" if isinstance(action, KeyDown) else "release"
        return f"{verb} {'+'.join(action.keys)}"
    if isinstance(action, HoldKey):
        return f"hold {'+'.join(action.keys)} for {action.duration:g} s"
    if isinstance(action, Wait):
        return f"wait {action.seconds:g} s"
    if isinstance(action, Zoom):
        return f"zoom into [{action.x0}, {action.y0}, {action.x1}, {action.y1}]"
    if isinstance(action, CursorPosition):
        return "report the pointer position"
    return "take a screenshot"
