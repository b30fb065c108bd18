"""``scripted:FILE`` — replay recorded model replies, for demos and tests.

The file holds replies in a real provider's wire format, replayed in order, one per request::

    {
      "format": "anthropic",            # anthropic | openai | compatible | gemini | neutral
      "model": "claude-sonnet-4-5",     # what was recorded (shown in the replay label)
      "label": "Calculator demo",       # optional
      "replies": [ {"id": "msg_01…", "type": "message", "content": [...], ...}, ... ]
    }

Each reply is parsed by that provider's own parser, and each request is still built by that
provider's encoder (kept in :attr:`ScriptedProvider.requests`), so a replay exercises the same
code as a live run, minus the network. Replays shipped with deskpilot are named without a
path: ``scripted:calculator``. ``neutral`` replies are ``{"text": ..., "tool_calls":
[{"name": ..., "args": {...}}]}`` or a plain string (text-protocol blocks are parsed from it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    ToolCall,
    ToolProtocol,
    new_call_id,
)
from deskpilot.agent.providers.anthropic import AnthropicProvider
from deskpilot.agent.providers.base import Provider, Request
from deskpilot.agent.providers.compatible import CompatibleProvider
from deskpilot.agent.providers.gemini import GeminiProvider
from deskpilot.agent.providers.openai import OpenAIProvider
from deskpilot.errors import ProviderError, ProviderNotConfigured
from deskpilot.tools.base import ToolSpec

WIRE_FORMATS: dict[str, type[Provider]] = {
    "anthropic": AnthropicProvider,
    "openai": OpenAIProvider,
    "compatible": CompatibleProvider,
    "gemini": GeminiProvider,
}


def packaged_replay(name: str) -> Path | None:
    """A replay shipped with deskpilot (``scripted:calculator``), if ``name`` names one."""
    if not name.replace("-", "").replace("_", "").isalnum():
        return None
    path = Path(str(resources.files("deskpilot"))) / "data" / "replays" / f"{name}.json"
    return path if path.is_file() else None


def load_script(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProviderNotConfigured(
            f"scripted:{path}: cannot read the replies file ({exc.strerror})"
        ) from exc
    except ValueError as exc:
        raise ProviderNotConfigured(f"scripted:{path}: not valid JSON ({exc})") from exc
    if isinstance(data, list):
        data = {"format": "neutral", "replies": data}
    if not isinstance(data, dict) or not isinstance(data.get("replies"), list):
        raise ProviderNotConfigured(
            f'scripted:{path}: expected {{"format": ..., "replies": [...]}} or a JSON list'
        )
    fmt = data.get("format", "neutral")
    if not isinstance(fmt, str) or (fmt != "neutral" and fmt not in WIRE_FORMATS):
        known = ", ".join([*WIRE_FORMATS, "neutral"])
        raise ProviderNotConfigured(f"scripted:{path}: unknown format {fmt!r} (use one of {known})")
    return data


class ScriptedProvider(Provider):
    name = "scripted"

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.path = Path(model).expanduser()
        if not self.path.exists():
            self.path = packaged_replay(model) or self.path
        script = load_script(self.path)
        self.format: str = script.get("format", "neutral")
        self.recorded_model = str(script.get("model") or "")
        self.title = str(script.get("label") or "")
        self.replies: list[Any] = list(script["replies"])
        self.requests: list[Request] = []
        self.position = 0
        wire = WIRE_FORMATS.get(self.format)
        self.wire = wire(self.recorded_model or "recorded", api_key="scripted") if wire else None

    @property
    def label(self) -> str:
        what = f"{self.format}:{self.recorded_model}" if self.recorded_model else self.format
        title = f" ({self.title})" if self.title else ""
        return f"replay, not a live model: recorded {what} replies from {self.path.name}{title}"

    async def complete(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSpec],
        *,
        tool_protocol: ToolProtocol | None = None,
    ) -> AssistantTurn:
        protocol = self.resolve_protocol(tool_protocol)
        self.requests.append(self.build_request(conversation, tools, protocol))
        if self.position >= len(self.replies):
            raise ProviderError(
                f"scripted: no recorded reply left in {self.path} "
                f"({len(self.replies)} used); the run went further than the recording"
            )
        reply = self.replies[self.position]
        self.position += 1
        turn = self.parse_response(reply if isinstance(reply, dict) else {"text": reply}, protocol)
        turn.model = self.spec
        return turn

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        if self.wire is not None:
            return self.wire.build_request(conversation, tools, protocol)
        return (
            "scripted://",
            {},
            {"messages": len(conversation.messages), "tools": [t.name for t in tools]},
        )

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        if self.wire is not None:
            return self.wire.parse_response(data, protocol)
        calls = []
        for raw in data.get("tool_calls") or []:
            if not isinstance(raw, dict):
                raise ProviderError(f"scripted: a tool call in {self.path} is not an object")
            args = raw.get("args", raw.get("arguments", {}))
            calls.append(
                ToolCall(
                    id=str(raw.get("id") or new_call_id()),
                    name=str(raw.get("name", "")),
                    arguments=args if isinstance(args, dict) else {},
                )
            )
        # text-protocol blocks in a neutral reply are parsed whatever protocol the run uses
        turn = self.turn(str(data.get("text", "")), "text", calls=calls)
        turn.protocol = protocol
        return turn
