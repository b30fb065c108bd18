"""Native computer use where the desktop does not say where windows are (``placed`` False, as
on GNOME on Wayland): a window target is made active before the pointer moves in its own
coordinates; screen coordinates are refused, nothing is pressed."""

from __future__ import annotations

import dataclasses

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.native.actions import Click
from deskpilot.native.executor import NativeExecutor
from deskpilot.policy import AllowAll
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

CALC, EDITOR, _VAULT = FAKE_APPS


def executor(settings: Settings, desktop: FakeDesktop) -> NativeExecutor:
    ctx = ToolContext(desktop=desktop, settings=settings, approver=AllowAll(),
                      audit=lambda e: None)  # fmt: skip
    return NativeExecutor(ToolSet(), ctx)


@pytest.mark.asyncio
async def test_a_window_is_activated_before_pointing_and_the_screen_is_refused(
    settings: Settings,
) -> None:
    desktop = FakeDesktop()
    calc = desktop.add_window(CALC)
    desktop.add_window(EDITOR)  # active now
    for w in desktop.windows:
        w.info = dataclasses.replace(w.info, placed=False)
    ex = executor(settings, desktop)
    done = await ex.run([Click(x=60, y=20)], window=calc.stable_id, screenshot=False)
    assert done.steps[0].ok, done.steps[0].result.text
    # the calculator was made active before the pointer moved in its own coordinates
    acts = [i for i, line in enumerate(desktop.log) if line == f"activate {calc.handle}"]
    pointed = [i for i, line in enumerate(desktop.log) if line.startswith("pointer")]
    assert acts and pointed and acts[0] < pointed[0], desktop.log
    before = list(desktop.log)
    refused = await ex.run([Click(x=20, y=20)], window=None, screenshot=False)
    assert not refused.steps[0].ok
    assert "screen coordinates cannot be aimed at" in refused.steps[0].result.text
    assert [line for line in desktop.log[len(before) :] if "pointer" in line] == []
