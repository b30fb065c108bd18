"""The one interface every model provider implements, and what they share.

A provider turns the neutral :class:`~deskpilot.agent.conversation.Conversation` into its wire
format, posts it, and parses the reply into an :class:`AssistantTurn`::

    turn = await provider.complete(conversation, tools, tool_protocol="native")

``tool_protocol`` is ``native`` (the provider's function calling) or ``text`` (the
provider-independent ``@@TOOL@@`` protocol, see :mod:`deskpilot.agent.textproto`). History is
rendered in the protocol of the *current* request, whichever protocol or provider produced it,
so both can change in the middle of a conversation. ``tools=()`` asks for an answer without
tools (the step budget's last call).

Subclasses implement :meth:`Provider.build_request` and :meth:`Provider.parse_response` (pure
functions of data, also used by the ``scripted`` provider to replay recorded replies).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from deskpilot.agent import textproto
from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    Message,
    ToolCall,
    ToolProtocol,
)
from deskpilot.agent.providers.http import HttpClient
from deskpilot.errors import ProviderError
from deskpilot.events import Image
from deskpilot.tools.base import ToolSpec

Request = tuple[str, dict[str, str], dict[str, Any]]  # url, headers, JSON body

#: How many of the most recent images are sent; older ones are replaced by a note.
KEEP_IMAGES = 3
OMITTED_IMAGE = "[an older image was omitted to save context]"


class Provider(ABC):
    """A model behind an HTTP API. Construct with :func:`deskpilot.agent.providers.get_provider`."""

    name: ClassVar[str]
    default_base_url: ClassVar[str] = ""
    supports_native_tools: ClassVar[bool] = True

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http: HttpClient | None = None,
        max_tokens: int = 4096,
        keep_images: int = KEEP_IMAGES,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.http = http or HttpClient()
        self.max_tokens = max_tokens
        self.keep_images = keep_images

    @property
    def spec(self) -> str:
        """``provider:model``, as written in ``--model``."""
        return f"{self.name}:{self.model}"

    @property
    def label(self) -> str:
        return self.spec

    def resolve_protocol(self, requested: ToolProtocol | None) -> ToolProtocol:
        if requested == "native" and not self.supports_native_tools:
            return "text"
        return requested or ("native" if self.supports_native_tools else "text")

    async def complete(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSpec],
        *,
        tool_protocol: ToolProtocol | None = None,
    ) -> AssistantTurn:
        protocol = self.resolve_protocol(tool_protocol)
        url, headers, body = self.build_request(conversation, tools, protocol)
        data = await self.http.post_json(self.name, url, headers, body)
        try:
            return self.parse_response(data, protocol)
        except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
            # a reply in an unexpected shape (a proxy, an older server): the run ends with
            # "needs attention" and this message, not a traceback
            raise ProviderError(
                f"{self.name}: unexpected reply shape ({exc!r}): {str(data)[:200]}"
            ) from exc

    @abstractmethod
    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        """The HTTP request for one completion."""

    @abstractmethod
    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        """A reply body → an AssistantTurn (text-protocol blocks parsed when ``text``)."""

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> Provider:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- shared helpers --------------------------------------------------------------------

    def system_prompt(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> str:
        if protocol == "text" and tools:
            return f"{conversation.system}\n\n{textproto.tools_prompt(tools)}".strip()
        return conversation.system

    def messages(self, conversation: Conversation) -> list[Message]:
        """The messages to send, with all but the newest ``keep_images`` images omitted."""
        return prune_images(conversation.messages, self.keep_images)

    def turn(
        self,
        text: str,
        protocol: ToolProtocol,
        *,
        calls: Sequence[ToolCall] = (),
        stop_reason: str = "",
        usage: Mapping[str, Any] | None = None,
    ) -> AssistantTurn:
        """Build the turn; under the text protocol, parse tool blocks out of ``text``.
        ``usage`` is the reply's usage object as sent (only its integer counts are kept)."""
        notes: list[str] = []
        found = list(calls)
        if protocol == "text":
            parsed = textproto.parse_reply(text)
            text = parsed.text
            found += parsed.calls
            if parsed.forged:
                notes.append("the reply contained a result marker; it was cut off there")
            if parsed.discarded:
                notes.append("text after the last tool block was discarded")
        return AssistantTurn(
            text=text.strip(),
            tool_calls=found,
            model=self.spec,
            protocol=protocol,
            stop_reason=stop_reason,
            usage={k: int(v) for k, v in (usage or {}).items() if isinstance(v, int)},
            notes=notes,
        )


def prune_images(messages: Sequence[Message], keep: int) -> list[Message]:
    total = sum(len(m.images) + sum(len(r.images) for r in m.results) for m in messages)
    drop = max(0, total - keep)
    if drop == 0:
        return list(messages)
    out: list[Message] = []
    for message in messages:
        if drop and message.images:
            kept = message.images[drop:] if drop < len(message.images) else []
            dropped = len(message.images) - len(kept)
            drop -= dropped
            message = replace(message, images=kept, text=_note(message.text, dropped))
        if drop and any(r.images for r in message.results):
            results = []
            for result in message.results:
                if drop and result.images:
                    kept = result.images[drop:] if drop < len(result.images) else []
                    dropped = len(result.images) - len(kept)
                    drop -= dropped
                    result = replace(result, images=kept, text=_note(result.text, dropped))
                results.append(result)
            message = replace(message, results=results)
        out.append(message)
    return out


def _note(text: str, dropped: int) -> str:
    return f"{text}\n{OMITTED_IMAGE}" if dropped else text


_ID_OK = re.compile(r"[^A-Za-z0-9_-]")


def safe_id(call_id: str, prefix: str = "call") -> str:
    """A call id every provider accepts (``^[A-Za-z0-9_-]{1,64}$``)."""
    cleaned = _ID_OK.sub("_", call_id)[:64]
    return cleaned or f"{prefix}_0"


def safe_name(name: str) -> str:
    """A function name every provider accepts in history (malformed calls have none)."""
    cleaned = _ID_OK.sub("_", name)[:64]
    return cleaned or "invalid_tool_call"


def args_from_json(name: str, raw: str) -> tuple[dict[str, Any], str | None]:
    """Function-call arguments as sent by a provider (a JSON string) → (dict, error)."""
    text = raw.strip() or "{}"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}, (
            f"Invalid arguments for {name}: not valid JSON; nothing was run. "
            "Call it again with a JSON object."
        )
    if not isinstance(value, dict):
        return {}, f"Invalid arguments for {name}: expected a JSON object; nothing was run."
    return value, None


def result_text(text: str, is_error: bool) -> str:
    return f"ERROR: {text}" if is_error and not text.startswith("ERROR") else text


def image_count_note(images: Sequence[Image]) -> str:
    return f"({len(images)} image(s) follow)" if images else ""
