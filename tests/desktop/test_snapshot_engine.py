"""Snapshot engine: diffs, change summaries, warm reads, and apps that stop answering."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.tools.context import ToolContext
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
    assert "No changes since the last read." in same.text

    typed = await call("perform", {"action": "type", "elementID": entry, "text": "Ada"})
    assert not typed.is_error, typed.text
    # the action's result ends with a one-line summary of what it changed
    assert typed.text.splitlines()[-1].startswith("Changes: ~ textbox")
    assert '= "Ada"' in typed.text.splitlines()[-1]

    changes = (await call("read_screen_ax", {"changes": True})).text
    body = changes.split("Changes since the last read (+ new, - gone, ~ changed):\n")[1]
    diff_lines = [ln for ln in body.split("\n</activeAppContext>")[0].splitlines() if ln]
    assert len(diff_lines) == 1, changes
    assert diff_lines[0].startswith("~ textbox") and f"@{entry}" in diff_lines[0]
    assert '= "Ada"' in diff_lines[0]
    assert re.search(r'\(was: textbox[^=]*= ""', diff_lines[0]), diff_lines[0]
    assert (
        "No changes since the last read." in (await call("read_screen_ax", {"changes": True})).text
    )


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
