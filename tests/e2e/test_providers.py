"""Each provider adapter against a local server speaking its wire format: native and text
tool calling, the real loop and the nine tools over FakeDesktop, request shapes checked."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from deskpilot.agent.conversation import AssistantTurn, Conversation, ToolProtocol
from deskpilot.agent.element import ElementTools
from deskpilot.agent.loop import AgentRun, RunOptions
from deskpilot.agent.providers import Provider, get_provider
from deskpilot.agent.providers.base import Request
from deskpilot.agent.providers.gemini import FOREIGN_SIGNATURE
from deskpilot.agent.task import computer_use_task
from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.tools.base import ToolSpec
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.e2e import brains
from tests.e2e.conftest import Events
from tests.e2e.shapes import check
from tests.e2e.wire import ModelServer

PROVIDERS = ["anthropic", "openai", "compatible", "gemini"]


def spec(provider: str) -> str:
    return f"{provider}:test-model"


@pytest.mark.parametrize("protocol", ["native", "text"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_provider_solves_the_calculator(
    provider: str,
    protocol: ToolProtocol,
    agent_settings: Settings,
    fake_ctx: ToolContext,
    fake_desktop: FakeDesktop,
    events: Events,
) -> None:
    with ModelServer(provider, brains.calculator) as server:

        async def go() -> None:
            model = get_provider(spec(provider), agent_settings, base_url=server.url)
            async with model:
                result = await computer_use_task(
                    brains.GOAL,
                    provider=model,
                    ctx=fake_ctx,
                    options=RunOptions(max_steps=10, tool_protocol=protocol),
                )
            assert result.outcome == "done", result.answer
            assert result.exit_code == 0
            assert "84" in result.answer

        asyncio.run(go())

    assert fake_desktop.display_text(fake_desktop.windows[0].info.handle) == "84"
    assert len(server.requests) == 5
    for recorded in server.requests:
        check(provider, recorded)
    first = server.views[0]
    assert first.mode == protocol
    assert sorted(first.tools) == sorted(computer_use_tools().names())
    called = [e.data["tool"] for e in events.of("tool.call")]
    assert called == ["open_app", "read_screen_ax", "perform_sequence", "read_screen_ax"]
    assert events.kinds()[0] == "run.started" and events.kinds()[-1] == "run.finished"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_screenshots_travel_as_images(
    provider: str, agent_settings: Settings, fake_ctx: ToolContext
) -> None:
    with ModelServer(provider, brains.screenshot) as server:

        async def go() -> str:
            model = get_provider(spec(provider), agent_settings, base_url=server.url)
            async with model:
                result = await computer_use_task(
                    "screenshot the calculator", provider=model, ctx=fake_ctx
                )
            return result.answer

        answer = asyncio.run(go())
    assert answer == "I got 1 image(s)."
    for recorded in server.requests:
        check(provider, recorded)


class Relay(Provider):
    """Each call goes to the next provider in turn: the provider changes mid-conversation."""

    name = "relay"

    def __init__(self, providers: Sequence[tuple[Provider, ToolProtocol]]) -> None:
        super().__init__("relay")
        self.providers = list(providers)
        self.calls = 0

    async def complete(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSpec],
        *,
        tool_protocol: ToolProtocol | None = None,
    ) -> AssistantTurn:
        provider, protocol = self.providers[min(self.calls, len(self.providers) - 1)]
        self.calls += 1
        return await provider.complete(conversation, tools, tool_protocol=protocol)

    def build_request(self, *args: object) -> Request:
        raise NotImplementedError

    def parse_response(self, *args: object) -> AssistantTurn:
        raise NotImplementedError


def test_provider_switch_mid_conversation(
    agent_settings: Settings, fake_ctx: ToolContext, fake_desktop: FakeDesktop
) -> None:
    """anthropic (native) → openai (native) → gemini (native) → compatible (text) → anthropic
    (text): each sees the others' calls and results in its own format, and the task completes."""
    order: list[tuple[str, ToolProtocol]] = [
        ("anthropic", "native"),
        ("openai", "native"),
        ("gemini", "native"),
        ("compatible", "text"),
        ("anthropic", "text"),
    ]
    servers = {name: ModelServer(name, brains.calculator) for name in PROVIDERS}
    for server in servers.values():
        server.__enter__()
    try:

        async def go() -> Conversation:
            models = [
                (get_provider(spec(n), agent_settings, base_url=servers[n].url), p)
                for n, p in order
            ]
            relay = Relay(models)
            conversation = Conversation(system="You operate the desktop.")
            conversation.add_user(brains.GOAL)
            acting = ElementTools(relay, computer_use_tools(), conversation)
            result = await AgentRun(acting, fake_ctx, RunOptions(max_steps=10)).run()
            for model, _ in models:
                await model.aclose()
            assert result.outcome == "done" and "84" in result.answer, result.answer
            return conversation

        conversation = asyncio.run(go())
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)

    writers = [m.model for m in conversation.messages if m.role == "assistant"]
    assert writers == [f"{n}:test-model" for n, _ in order]
    for name, server in servers.items():
        for recorded in server.requests:
            check(name, recorded)
    # openai saw anthropic's call as a function_call, answered by its output
    openai_input = servers["openai"].requests[0].body["input"]
    call = next(i for i in openai_input if i.get("type") == "function_call")
    assert call["name"] == "open_app" and call["call_id"].startswith("toolu_")
    # gemini got the foreign calls signed with the documented placeholder
    contents = servers["gemini"].requests[0].body["contents"]
    signed = [p["thoughtSignature"] for c in contents for p in c["parts"] if "functionCall" in p]
    assert signed == [FOREIGN_SIGNATURE, FOREIGN_SIGNATURE]
    # the text-protocol request renders every earlier native call as a @@TOOL@@ block
    messages = servers["compatible"].requests[0].body["messages"]
    assistant = [m["content"] for m in messages if m["role"] == "assistant"]
    assert assistant and all(text.count("@@TOOL@@") == 1 for text in assistant)
    results = [m["content"] for m in messages if m["role"] == "user"][1:]
    assert results and all("@@RESULT" in text for text in results)
    # the second anthropic request (text) carries gemini's signed call back as plain text
    body = servers["anthropic"].requests[1].body
    assert "tools" not in body and body["stop_sequences"] == ["@@RESULT"]
