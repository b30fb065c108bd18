"""Snapshot engine: diffs, change summaries, warm reads, and apps that stop answering."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.tools.context import ToolContext
from deskpilot.tools.screen import SINCE
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_diff_after_typing_shows_exactly_that_field(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    window = await apps.spawn(
        ["zenity", "--entry", "--title=Diff", "--text=Your name"], match=lambda w: w.title == "Diff"
    )
    first = (await call("read_screen_ax", {"windowID": window.stable_id})).text
    entry = find_id(first, "textbox")
    same = await call("read_screen_ax", {"changes": True})
    assert f"No changes since {SINCE}." in same.text

    typed = await call("perform", {"action": "type", "elementID": entry, "text": "Ada"})
    assert not typed.is_error, typed.text
    # the action's result ends with a one-line summary of what it changed: that field only
    last = typed.text.splitlines()[-1]
    assert last.startswith("Changes: ~ textbox") and f"@{entry}" in last, typed.text
    assert '= "Ada"' in last, typed.text
    # a changes read does not repeat what the action's result said
    assert f"No changes since {SINCE}." in (await call("read_screen_ax", {"changes": True})).text

    # a change made outside deskpilot (xdotool types into the focused field) is listed by the
    # next changes read, exactly
    env = {**os.environ, "DISPLAY": ctx.settings.display or ""}
    subprocess.run(["xdotool", "type", " Lovelace"], env=env, check=True, timeout=30)

    async def typed_in() -> bool:
        snap = await ctx.desktop.snapshot(window, fresh=True)
        return any(n.text == "Ada Lovelace" for n in snap.nodes())

    await async_wait_for(typed_in, timeout=15, what="xdotool's text in the field")
    changes = (await call("read_screen_ax", {"changes": True})).text
    body = changes.split(f"Changes since {SINCE} (+ new, - gone, ~ changed, ↕ moved):\n")[1]
    diff_lines = [ln for ln in body.split("\n</activeAppContext>")[0].splitlines() if ln]
    assert len(diff_lines) == 1, changes
    assert diff_lines[0].startswith("~ textbox") and f"@{entry}" in diff_lines[0]
    assert '= "Ada Lovelace"' in diff_lines[0]
    assert re.search(r'\(was: textbox[^=]*= "Ada"[^"]*\)$', diff_lines[0]), diff_lines[0]
    assert f"No changes since {SINCE}." in (await call("read_screen_ax", {"changes": True})).text


async def test_warm_reads_follow_changes(call: Call, ctx: ToolContext, apps: Apps) -> None:
    calc = await apps.open("galculator")
    desktop = ctx.desktop
    assert isinstance(desktop, DesktopFacade)
    cold = await desktop.snapshot(calc, fresh=True)
    warm = await desktop.snapshot(calc)
    assert len(warm.nodes()) == len(cold.nodes())
    read = (await call("read_screen_ax", {"windowID": calc.stable_id})).text
    await call("perform", {"elementID": find_id(read, "toggle", "7")})
    after = await desktop.snapshot(calc)  # warm: applies the events the click caused
    shown = [n.name or n.text or "" for n in after.nodes() if n.role in ("label", "text")]
    assert "7" in shown, shown


async def test_app_that_stops_answering_gives_a_partial_read_and_a_typed_error(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    calc = await apps.open("galculator")
    await call("read_screen_ax", {"windowID": calc.stable_id})
    os.kill(calc.pid, signal.SIGSTOP)
    try:
        for desktop in (ctx.desktop, await open_resolved(desktop_settings)):  # warm, cold
            start = time.monotonic()
            snap = await desktop.snapshot(calc, timeout=5.0)
            assert time.monotonic() - start < 6.0
            assert snap.partial
            assert any("did not answer" in p or "not answering" in p for p in snap.problems)
            if desktop is not ctx.desktop:
                await desktop.close()
        # a read that got nothing is an error naming the app, not an empty "partial" read
        result = await call("read_screen_ax", {"windowID": calc.stable_id})
        assert result.is_error and "Galculator" in result.text, result.text
        assert "is not responding" in result.text
    finally:
        os.kill(calc.pid, signal.SIGCONT)
