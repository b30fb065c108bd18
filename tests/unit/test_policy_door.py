"""The door asks the policy (deskpilot.policy.door.decide) and nothing else: on a FakeDesktop,
a consequential click is asked (declined with nobody to ask) unless the person's goal names it;
a person's yes for the task covers the same kind of effect in the same window; a blocked app
is refused; every judged call leaves one ``policy.decided`` event with a sentence.

And a tool and a surface that did not exist before — a tool that presses a button by its name,
called by a "kiosk" surface — get the very same decisions with no policy code of their own.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.events import Event
from deskpilot.policy import CallbackApprover, DenyAll, Risk, Scope
from deskpilot.policy.reach import Activation, Reach
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext, persons_goal
from deskpilot.tools.elements import lookup
from deskpilot.tools.toolset import ToolSet


def setup(settings: Settings, approver: Any = None) -> tuple[ToolContext, list[Event], str]:
    desktop = FakeDesktop()
    window = desktop.add_window(FAKE_APPS[1], "Note to Ann")  # a text area and a Send button
    events: list[Event] = []
    ctx = ToolContext(
        desktop,
        settings.with_overrides(confirm="consequential"),
        audit=events.append,
        session=Session(),
        approver=approver or DenyAll(),
        surface="python",
        run_id="r1",
    )
    return ctx, events, window.stable_id


def send_id(ctx: ToolContext, tools: ToolSet, window: str) -> str:
    read = asyncio.run(tools.call("read_screen_ax", {"windowID": window}, ctx))
    m = re.search(r'button "Send".*@(\S+)', read.text)
    assert m, read.text
    return m.group(1)


def decided(events: list[Event]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.kind == "policy.decided"]


def click(ctx: ToolContext, tools: ToolSet, element: str) -> ToolResult:
    return asyncio.run(tools.call("perform", {"action": "click", "elementID": element}, ctx))


def test_without_a_goal_the_send_is_asked_and_declined(settings: Settings) -> None:
    ctx, events, window = setup(settings)
    tools = computer_use_tools()
    result = click(ctx, tools, send_id(ctx, tools, window))
    assert result.is_error and result.data and result.data["refused"] == "declined"
    assert "click Send" not in ctx.desktop.log  # type: ignore[attr-defined]
    (d,) = decided(events)
    assert d["outcome"] == "declined" and d["act"] == "submit"
    assert d["answer"] == {"by": "DenyAll", "person": False, "approved": False}
    assert d["sentence"].startswith('declined: activates "Send"')
    asked = [e for e in events if e.kind == "confirm.asked"]
    assert asked and asked[0].data["sentence"].startswith('Click "Send"')
    assert asked[0].data["offer"]  # a yes for this kind of effect in this window was offered


def test_the_persons_goal_grants_the_send_and_the_log_says_so(settings: Settings) -> None:
    ctx, events, window = setup(settings)
    tools = computer_use_tools()
    element = send_id(ctx, tools, window)
    with persons_goal(ctx, "Write Ann a note about lunch and send it") as task:
        result = click(task, tools, element)
    assert not result.is_error, result.text
    assert "click Send" in ctx.desktop.log  # type: ignore[attr-defined]
    assert not [e for e in events if e.kind == "confirm.asked"]
    grants = [e.data for e in events if e.kind == "policy.grants"]
    assert grants and grants[0]["goal"].startswith("Write Ann")
    (d,) = decided(events)
    assert d["outcome"] == "allowed" and d["grant"]["source"] == "goal"
    assert "granted by the goal" in d["sentence"]
    # the task is over: its grant with it
    click(ctx, tools, element)
    assert decided(events)[-1]["outcome"] == "declined"


def test_a_goal_that_forbids_the_send_grants_nothing(settings: Settings) -> None:
    ctx, events, window = setup(settings)
    tools = computer_use_tools()
    element = send_id(ctx, tools, window)
    with persons_goal(ctx, "Write the note but don't send it") as task:
        click(task, tools, element)
    assert decided(events)[-1]["outcome"] == "declined"


def test_a_yes_for_the_task_covers_the_next_send_in_that_window(settings: Settings) -> None:
    answers: list[str] = []

    def person(request: Any) -> Any:
        answers.append(request.offer)
        return Scope.TASK

    ctx, events, window = setup(settings, CallbackApprover(person, person=True))
    tools = computer_use_tools()
    element = send_id(ctx, tools, window)
    with persons_goal(ctx, "Tidy up the note") as task:
        click(task, tools, element)
        click(task, tools, send_id(task, tools, window))
    assert len(answers) == 1 and "in this window" in answers[0]
    first, second = decided(events)
    assert first["outcome"] == "asked" and first["answer"]["scope"] == "task"
    assert first["answer"]["person"] is True
    assert second["outcome"] == "allowed" and second["grant"]["source"] == "person"
    assert [e.kind for e in events].count("grant.added") == 1


def test_a_blocked_app_is_refused_and_recorded(settings: Settings) -> None:
    ctx, events, _ = setup(settings)
    vault = ctx.desktop.add_window(FAKE_APPS[2], "Passwords")  # type: ignore[attr-defined]
    result = asyncio.run(
        computer_use_tools().call("read_screen_ax", {"windowID": vault.stable_id}, ctx)
    )
    assert result.is_error and result.data and result.data["refused"] == "blocked"
    (d,) = decided(events)
    assert d["outcome"] == "blocked" and d["sentence"].startswith("blocked:")


# -- a new tool and a new surface ---------------------------------------------------------------


async def _by_name(ctx: ToolContext, values: Mapping[str, Any]) -> Reach:
    """The new tool's reach: the element of that name in the session's last read."""
    window = next(w for w in await ctx.desktop.list_windows() if w.stable_id == values["window"])
    ids = [eid for eid, r in ctx.session.elements.items() if r.name == values["name"]]
    return Reach(window=window, windows=[window], activations=[Activation(eid) for eid in ids[:1]])


@tool(risk=Risk.ACTS, title="Press a button by its name", reach=_by_name, name="press_named")
async def press_named(
    ctx: ToolContext,
    window: Annotated[str, Field(description="The window's ID.")],
    name: Annotated[str, Field(description="The button's name.")],
) -> ToolResult:
    """Press the button called ``name`` (no policy code here: the door decides)."""
    eid = next(e for e, r in ctx.session.elements.items() if r.name == name)
    _eid, record = lookup(ctx.session, eid)
    w = next(w for w in await ctx.desktop.list_windows() if w.stable_id == window)
    await ctx.desktop.click_element(w, record.key)
    return ToolResult(f"pressed {name}")


def kiosk(ctx: ToolContext, tools: ToolSet, tool_name: str, args: dict[str, Any]) -> ToolResult:
    """A new surface: a kiosk that calls the door with its own name."""
    import dataclasses

    return asyncio.run(tools.call(tool_name, args, dataclasses.replace(ctx, surface="kiosk")))


def test_a_new_tool_on_a_new_surface_gets_the_same_decisions(settings: Settings) -> None:
    outcomes: dict[str, list[str]] = {}
    for way in ("perform", "press_named"):
        ctx, events, window = setup(settings)
        tools = computer_use_tools()
        tools.add(press_named)
        element = send_id(ctx, tools, window)
        args = (
            {"action": "click", "elementID": element}
            if way == "perform"
            else {"window": window, "name": "Send"}
        )
        kiosk(ctx, tools, way, args)  # no goal: asked, declined
        with persons_goal(ctx, "Send the note to Ann") as task:
            kiosk(task, tools, way, args)  # the goal grants it
        with persons_goal(ctx, "Delete the old note") as task:
            kiosk(task, tools, way, args)  # another act: asked, declined
        outcomes[way] = [d["outcome"] for d in decided(events)]
        assert ctx.desktop.log.count("click Send") == 1  # type: ignore[attr-defined]
        calls = [e.data for e in events if e.kind == "tool.call" and e.data["tool"] == way]
        assert {c["surface"] for c in calls} == {"kiosk"}
    assert outcomes["perform"] == outcomes["press_named"] == ["declined", "allowed", "declined"]
