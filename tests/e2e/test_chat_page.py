"""``chat --page``: the page-helper instructions and tools, the subagent with the page tools,
8 steps per turn then a final answer; list_structure works with no browser at all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from deskpilot.agent.chat import ChatSession
from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.task import COMPUTER_USE_TOOLS
from deskpilot.config import Settings
from deskpilot.pages.tools import PAGE_TOOL_NAMES
from deskpilot.tools.context import ToolContext
from tests.e2e.conftest import Events


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


def test_page_mode_offers_the_page_tools_to_the_model_and_its_subagent(
    tmp_path: Path, agent_settings: Settings, fake_ctx: ToolContext, events: Events
) -> None:
    script = tmp_path / "page.json"
    replies = [
        call("list_structure"),
        call("computer_use_task", goal="look at the page"),
        call("list_structure"),  # the subagent
        {"text": "nothing saved yet"},  # the subagent's answer
        *[call("list_structure") for _ in range(6)],  # the parent uses up its 8 steps
        {"text": "Where things stand: nothing is saved."},
    ]
    script.write_text(json.dumps({"format": "neutral", "replies": replies}))

    async def go() -> tuple[ChatSession, Any]:
        provider = get_provider(f"scripted:{script}", agent_settings)
        chat = ChatSession(provider, fake_ctx, page=True)
        result = await chat.send("hide the cookie banner")
        await chat.aclose()
        return chat, result

    chat, result = asyncio.run(go())
    assert isinstance(chat.provider, ScriptedProvider)
    parent = chat.provider.requests[0][2]["tools"]
    assert parent == [*PAGE_TOOL_NAMES, "computer_use_task"]
    assert chat.conversation.system.startswith("You are deskpilot's page helper")
    sub = chat.provider.requests[2][2]["tools"]
    assert sub == [*COMPUTER_USE_TOOLS, *PAGE_TOOL_NAMES]
    assert result.steps == 8 and result.outcome == "needs_attention"
    assert result.answer.startswith("⚠ Step budget reached (8 steps)")
    assert result.answer.endswith("Where things stand: nothing is saved.")
    listed = [e for e in events if e.kind == "tool.result" and e.data["tool"] == "list_structure"]
    assert listed and all(e.data["ok"] for e in listed)
    assert "rule library is empty" in listed[0].data["text"]
