"""HTTP behaviour of the providers against a local server: retries with backoff honouring
Retry-After on 429/5xx, no retry on other errors, timeouts, readable errors."""

from __future__ import annotations

import asyncio
import re

import pytest

from deskpilot.agent.conversation import Conversation
from deskpilot.agent.providers import HttpClient, RetryPolicy, get_provider
from deskpilot.config import Settings
from deskpilot.errors import ProviderError, ProviderNotConfigured
from tests.e2e.wire import Decision, ModelServer, View


def hello(view: View) -> Decision:
    return Decision("hello")


def conversation() -> Conversation:
    c = Conversation(system="Be brief.")
    c.add_user("hi")
    return c


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def test_retries_429_and_5xx_honouring_retry_after(agent_settings: Settings) -> None:
    sleeps = Sleeps()
    with ModelServer("anthropic", hello) as server:
        server.fail_next = [
            (
                429,
                {"retry-after": "7"},
                {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            ),
            (529, {}, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
            (503, {"retry-after-ms": "250"}, {"error": {"message": "unavailable"}}),
        ]
        http = HttpClient(retry=RetryPolicy(attempts=4, base_delay=1.0, sleep=sleeps))
        provider = get_provider("anthropic:m", agent_settings, base_url=server.url, http=http)

        async def go() -> str:
            async with provider:
                return (await provider.complete(conversation(), [])).text

        assert asyncio.run(go()) == "hello"
    assert len(server.requests) == 4
    assert sleeps[0] == 7.0  # Retry-After in seconds
    assert 1.0 <= sleeps[1] <= 2.0  # backoff for attempt 1: 2 s with up to 50% jitter
    assert sleeps[2] == 0.25  # retry-after-ms


def test_gives_up_after_the_last_attempt(agent_settings: Settings) -> None:
    sleeps = Sleeps()
    with ModelServer("openai", hello) as server:
        server.fail_next = [(500, {}, {"error": {"message": "boom"}})] * 3
        http = HttpClient(retry=RetryPolicy(attempts=3, sleep=sleeps))
        provider = get_provider("openai:m", agent_settings, base_url=server.url, http=http)
        with pytest.raises(ProviderError, match=r"HTTP 500: boom \(gave up after 3 tries\)"):
            asyncio.run(provider.complete(conversation(), []))
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_auth_errors_are_not_retried_and_say_what_to_check(agent_settings: Settings) -> None:
    with ModelServer("gemini", hello) as server:
        server.fail_next = [(401, {}, {"error": {"code": 401, "message": "API key not valid"}})]
        provider = get_provider("gemini:m", agent_settings, base_url=server.url)
        with pytest.raises(ProviderError, match="API key not valid — check the API key"):
            asyncio.run(provider.complete(conversation(), []))
    assert len(server.requests) == 1


def test_a_long_retry_after_is_reported_not_waited(agent_settings: Settings) -> None:
    sleeps = Sleeps()
    with ModelServer("compatible", hello) as server:
        server.fail_next = [(429, {"retry-after": "3600"}, {"error": {"message": "quota"}})]
        http = HttpClient(retry=RetryPolicy(sleep=sleeps))
        provider = get_provider("compatible:m", agent_settings, base_url=server.url, http=http)
        with pytest.raises(ProviderError, match="retry after 3600 s"):
            asyncio.run(provider.complete(conversation(), []))
    assert sleeps == []


def test_timeouts_become_provider_errors(agent_settings: Settings) -> None:
    sleeps = Sleeps()
    with ModelServer("anthropic", hello) as server:
        server.hang = True
        http = HttpClient(timeout=0.2, retry=RetryPolicy(attempts=2, sleep=sleeps))
        provider = get_provider("anthropic:m", agent_settings, base_url=server.url, http=http)
        with pytest.raises(ProviderError, match=r"no answer from .* within 0\.2 s"):
            asyncio.run(provider.complete(conversation(), []))
    assert len(server.requests) == 2 and len(sleeps) == 1


def test_unreachable_server(agent_settings: Settings) -> None:
    http = HttpClient(retry=RetryPolicy(attempts=1))
    provider = get_provider(
        "compatible:m", agent_settings, base_url="http://127.0.0.1:9/v1", http=http
    )
    with pytest.raises(ProviderError, match=re.escape("cannot reach http://127.0.0.1:9/v1")):
        asyncio.run(provider.complete(conversation(), []))


def test_a_reply_in_an_unexpected_shape_is_a_provider_error(agent_settings: Settings) -> None:
    with ModelServer("compatible", hello) as server:
        server.fail_next = [(200, {}, {"choices": [{"message": "hi"}]})]
        provider = get_provider("compatible:m", agent_settings, base_url=server.url)
        with pytest.raises(ProviderError, match="compatible: unexpected reply shape"):
            asyncio.run(provider.complete(conversation(), []))


def test_gemini_malformed_calls_end_in_an_error_not_an_empty_answer(
    agent_settings: Settings,
) -> None:
    malformed = {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "content": {}}]}
    with ModelServer("gemini", hello) as server:
        server.fail_next = [(200, {}, malformed)] * 3
        provider = get_provider("gemini:m", agent_settings, base_url=server.url)
        with pytest.raises(ProviderError, match="malformed function call 3 times"):
            asyncio.run(provider.complete(conversation(), []))
    assert len(server.requests) == 3


def test_a_base_url_without_its_scheme_is_refused_at_once(agent_settings: Settings) -> None:
    with pytest.raises(ProviderNotConfigured, match=r"needs its scheme: http://127\.0\.0\.1"):
        get_provider("compatible:m", agent_settings, base_url="127.0.0.1:8000/v1")
