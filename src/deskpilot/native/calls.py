"""The call/result contents of the native flow, each with ``to_dict``/``from_dict``.

Shapes follow OpenAI's ``computer_call`` items and Microsoft Agent Framework's native computer
tool: a :class:`ComputerCall` has an item ``id``, a distinct ``call_id``, ordered
``actions`` and ``pending_safety_checks``; a :class:`ComputerResult` has the ``call_id``, a
screenshot (bytes, URI or hosted file) and the ``acknowledged_safety_checks``. Local function
calls of the same model turn travel as :class:`FunctionCall`/:class:`FunctionResult`; a call that
ends without a result (declined, not executed, cancelled) gets a :class:`CallError`.

Actions are kept in target pixels (already scaled from the model's space): what a person is
shown is what runs.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from deskpilot.errors import DeskpilotError
from deskpilot.native.actions import Action, action_from_dict, action_to_dict


class ComputerFlowError(DeskpilotError):
    """A computer call or result that breaks the call/result rules (a caller's mistake)."""


def _frozen(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(meta or {}))


@dataclass(frozen=True)
class SafetyCheck:
    """A vendor's warning that a person must acknowledge before the call runs."""

    id: str
    code: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.code is not None:
            out["code"] = self.code
        if self.message is not None:
            out["message"] = self.message
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SafetyCheck:
        if not isinstance(data.get("id"), str) or not data["id"]:
            raise ComputerFlowError("a safety check needs a non-empty string 'id'")
        return cls(str(data["id"]), data.get("code"), data.get("message"))


@dataclass(frozen=True)
class ScreenshotRef:
    """A screenshot as PNG/JPEG bytes, a URI, or a hosted file id (exactly one)."""

    data: bytes | None = None
    mime: str = "image/png"
    uri: str | None = None
    file_id: str | None = None

    def __post_init__(self) -> None:
        given = [v for v in (self.data, self.uri, self.file_id) if v is not None]
        if len(given) != 1:
            raise ComputerFlowError("a screenshot is exactly one of: data, uri or file_id")

    def data_url(self) -> str:
        if self.data is not None:
            return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"
        if self.uri is not None:
            return self.uri
        raise ComputerFlowError("a hosted-file screenshot has no URL; send its file_id")

    def to_dict(self) -> dict[str, Any]:
        if self.data is not None:
            return {"data": base64.b64encode(self.data).decode("ascii"), "mime": self.mime}
        if self.uri is not None:
            return {"uri": self.uri, "mime": self.mime}
        return {"file_id": self.file_id, "mime": self.mime}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScreenshotRef:
        mime = str(data.get("mime", "image/png"))
        if "data" in data:
            return cls(data=base64.b64decode(data["data"], validate=True), mime=mime)
        return cls(uri=data.get("uri"), file_id=data.get("file_id"), mime=mime)


@dataclass(frozen=True)
class ComputerCall:
    """One computer tool call of a model turn, translated to the action model."""

    id: str
    call_id: str
    actions: tuple[Action, ...]
    pending_safety_checks: tuple[SafetyCheck, ...] = ()
    window: str | None = None  # the target window (window-relative coordinates), or the screen
    problem: str | None = None  # set when the call could not be translated (it will not run)
    meta: Mapping[str, Any] = field(default_factory=dict)  # vendor details to echo back

    def __post_init__(self) -> None:
        if not self.call_id:
            raise ComputerFlowError("a computer call needs a call_id")
        object.__setattr__(self, "meta", _frozen(self.meta))

    type = "computer_tool_call"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.id,
            "call_id": self.call_id,
            "actions": [action_to_dict(a) for a in self.actions],
            "pending_safety_checks": [c.to_dict() for c in self.pending_safety_checks],
            "window": self.window,
            "problem": self.problem,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComputerCall:
        return cls(
            id=str(data.get("id") or data["call_id"]),
            call_id=str(data["call_id"]),
            actions=tuple(action_from_dict(a) for a in data.get("actions", ())),
            pending_safety_checks=tuple(
                SafetyCheck.from_dict(c) for c in data.get("pending_safety_checks", ())
            ),
            window=data.get("window"),
            problem=data.get("problem"),
            meta=data.get("meta") or {},
        )


@dataclass(frozen=True)
class ComputerResult:
    """What goes back for a computer call that ran (``is_error`` when a step failed)."""

    call_id: str
    screenshot: ScreenshotRef | None
    acknowledged_safety_checks: tuple[SafetyCheck, ...] = ()
    text: str = ""  # e.g. "X=10,Y=20" for cursor_position, or the failing step
    is_error: bool = False
    images: tuple[ScreenshotRef, ...] = ()  # zoom crops, in action order

    type = "computer_tool_result"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "call_id": self.call_id,
            "screenshot": None if self.screenshot is None else self.screenshot.to_dict(),
            "acknowledged_safety_checks": [c.to_dict() for c in self.acknowledged_safety_checks],
            "text": self.text,
            "is_error": self.is_error,
            "images": [i.to_dict() for i in self.images],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComputerResult:
        shot = data.get("screenshot")
        return cls(
            call_id=str(data["call_id"]),
            screenshot=None if shot is None else ScreenshotRef.from_dict(shot),
            acknowledged_safety_checks=tuple(
                SafetyCheck.from_dict(c) for c in data.get("acknowledged_safety_checks", ())
            ),
            text=str(data.get("text", "")),
            is_error=bool(data.get("is_error", False)),
            images=tuple(ScreenshotRef.from_dict(i) for i in data.get("images", ())),
        )


@dataclass(frozen=True)
class FunctionCall:
    """A local (non-computer) function call in the same model turn."""

    call_id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    type = "function_call"

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", _frozen(self.arguments))
        object.__setattr__(self, "meta", _frozen(self.meta))

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "call_id": self.call_id,
            "name": self.name,
            "arguments": dict(self.arguments),
            "id": self.id,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FunctionCall:
        return cls(
            str(data["call_id"]),
            str(data["name"]),
            data.get("arguments") or {},
            str(data.get("id", "")),
            data.get("meta") or {},
        )


@dataclass(frozen=True)
class FunctionResult:
    call_id: str
    output: str
    is_error: bool = False
    images: tuple[ScreenshotRef, ...] = ()

    type = "function_result"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "call_id": self.call_id,
            "output": self.output,
            "is_error": self.is_error,
            "images": [i.to_dict() for i in self.images],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FunctionResult:
        return cls(
            str(data["call_id"]),
            str(data["output"]),
            bool(data.get("is_error")),
            tuple(ScreenshotRef.from_dict(i) for i in data.get("images", ())),
        )


@dataclass(frozen=True)
class CallError:
    """A call that ends without a result: declined, not executed, invalid or cancelled.

    ``screenshot`` (the screen as it is now) lets vendors that require an image in every
    computer output (OpenAI) answer a declined call; a cancelled call never gets one — no
    computer result is fabricated.
    """

    call_id: str
    message: str
    cancelled_computer_call: bool = False
    computer: bool = True  # False for a local function call
    screenshot: ScreenshotRef | None = None

    type = "error"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "call_id": self.call_id,
            "message": self.message,
            "computer": self.computer,
            "additional_properties": {"cancelled_computer_call": self.cancelled_computer_call},
            "screenshot": None if self.screenshot is None else self.screenshot.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallError:
        extra = data.get("additional_properties") or {}
        shot = data.get("screenshot")
        return cls(
            str(data["call_id"]),
            str(data["message"]),
            bool(extra.get("cancelled_computer_call", False)),
            bool(data.get("computer", True)),
            None if shot is None else ScreenshotRef.from_dict(shot),
        )


Item = ComputerCall | FunctionCall
Output = ComputerResult | FunctionResult | CallError


def item_from_dict(data: Mapping[str, Any]) -> Item:
    kind = data.get("type")
    if kind == ComputerCall.type:
        return ComputerCall.from_dict(data)
    if kind == FunctionCall.type:
        return FunctionCall.from_dict(data)
    raise ComputerFlowError(f"unknown call type {kind!r}")


def output_from_dict(data: Mapping[str, Any]) -> Output:
    kind = data.get("type")
    if kind == ComputerResult.type:
        return ComputerResult.from_dict(data)
    if kind == FunctionResult.type:
        return FunctionResult.from_dict(data)
    if kind == CallError.type:
        return CallError.from_dict(data)
    raise ComputerFlowError(f"unknown result type {kind!r}")
