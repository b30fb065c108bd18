"""The agent end to end on a real sandbox: recorded Anthropic replies (``scripted:calculator``)
drive the real loop, the nine tools and gnome-calculator; the answer says 84 and so does the
calculator's display."""

from __future__ import annotations

import re

import pytest

from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.events import Event
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")

GOAL = "In the calculator, work out 12*7 and tell me the result"


async def test_scripted_model_solves_the_calculator(
    ctx: ToolContext, apps: Apps, call: Call
) -> None:
    events: list[Event] = []
    ctx.audit = events.append
    provider = get_provider("scripted:calculator", ctx.settings)
    assert isinstance(provider, ScriptedProvider) and provider.format == "anthropic"
    result = await computer_use_task(GOAL, provider=provider, ctx=ctx)
    window = next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    await apps.adopt(window)
    results = [e.data for e in events if e.kind == "tool.result"]

    assert result.outcome == "done", result.answer
    assert "84" in result.answer
    assert window.app.app_id == "org.gnome.Calculator"
    display = re.search(r'^\s*textbox = "([^"]*)"', (await call("read_screen_ax")).text, re.M)
    assert display and display.group(1) == "84"
    assert [r["tool"] for r in results] == [
        "open_app",
        "read_screen_ax",
        "perform_sequence",
        "read_screen_ax",
    ]
    assert all(r["ok"] for r in results), results
    # the model was shown the real result before it answered
    last_read = result.conversation.messages[-2].results[0].text
    assert re.search(r'textbox = "84"', last_read), last_read
