"""The conversation in a neutral form: any provider renders it, so the provider can change mid-run.

A conversation is a system prompt plus messages. Each message is one of:

* ``user``      — text (and images) from the person, or a note from the runtime;
* ``assistant`` — what a model wrote: text and the tool calls it asked for, tagged with the
  ``provider:model`` that wrote it and the tool protocol it used (``native`` or ``text``);
* ``tool``      — the results of the previous assistant message's tool calls, in call order.

Nothing here is in any provider's wire format; ``providers/*`` translate both ways. The whole
conversation saves to a JSON-able dict (images as base64) and loads back (:meth:`to_dict`,
:meth:`from_dict`), which is how sessions are saved and resumed.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from deskpilot.events import Image

Role = Literal["user", "assistant", "tool"]
ToolProtocol = Literal["native", "text"]
FORMAT_VERSION = 1


def new_call_id(prefix: str = "call") -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def new_nonce() -> str:
    """A per-result tag for text-protocol result markers (the model never sees it in advance)."""
    return "r-" + secrets.token_hex(6)


@dataclass
class ToolCall:
    """A tool call a model asked for.

    ``error`` is set when the call could not even be understood (malformed text-protocol block,
    arguments that are not JSON); the runtime answers such a call with that error and runs
    nothing. ``extra`` keeps provider-specific data that must be echoed back to the same
    provider (e.g. Gemini's ``thoughtSignature``).
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    raw: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.error is not None:
            out["error"] = self.error
        if self.raw:
            out["raw"] = self.raw
        if self.extra:
            out["extra"] = self.extra
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            id=str(data["id"]),
            name=str(data.get("name", "")),
            arguments=dict(data.get("arguments") or {}),
            error=data.get("error"),
            raw=str(data.get("raw", "")),
            extra=dict(data.get("extra") or {}),
        )


@dataclass
class ToolResultPart:
    """The result of one tool call: the text the model reads, plus images."""

    call_id: str
    name: str
    text: str
    images: list[Image] = field(default_factory=list)
    is_error: bool = False
    nonce: str = field(default_factory=new_nonce)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "call_id": self.call_id,
            "name": self.name,
            "text": self.text,
            "is_error": self.is_error,
            "nonce": self.nonce,
        }
        if self.images:
            out["images"] = [image_to_dict(i) for i in self.images]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolResultPart:
        return cls(
            call_id=str(data["call_id"]),
            name=str(data.get("name", "")),
            text=str(data.get("text", "")),
            images=[image_from_dict(i) for i in data.get("images", [])],
            is_error=bool(data.get("is_error", False)),
            nonce=str(data.get("nonce") or new_nonce()),
        )


@dataclass
class Message:
    role: Role
    text: str = ""
    images: list[Image] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResultPart] = field(default_factory=list)
    model: str = ""  # assistant: the provider:model that wrote it
    protocol: ToolProtocol | None = None  # assistant: how it called tools

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role}
        if self.text:
            out["text"] = self.text
        if self.images:
            out["images"] = [image_to_dict(i) for i in self.images]
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.results:
            out["results"] = [r.to_dict() for r in self.results]
        if self.model:
            out["model"] = self.model
        if self.protocol:
            out["protocol"] = self.protocol
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        role = data.get("role")
        if role not in ("user", "assistant", "tool"):
            raise ValueError(f"unknown message role {role!r}")
        protocol = data.get("protocol")
        if protocol not in (None, "native", "text"):
            raise ValueError(f"unknown tool protocol {protocol!r}")
        return cls(
            role=role,
            text=str(data.get("text", "")),
            images=[image_from_dict(i) for i in data.get("images", [])],
            tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls", [])],
            results=[ToolResultPart.from_dict(r) for r in data.get("results", [])],
            model=str(data.get("model", "")),
            protocol=protocol,
        )


@dataclass
class AssistantTurn:
    """One model reply, already parsed (whatever the provider and the tool protocol)."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    model: str = ""
    protocol: ToolProtocol = "native"
    stop_reason: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    #: protocol problems the runtime noticed (e.g. a forged result marker that was cut off)
    notes: list[str] = field(default_factory=list)

    def to_message(self) -> Message:
        return Message(
            role="assistant",
            text=self.text,
            tool_calls=list(self.tool_calls),
            model=self.model,
            protocol=self.protocol,
        )


@dataclass
class Conversation:
    system: str = ""
    messages: list[Message] = field(default_factory=list)

    def add_user(self, text: str, images: Iterable[Image] = ()) -> Message:
        message = Message(role="user", text=text, images=list(images))
        self.messages.append(message)
        return message

    def add_turn(self, turn: AssistantTurn) -> Message:
        message = turn.to_message()
        self.messages.append(message)
        return message

    def add_results(self, results: Sequence[ToolResultPart]) -> Message:
        message = Message(role="tool", results=list(results))
        self.messages.append(message)
        return message

    def pending_calls(self) -> list[ToolCall]:
        """Tool calls of the last assistant message that have no result yet."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if message.role == "assistant":
                answered = {r.call_id for m in self.messages[index + 1 :] for r in m.results}
                return [c for c in message.tool_calls if c.id not in answered]
        return []

    def close_pending(self, text: str) -> list[ToolResultPart]:
        """Answer every unanswered call with an error ``text``, so every provider accepts the
        history (each call must have a result before the next user message)."""
        missing = [
            ToolResultPart(call_id=c.id, name=c.name, text=text, is_error=True)
            for c in self.pending_calls()
        ]
        if missing:
            last = self.messages[-1]
            if last.role == "tool":
                last.results.extend(missing)
            else:
                self.add_results(missing)
        return missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "system": self.system,
            "messages": [m.to_dict() for m in self.messages],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Conversation:
        version = data.get("version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise ValueError(f"unsupported conversation format version {version!r}")
        return cls(
            system=str(data.get("system", "")),
            messages=[Message.from_dict(m) for m in data.get("messages", [])],
        )


def image_to_dict(image: Image) -> dict[str, Any]:
    return {
        "mime": image.mime,
        "width": image.width,
        "height": image.height,
        "data": base64.b64encode(image.data).decode("ascii"),
    }


def image_from_dict(data: dict[str, Any]) -> Image:
    return Image(
        data=base64.b64decode(data["data"]),
        mime=str(data.get("mime", "image/png")),
        width=int(data.get("width", 0)),
        height=int(data.get("height", 0)),
    )


def b64(image: Image) -> str:
    return base64.b64encode(image.data).decode("ascii")


def data_url(image: Image) -> str:
    return f"data:{image.mime};base64,{b64(image)}"
