"""HTTP for providers: JSON POST with retries (429/5xx, honouring Retry-After) and timeouts.

Foreign errors are translated here, at the seam, into :class:`~deskpilot.errors.ProviderError`
with a message that names the provider and says what to do. Every request a provider makes —
function calling, computer use, a replay — goes through :meth:`HttpClient.post_json`; what
answers is httpx's transport: the network, or a recorded one
(:class:`~deskpilot.agent.providers.scripted.RecordedTransport`) for replays and tests.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import logging
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from deskpilot.errors import ProviderError

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass
class RetryPolicy:
    attempts: int = 4  # total tries, first included
    base_delay: float = 1.0  # doubled after every failure, with jitter
    max_delay: float = 30.0
    max_retry_after: float = 120.0  # a longer Retry-After is reported, not waited for
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)

    def backoff(self, attempt: int) -> float:
        delay: float = min(self.max_delay, self.base_delay * 2.0**attempt)
        return delay * (0.5 + random.random() / 2)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_message(response: httpx.Response) -> str:
    """The provider's own error text, from the usual JSON shapes, else the body's start."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:300].strip()
    node: Any = data
    if isinstance(node, list) and node:
        node = node[0]
    if isinstance(node, dict):
        err = node.get("error", node)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("msg") or err.get("detail")
            if msg:
                return str(msg)[:500]
        elif isinstance(err, str):
            return err[:500]
    return json.dumps(data)[:300]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS settings (its CA bundle, or SSL_CERT_FILE/SSL_CERT_DIR), made once
    per process: loading the CA bundle costs ~50 ms of CPU, and every client made its own."""
    return httpx.create_ssl_context()


class HttpClient:
    """A thin wrapper over :class:`httpx.AsyncClient` (injectable, closeable). ``transport``
    answers the requests instead of the network (a recording)."""

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float = 180.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._client = client
        self._owned = client is None
        self._transport = transport
        self.timeout = timeout
        self.retry = retry or RetryPolicy()

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, connect=15.0),
                transport=self._transport,
                verify=tls_context(),
            )
        return self._client

    async def aclose(self) -> None:
        if self._owned and self._client is not None:
            await self._client.aclose()
            self._client = None

    async def post_json(
        self, provider: str, url: str, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        policy = self.retry
        last = ""
        for attempt in range(policy.attempts):
            wait: float | None = None
            try:
                response = await self.client.post(url, headers=dict(headers), json=body)
            except httpx.TimeoutException as exc:
                last = f"{provider}: no answer from {url} within {self.timeout:g} s"
                if attempt + 1 >= policy.attempts:
                    raise ProviderError(last) from exc
            except httpx.TransportError as exc:
                last = f"{provider}: cannot reach {url} ({type(exc).__name__}: {exc})"
                if attempt + 1 >= policy.attempts:
                    raise ProviderError(last) from exc
            else:
                if response.status_code < 300:
                    return _json_body(provider, response)
                last = f"{provider}: HTTP {response.status_code}: {error_message(response)}"
                if response.status_code not in RETRY_STATUS:
                    raise ProviderError(_explain(provider, response.status_code, last))
                if attempt + 1 >= policy.attempts:
                    raise ProviderError(f"{last} (gave up after {policy.attempts} tries)")
                wait = retry_after(response.headers)
                if wait is not None and wait > policy.max_retry_after:
                    raise ProviderError(f"{last}; the server asks to retry after {wait:.0f} s")
            delay = policy.backoff(attempt) if wait is None else wait
            log.info("%s; retrying in %.1f s", last, delay)
            await policy.sleep(delay)
        raise ProviderError(last or f"{provider}: request failed")


def _json_body(provider: str, response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError as exc:
        raise ProviderError(f"{provider}: the reply is not JSON: {response.text[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ProviderError(f"{provider}: expected a JSON object, got {type(data).__name__}")
    return data


def _explain(provider: str, status: int, message: str) -> str:
    if status in (401, 403):
        return f"{message} — check the API key for {provider} (see `deskpilot run --help`)"
    if status == 404:
        return f"{message} — check the model name and the base URL"
    return message
