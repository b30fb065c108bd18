"""The one interface every model provider implements, and what they share.

A provider is one vendor's adapter: its endpoint, its key, one HTTP client, and the vendor's
wire formats. Function calling turns the neutral
:class:`~deskpilot.agent.conversation.Conversation` into the wire format, posts it, and parses
the reply into an :class:`AssistantTurn`::

    turn = await provider.complete(conversation, tools, tool_protocol="native")

A vendor with a native computer tool also speaks its computer-use wire: :meth:`Provider.
computer_wire` gives a :class:`~deskpilot.native.wire.ComputerWire` (pure, it builds bodies and
parses replies) whose bodies go out through :meth:`Provider.post` — the same endpoint, headers
and HTTP client as function calling::

    viewport = provider.computer_viewport(1280, 800)
    wire = provider.computer_wire(WireSetup(provider.computer_model(), viewport))
    reply = await provider.post(wire.say(goal, screenshot), wire.headers())

``tool_protocol`` is ``native`` (the provider's function calling) or ``text`` (the
provider-independent ``@@TOOL@@`` protocol, see :mod:`deskpilot.agent.textproto`). History is
rendered in the protocol of the *current* request, whichever protocol or provider produced it,
so both can change in the middle of a conversation. ``tools=()`` asks for an answer without
tools (the step budget's last call).

Subclasses implement :meth:`Provider.endpoint`, :meth:`Provider.headers`,
:meth:`Provider.build_request` and :meth:`Provider.parse_response` (pure functions of data, also
used by the ``scripted`` provider to replay recorded replies); a vendor with a computer tool
also :meth:`Provider.speaks_computer`, :meth:`Provider.computer_viewport` and
:meth:`Provider.computer_wire`.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
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
from deskpilot.errors import ProviderError, ProviderNotConfigured
from deskpilot.native.scaling import Viewport
from deskpilot.native.wire import OMITTED_IMAGE, ComputerWire, WireSetup
from deskpilot.tools.base import ToolSpec

Request = tuple[str, dict[str, str], dict[str, Any]]  # url, headers, JSON body

#: How many of the most recent images are sent; older ones are replaced by a note.
KEEP_IMAGES = 3
#: How many times a reply that stops with ``Provider.ask_again`` is asked again.
ASK_AGAIN = 2


class Provider(ABC):
    """A model behind an HTTP API. Construct with :func:`deskpilot.agent.providers.get_provider`."""

    name: ClassVar[str]
    default_base_url: ClassVar[str] = ""
    supports_native_tools: ClassVar[bool] = True
    #: an API key is required (get_provider says how to set one when it is missing)
    needs_key: ClassVar[bool] = True
    #: why no model of this provider has a native computer tool ("" when some have)
    no_computer_tool: ClassVar[str] = ""
    #: the model a replay recorded in this wire format stands for when it names none
    replay_model: ClassVar[str] = ""
    #: (stop reason, what it means): a reply that stops so is asked again, twice at most
    ask_again: ClassVar[tuple[str, str] | None] = None

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

    def endpoint(self) -> str:
        """The URL both wires POST to."""
        raise NotImplementedError(f"{type(self).__name__} has no endpoint")

    def headers(self) -> dict[str, str]:
        """The provider's request headers (its key, its API version)."""
        return {"content-type": "application/json"}

    async def post(
        self, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """POST ``body`` to :meth:`endpoint` through the provider's HTTP client (retries,
        timeouts, errors as :class:`~deskpilot.errors.ProviderError`)."""
        return await self.http.post_json(
            self.name, self.endpoint(), {**self.headers(), **(headers or {})}, body
        )

    async def complete(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSpec],
        *,
        tool_protocol: ToolProtocol | None = None,
    ) -> AssistantTurn:
        protocol = self.resolve_protocol(tool_protocol)
        turn = await self._complete_once(conversation, tools, protocol)
        for _ in range(ASK_AGAIN):
            if self.ask_again is None or turn.stop_reason != self.ask_again[0]:
                break
            turn = await self._complete_once(conversation, tools, protocol)
        if self.ask_again is not None and turn.stop_reason == self.ask_again[0]:
            raise ProviderError(f"{self.name}: {self.ask_again[1]} {ASK_AGAIN + 1} times in a row")
        turn.model = self.spec
        return turn

    async def _complete_once(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> AssistantTurn:
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

    # -- the computer-use wire (vendors with a native computer tool) -----------------------

    def computer_model(self) -> str:
        """The model whose computer tool is spoken (a replay: the model it recorded)."""
        return self.model

    @classmethod
    def speaks_computer(cls, model: str) -> bool:
        """True when ``model`` has a native computer tool this adapter speaks."""
        return False

    def has_computer_tool(self) -> bool:
        """True when this provider's model has a native computer tool deskpilot speaks."""
        return self.speaks_computer(self.computer_model())

    def computer_viewport(self, width: int, height: int) -> Viewport:
        """The viewport the model gets for a target of width×height pixels."""
        raise ProviderNotConfigured(f"{self.spec} has no native computer tool")

    def computer_wire(self, setup: WireSetup) -> ComputerWire:
        """A computer-use conversation opened with ``setup`` (its model: :meth:`computer_model`)."""
        raise ProviderNotConfigured(f"{self.spec} has no native computer tool")

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


def present(**fields: Any) -> dict[str, Any]:
    """The fields that have a value (None, "" and empty lists are left out of a body)."""
    return {key: value for key, value in fields.items() if value not in (None, "", [])}


def reply_items(data: Mapping[str, Any], key: str, provider: str) -> list[dict[str, Any]]:
    """The objects of the list ``data[key]`` a reply must hold (anything else in it is
    skipped); no such list is a ProviderError naming it."""
    items = data.get(key)
    if not isinstance(items, list):
        raise ProviderError(f"{provider}: unexpected reply (no {key} list): {str(data)[:200]}")
    return [item for item in items if isinstance(item, dict)]


#: where an image sits in a resent history: (the list holding it, its index, the block whose
#: inner list that is — or None for the turn's own list)
ImageSlot = tuple[list[Any], int, dict[str, Any] | None]


def image_slots(
    turns: Any,
    key: str,
    is_image: Callable[[Any], bool],
    inner: Callable[[dict[str, Any]], tuple[dict[str, Any], Any] | None],
) -> list[ImageSlot]:
    """Every image of a resent history (Anthropic's messages, Gemini's contents), oldest
    first: in a turn's ``key`` list, or one level down (``inner``: a block → (the block that
    holds the list, the list), e.g. a tool result's content)."""
    slots: list[ImageSlot] = []
    for turn in turns if isinstance(turns, list) else []:
        items = turn.get(key) if isinstance(turn, dict) else None
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if is_image(item):
                slots.append((items, index, None))
                continue
            found = inner(item) if isinstance(item, dict) else None
            if found is not None and isinstance(found[1], list):
                holder, nested = found
                slots += [(nested, j, holder) for j, x in enumerate(nested) if is_image(x)]
    return slots


def append_turn(turns: list[dict[str, Any]], role: str, key: str, items: Sequence[Any]) -> None:
    """Add ``items`` to the last of ``turns`` when it has ``role`` (APIs that want roles to
    alternate), else start a turn; ``key`` holds the items (``content``, ``parts``). The last
    turn is replaced, not changed in place: request bodies share it."""
    if turns and turns[-1].get("role") == role:
        last = turns[-1]
        held = last.get(key)
        turns[-1] = {**last, key: [*(held if isinstance(held, list) else []), *items]}
    else:
        turns.append({"role": role, key: list(items)})


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
