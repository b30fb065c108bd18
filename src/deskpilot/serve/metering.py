"""Every model call of a console session, as sent and as answered: tokens, and the raw exchange.

:class:`MeteredHttp` takes the place of a provider's HTTP client (``provider.http``), so it sees
each request body and reply exactly as they crossed the wire, whichever provider and whichever
loop (the element-tools loop and native computer use both post through it). For each call it
hands an :class:`Exchange` to the session: the reply's usage object as the provider sent it
(:func:`~deskpilot.serve.prices.usage_of`), and the request and reply for the "raw" view —
with images and other long base64 strings replaced by a note of their size, and without the
headers (they hold the API key).

Raw exchanges are kept in memory, the newest :data:`KEEP_RAW` characters' worth per session;
the usage of every call also goes to the audit log (``model.usage``), so costs survive a
restart while the raw bodies do not.
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from deskpilot.agent.providers.http import HttpClient
from deskpilot.errors import ProviderError
from deskpilot.serve.prices import Tokens, tokens, usage_of

#: Characters of raw exchanges kept per session (the oldest bodies go first; usage stays).
KEEP_RAW = 12_000_000
#: A string this long with no spaces is treated as binary data (base64) and elided.
LONG_DATA = 512
_DATA_URL = re.compile(r"^data:([\w.+-]+/[\w.+-]+);base64,")
_NO_SPACE = re.compile(r"^[A-Za-z0-9+/=_-]+$")


def elide(value: Any) -> Any:
    """``value`` (JSON data) with images and other long base64 strings replaced by a note."""
    if isinstance(value, dict):
        return {k: elide(v) for k, v in value.items()}
    if isinstance(value, list):
        return [elide(v) for v in value]
    if isinstance(value, str) and len(value) >= LONG_DATA:
        kind = _DATA_URL.match(value)
        if kind is not None:
            return f"[{kind.group(1)} data URL, {len(value):,} characters, not shown]"
        if _NO_SPACE.match(value[:LONG_DATA]) and _NO_SPACE.match(value[-64:]):
            return f"[base64 data, {len(value):,} characters, not shown]"
    return value


@dataclass
class Exchange:
    """One model call of a session."""

    n: int  # 1, 2, … within the session
    url: str
    started: float
    ms: float
    request: str  # the body sent, as JSON text (elided)
    response: str  # the reply, as JSON text (elided); "" when the call failed
    usage: dict[str, Any] = field(default_factory=dict)
    tokens: Tokens = field(default_factory=Tokens)
    error: str = ""
    run_id: str = ""

    def summary(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "url": self.url,
            "started": self.started,
            "ms": round(self.ms, 1),
            "usage": self.usage,
            "tokens": self.tokens.as_dict(),
            "error": self.error,
            "run_id": self.run_id,
            "raw": bool(self.request),
        }


class Exchanges:
    """A session's exchanges, with the raw bodies of the newest kept (see KEEP_RAW)."""

    def __init__(self, keep: int = KEEP_RAW) -> None:
        self.keep = keep
        self.all: OrderedDict[int, Exchange] = OrderedDict()
        self._size = 0

    def add(self, exchange: Exchange) -> None:
        self.all[exchange.n] = exchange
        self._size += len(exchange.request) + len(exchange.response)
        for old in self.all.values():
            if self._size <= self.keep or old is exchange:
                break
            self._size -= len(old.request) + len(old.response)
            old.request = old.response = ""

    def get(self, n: int) -> Exchange | None:
        return self.all.get(n)

    @property
    def count(self) -> int:
        return len(self.all)


def _json(value: Any) -> str:
    return json.dumps(elide(value), ensure_ascii=False, indent=1, default=str)


class MeteredHttp(HttpClient):
    """``inner`` (a provider's client), recording each call for ``record``."""

    def __init__(self, inner: HttpClient, record: Callable[[Exchange], None]) -> None:
        super().__init__(timeout=inner.timeout, retry=inner.retry)
        self.inner = inner
        self.record = record
        self.calls = 0

    async def post_json(
        self, provider: str, url: str, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        self.calls += 1
        n, started, t0 = self.calls, time.time(), time.monotonic()
        try:
            data = await self.inner.post_json(provider, url, headers, body)
        except ProviderError as exc:
            ms = 1000 * (time.monotonic() - t0)
            self.record(Exchange(n, url, started, ms, _json(body), "", error=str(exc)))
            raise
        usage = usage_of(data)
        ms = 1000 * (time.monotonic() - t0)
        self.record(Exchange(n, url, started, ms, _json(body), _json(data), usage, tokens(usage)))
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()
