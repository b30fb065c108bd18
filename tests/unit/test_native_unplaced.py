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
from deskpilot.policy import AllowAll, DenyAll
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

CALC, EDITOR, _VAULT = FAKE_APPS


def executor(settings: Settings, desktop: FakeDesktop) -> NativeExecutor:
    ctx = ToolContext(desktop=desktop, settings=settings, approver=AllowAll(), audit=lambda e: None)
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


@pytest.mark.asyncio
async def test_a_press_on_an_inactive_unplaced_window_is_judged_by_that_windows_tree(
    settings: Settings,
) -> None:
    """The desktop cannot tell which window is under a point here: the judgement looks where
    the press will land — the target window's own element there ("Send": a yes is asked)."""
    desktop = FakeDesktop()
    editor = desktop.add_window(EDITOR)
    calc = desktop.add_window(CALC)  # active, and over the editor's Send in the fake's world
    for w in desktop.windows:
        w.info = dataclasses.replace(w.info, placed=False)
    window = next(w for w in await desktop.list_windows() if w.handle == editor.handle)
    snap = await desktop.snapshot(window)
    send = next(n.bounds for n in snap.nodes() if n.name == "Send" and n.bounds is not None)
    g = editor.geometry
    assert calc.geometry.contains(*send.center)  # window_at would have answered the calculator
    ctx = ToolContext(desktop=desktop, settings=settings, approver=DenyAll(), audit=lambda e: None)
    ex = NativeExecutor(ToolSet(), ctx)
    x, y = send.center[0] - g.x, send.center[1] - g.y
    outcome = await ex.run([Click(x=x, y=y)], window=editor.stable_id, screenshot=False)
    assert "Declined" in outcome.steps[0].result.text, outcome.steps[0].result.text
    assert not [line for line in desktop.log if line.startswith("pointer")]


@pytest.mark.asyncio
async def test_an_unplaced_windows_points_reach_it_alone(settings: Settings) -> None:
    """A blocked app's window that is active does not make a press in another (unplaced)
    window a press on it; a press in the blocked window itself is refused."""
    desktop = FakeDesktop()
    calc = desktop.add_window(CALC)
    vault = desktop.add_window(_VAULT)  # active
    for w in desktop.windows:
        w.info = dataclasses.replace(w.info, placed=False)
    ex = executor(settings, desktop)
    done = await ex.run([Click(x=60, y=20)], window=calc.stable_id, screenshot=False)
    assert done.steps[0].ok, done.steps[0].result.text
    refused = await ex.run([Click(x=60, y=20)], window=vault.stable_id, screenshot=False)
    assert "blocked apps list" in refused.steps[0].result.text
