"""Every way a person's words start a run grants what they name, through the one agent loop:
``computer_use_task`` (``deskpilot run``, a console session, an eval trial), a ``deskpilot chat``
turn, and ``follow_up`` (a console's next message). A goal a model wrote — the
``computer_use_task`` tool's — grants nothing by itself: it runs under the grants of the turn
around it. Each run records what its goal grants (``policy.grants``) right after
``run.started``; the grants end with the run.

Real loop, tools and door; a FakeDesktop whose note app has a Send button (its log says
whether Send was clicked); scripted models in the neutral format; nobody to ask (DenyAll), so
whatever a goal does not grant is declined.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from deskpilot.agent.chat import ChatSession
from deskpilot.agent.loop import follow_up
from deskpilot.agent.providers import ScriptedProvider, get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import Event
from deskpilot.policy import DenyAll
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext

pytestmark = pytest.mark.asyncio


class Rig:
    def __init__(self, settings: Settings) -> None:
        self.desktop = FakeDesktop()
        window = self.desktop.add_window(FAKE_APPS[1], "Note to Ann")  # a text area and Send
        self.window = window.stable_id
        self.events: list[Event] = []
        self.ctx = ToolContext(
            self.desktop,
            settings.with_overrides(confirm="consequential"),
            audit=self.events.append,
            session=Session(),
            approver=DenyAll(),
            surface="run",
        )

    async def send_id(self) -> str:
        """The Send button's ID (read through the door, in the session the runs share)."""
        read = await computer_use_tools().call(
            "read_screen_ax", {"windowID": self.window}, self.ctx
        )
        found = re.search(r'button "Send".*@(\S+)', read.text)
        assert found, read.text
        return found.group(1)

    def sent(self) -> bool:
        return "click Send" in self.desktop.log

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def decided(self) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.kind == "policy.decided"]

    def grants(self) -> list[Event]:
        return [e for e in self.events if e.kind == "policy.grants"]


def click(element: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "perform", "args": {"action": "click", "elementID": element}}]}


def model(tmp_path: Path, settings: Settings, replies: list[Any]) -> ScriptedProvider:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps({"format": "neutral", "replies": replies}))
    provider = get_provider(f"scripted:{path}", settings)
    assert isinstance(provider, ScriptedProvider)
    return provider


async def test_a_runs_goal_grants_the_act_it_names_for_that_run_only(
    tmp_path: Path, agent_settings: Settings
) -> None:
    rig = Rig(agent_settings)
    send = await rig.send_id()
    provider = model(tmp_path, agent_settings, [click(send), {"text": "Sent."}])
    result = await computer_use_task(
        "Write Ann a note about lunch and send it", provider=provider, ctx=rig.ctx
    )

    assert result.outcome == "done" and rig.sent()
    assert rig.kinds()[rig.kinds().index("run.started") + 1] == "policy.grants"
    (grants,) = rig.grants()
    assert grants.run_id == result.run_id and grants.data["goal"].startswith("Write Ann")
    assert [d["outcome"] for d in rig.decided()] == ["allowed"]
    assert rig.decided()[0]["grant"]["source"] == "goal"
    assert not rig.ctx.grants.active  # the grants ended with the run


async def test_a_goal_that_does_not_name_the_act_leaves_it_declined(
    tmp_path: Path, agent_settings: Settings
) -> None:
    rig = Rig(agent_settings)
    send = await rig.send_id()
    provider = model(tmp_path, agent_settings, [click(send), {"text": "Could not send."}])
    await computer_use_task("Tidy up the note to Ann", provider=provider, ctx=rig.ctx)

    assert not rig.sent()
    assert [d["outcome"] for d in rig.decided()] == ["declined"]


async def test_a_follow_up_grants_what_its_words_name(
    tmp_path: Path, agent_settings: Settings
) -> None:
    rig = Rig(agent_settings)
    send = await rig.send_id()
    provider = model(
        tmp_path,
        agent_settings,
        [
            click(send),
            {"text": "That would send it; I did not."},  # the first goal: no send
            click(send),
            {"text": "Sent."},  # the follow-up asks for the send
        ],
    )
    first = await computer_use_task("Read the note to Ann", provider=provider, ctx=rig.ctx)
    assert not rig.sent()
    again = await follow_up(first, "Now send the note to Ann", rig.ctx)

    assert again.outcome == "done" and rig.sent()
    assert [d["outcome"] for d in rig.decided()] == ["declined", "allowed"]
    assert [g.run_id for g in rig.grants()] == [first.run_id, again.run_id]
    assert not rig.ctx.grants.active


async def test_a_model_written_goal_grants_nothing_the_persons_turn_does(
    tmp_path: Path, agent_settings: Settings
) -> None:
    """The chat's subagent gets its goal from the parent model: "send it" there grants nothing
    when the person asked only to tidy up; the person's own "send" covers the subagent's
    click."""
    outcomes: dict[str, list[str]] = {}
    for turn in ("Tidy up the note to Ann", "Send the note to Ann"):
        rig = Rig(agent_settings)
        send = await rig.send_id()
        provider = model(
            tmp_path,
            agent_settings,
            [
                {
                    "tool_calls": [
                        {
                            "name": "computer_use_task",
                            "args": {"goal": "Click Send to send the note to Ann"},
                        }
                    ]
                },
                click(send),
                {"text": "done"},  # the subagent
                {"text": "Done."},  # the parent's answer
            ],
        )
        chat = ChatSession(provider, rig.ctx)
        try:
            result = await chat.send(turn)
        finally:
            await chat.aclose()
        assert result.outcome == "done"
        outcomes[turn] = [d["outcome"] for d in rig.decided() if d.get("tool") == "perform"]
        assert [g.data["goal"] for g in rig.grants()] == [turn]  # the subagent's grants none
        assert rig.sent() == (turn.startswith("Send"))
        assert not rig.ctx.grants.active
    assert outcomes == {
        "Tidy up the note to Ann": ["declined"],
        "Send the note to Ann": ["allowed"],
    }
