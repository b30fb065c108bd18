"""``scripted:FILE`` — replay recorded model replies, for demos and tests.

The file holds replies in a real provider's wire format, replayed in order, one per request::

    {
      "format": "anthropic",            # anthropic | openai | compatible | gemini | neutral
      "model": "claude-sonnet-4-5",     # what was recorded (shown in the replay label)
      "label": "Calculator demo",       # optional
      "replies": [ {"id": "msg_01…", "type": "message", "content": [...], ...}, ... ]
    }

A replay is the recorded vendor's own adapter with a :class:`RecordedTransport` in place of
the network: each request is built by that adapter's encoder, posted through the production
HTTP client (:class:`~deskpilot.agent.providers.http.HttpClient`), answered by the next
recorded reply, and parsed by the adapter's parser — function calling and computer use alike.
What was sent is kept (:attr:`ScriptedProvider.requests`: url, headers, JSON body). Replays
shipped with deskpilot are named without a path: ``scripted:calculator``. ``neutral`` replies
are ``{"text": ..., "tool_calls": [{"name": ..., "args": {...}}]}`` or a plain string
(text-protocol blocks are parsed from it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import httpx

from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    ToolCall,
    ToolProtocol,
    new_call_id,
)
from deskpilot.agent.providers.base import Provider, Request
from deskpilot.agent.providers.http import HttpClient
from deskpilot.agent.providers.registry import ADAPTERS
from deskpilot.errors import ProviderError, ProviderNotConfigured
from deskpilot.native.scaling import Viewport
from deskpilot.native.wire import ComputerWire, WireSetup
from deskpilot.tools.base import ToolSpec

#: the endpoint of a ``neutral`` replay (answered by the recording, never the network)
NEUTRAL_URL = "http://scripted.invalid/replay"


class RecordedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that answers each request with the next recorded reply (JSON) and
    keeps what was sent; past the end of the recording, a ProviderError says so."""

    def __init__(self, replies: Sequence[Any], source: str) -> None:
        self.replies = list(replies)
        self.source = source
        self.position = 0
        self.requests: list[Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sent = await request.aread()
        body = json.loads(sent) if sent else {}
        self.requests.append((str(request.url), dict(request.headers), body))
        if self.position >= len(self.replies):
            raise ProviderError(
                f"scripted: no recorded reply left in {self.source} "
                f"({len(self.replies)} used); the run went further than the recording"
            )
        reply = self.replies[self.position]
        self.position += 1
        return httpx.Response(200, json=reply, request=request)


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
    if not isinstance(fmt, str) or (fmt != "neutral" and fmt not in ADAPTERS):
        known = ", ".join([*ADAPTERS, "neutral"])
        raise ProviderNotConfigured(f"scripted:{path}: unknown format {fmt!r} (use one of {known})")
    return data


class ScriptedProvider(Provider):
    name = "scripted"
    needs_key = False
    supports_native_tools = True

    def __init__(self, model: str, **kwargs: Any) -> None:
        path = Path(model).expanduser()
        if not path.exists():
            path = packaged_replay(model) or path
        script = load_script(path)
        self.path = path
        self.format: str = script.get("format", "neutral")
        self.recorded_model = str(script.get("model") or "")
        self.title = str(script.get("label") or "")
        replies = list(script["replies"])
        if self.format == "neutral":  # a plain string is a reply's text
            replies = [r if isinstance(r, dict) else {"text": r} for r in replies]
        self.transport = RecordedTransport(replies, str(path))
        kwargs["http"] = HttpClient(transport=self.transport)
        super().__init__(model, **kwargs)
        adapter = ADAPTERS.get(self.format)
        self.wire = (
            adapter(self.recorded_model or adapter.replay_model or "recorded", api_key="scripted")
            if adapter
            else None
        )

    @property
    def label(self) -> str:
        what = f"{self.format}:{self.recorded_model}" if self.recorded_model else self.format
        title = f" ({self.title})" if self.title else ""
        return f"replay, not a live model: recorded {what} replies from {self.path.name}{title}"

    @property
    def requests(self) -> list[Request]:
        """What was sent, in order: (url, headers, JSON body)."""
        return self.transport.requests

    @property
    def position(self) -> int:
        """How many recorded replies were used (settable: a resumed run carries on)."""
        return self.transport.position

    @position.setter
    def position(self, value: int) -> None:
        self.transport.position = value

    def endpoint(self) -> str:
        return self.wire.endpoint() if self.wire is not None else NEUTRAL_URL

    def headers(self) -> dict[str, str]:
        return self.wire.headers() if self.wire is not None else super().headers()

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        if self.wire is not None:
            return self.wire.build_request(conversation, tools, protocol)
        body = {"messages": len(conversation.messages), "tools": [t.name for t in tools]}
        return NEUTRAL_URL, self.headers(), body

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

    # -- computer use: the recorded vendor's wire ----------------------------------------------

    def computer_model(self) -> str:
        return self.wire.model if self.wire is not None else ""

    def computer_viewport(self, width: int, height: int) -> Viewport:
        return self._recorded().computer_viewport(width, height)

    def computer_wire(self, setup: WireSetup) -> ComputerWire:
        return self._recorded().computer_wire(setup)

    def _recorded(self) -> Provider:
        if self.wire is None:
            raise ProviderNotConfigured(f"scripted:{self.path} holds {self.format!r} replies")
        return self.wire
