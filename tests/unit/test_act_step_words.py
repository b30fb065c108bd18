"""How perform's steps are put into words for the policy and the model (deskpilot.tools.act):
the way each step acts on its element, as its reach tells the door, and the line a step
gets when its window closed as it acted. On a FakeDesktop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.errors import AppClosed
from deskpilot.policy import DenyAll
from deskpilot.session import Session
from deskpilot.tools import act
from deskpilot.tools.context import ToolContext
from deskpilot.tools.steps import Step


def context(settings: Settings) -> tuple[ToolContext, WindowInfo]:
    desktop = FakeDesktop()
    window = desktop.add_window(FAKE_APPS[1], "Note to Ann")
    ctx = ToolContext(
        desktop, settings, audit=lambda _e: None, session=Session(), approver=DenyAll()
    )
    return ctx, window


@pytest.mark.parametrize(
    ("step", "how"),
    [
        ({"action": "fill", "text": "hi"}, "fill"),
        ({"action": "click"}, "click"),
        ({"action": "double_click"}, "press"),
        ({"action": "right_click"}, "focus"),
        ({"action": "type", "text": "hi"}, "focus"),
    ],
)
def test_each_step_kind_reaches_its_element_as_it_acts_on_it(
    step: dict[str, Any], how: str, settings: Settings
) -> None:
    ctx, window = context(settings)
    steps = [Step(elementID="2a.3", **step)]
    reach = asyncio.run(act.steps_reach(ctx, window.stable_id, steps))
    assert [(a.element_id, a.how) for a in reach.activations] == [("2a.3", how)]


@pytest.mark.parametrize(
    ("step", "line"),
    [
        ({"action": "shortcut", "shortcut": "ctrl+w"}, "Pressed ctrl+w"),
        ({"action": "type", "text": "four", "elementID": "2a.1"}, "Typed 4 characters"),
        ({"action": "click", "elementID": "2a.7"}, "Did click on @2a.7"),
        ({"action": "click", "x": 5, "y": 6}, "Did click"),
    ],
)
def test_a_step_that_closed_its_window_says_what_it_did(
    step: dict[str, Any], line: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, window = context(settings)

    async def closes(_ctx: ToolContext, w: WindowInfo, _step: Step) -> str:
        raise AppClosed("Notes", w.stable_id)

    async def gone(_ctx: ToolContext, _w: WindowInfo) -> bool:
        return True  # the window left the list

    monkeypatch.setattr(act, "run_step", closes)
    monkeypatch.setattr(act, "closes", gone)
    said = asyncio.run(act.run_or_closed(ctx, window, Step(**step)))
    assert said == line + act.CLOSED_AS_IT_DID
