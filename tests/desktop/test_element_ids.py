"""Element IDs: stable across reads and processes, stale after their dialog closes, never
acting on a look-alike; perform_sequence checks every ID first and stops at a failing step;
AT-SPI actions leave the active window alone, raw input restores it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, value_of

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _save_dialog(call: Call, ctx: ToolContext) -> str:
    opened = await call("perform", {"action": "shortcut", "shortcut": "ctrl+s"})
    assert "A new window opened" in opened.text, opened.text
    return (await call("read_screen_ax")).text


async def test_stale_id_after_dialog_closes_and_lookalike(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    editor = await apps.open("org.xfce.mousepad")
    await call("read_screen_ax", {"windowID": editor.stable_id})
    dialog = await _save_dialog(call, ctx)
    cancel = find_id(dialog, "button", "Cancel")
    dialog_id = ctx.session.target
    closed = await call("perform", {"action": "shortcut", "shortcut": "escape"})
    assert not closed.is_error

    async def dialog_gone() -> bool:
        return all(w.stable_id != dialog_id for w in await ctx.desktop.list_windows())

    await async_wait_for(dialog_gone, timeout=10, what="the dialog to close")
    windows_before = {w.handle for w in await ctx.desktop.list_windows()}
    stale = await call("perform", {"elementID": cancel, "windowID": editor.stable_id})
    assert stale.is_error
    assert f"Element @{cancel}" in stale.text and "read_screen_ax again" in stale.text

    # a look-alike: the dialog opens again with a new "Cancel" in the same place
    again = await _save_dialog(call, ctx)
    assert find_id(again, "button", "Cancel") != cancel
    lookalike = await call("perform", {"elementID": cancel})
    assert lookalike.is_error and "no longer available" in lookalike.text
    # nothing was clicked: the dialog is still open
    assert ctx.session.target in {w.stable_id for w in await ctx.desktop.list_windows()}
    assert {w.handle for w in await ctx.desktop.list_windows()} - windows_before
    await call("perform", {"action": "shortcut", "shortcut": "escape"})


async def test_same_id_across_reads_and_processes(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    calc = await apps.open("galculator")
    first = (await call("read_screen_ax", {"windowID": calc.stable_id})).text
    second = (await call("read_screen_ax", {"windowID": calc.stable_id})).text
    seven = find_id(first, "toggle", "7")
    assert find_id(second, "toggle", "7") == seven
    # another process (the CLI) reads the same window: same IDs
    env = dict(desktop_settings.environ)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "deskpilot",
            "--session",
            "other",
            "tool",
            "read_screen_ax",
            json.dumps({"windowID": calc.stable_id}),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    nodes = json.loads(out.stdout)["data"]["nodes"]
    assert any(n["id"] == seven and n["name"] == "7" for n in nodes)


async def test_sequence_checks_all_ids_then_stops_at_first_failure(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    zenity = await apps.spawn(
        ["zenity", "--entry", "--title=Ask", "--text=Your name"], match=lambda w: w.title == "Ask"
    )
    form = (await call("read_screen_ax", {"windowID": zenity.stable_id})).text
    entry = find_id(form, "textbox")
    ok = find_id(form, "button", "OK")

    # an unknown ID anywhere: nothing runs
    bad = await call(
        "perform_sequence",
        {
            "steps": [
                {"action": "fill", "elementID": entry, "text": "should not appear"},
                {"elementID": "zz.zz"},
            ]
        },
    )
    assert bad.is_error and "Step 2 of 2" in bad.text and "Nothing was done" in bad.text
    assert value_of((await call("read_screen_ax")).text, entry) == ""

    # a fill aimed at a button is known before anything runs: nothing runs
    misaimed = await call(
        "perform_sequence",
        {
            "steps": [
                {"action": "fill", "elementID": entry, "text": "should not appear"},
                {"action": "fill", "elementID": ok, "text": "nope"},
            ]
        },
    )
    assert misaimed.is_error and "Step 2 of 2" in misaimed.text, misaimed.text
    assert "not a text field" in misaimed.text and "Nothing was done" in misaimed.text
    assert value_of((await call("read_screen_ax")).text, entry) == ""

    # a step that closes the window (OK closed the dialog): the ones before it and it ran,
    # the ones after did not — and the close is the OK's, not the next fill's
    failing = await call(
        "perform_sequence",
        {
            "steps": [
                {"action": "fill", "elementID": entry, "text": "Alex"},
                {"elementID": ok},
                {"action": "fill", "elementID": entry, "text": "Bob"},
                {"action": "fill", "elementID": entry, "text": "Carol"},
            ]
        },
    )
    assert failing.is_error
    assert failing.text.startswith("Step 2 of 4 (click) closed window"), failing.text
    assert "1. Filled" in failing.text and "steps 3–4 did not run" in failing.text
    assert "\n3. " not in failing.text, failing.text  # the fill after the OK did not run


async def test_active_window_unchanged_or_restored(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    calc = await apps.open("galculator")
    editor = await apps.open("org.xfce.mousepad")
    assert await ctx.desktop.activate(editor)
    read = (await call("read_screen_ax", {"windowID": calc.stable_id})).text
    clicked = await call("perform", {"elementID": find_id(read, "toggle", "7")})
    # an action leaves the active window alone; a GTK button in sight is clicked with the
    # pointer, its window activated for the click and the previous one restored: said either way
    assert "the window was not activated" in clicked.text or (
        "the window was activated for it" in clicked.text
        and f"{editor.stable_id} was re-activated afterwards" in clicked.text
    ), clicked.text
    active = await ctx.desktop.active_window()
    assert active is not None and active.handle == editor.handle

    typed = await call("perform", {"action": "type", "text": "+1"})
    assert not typed.is_error, typed.text
    assert "the window was activated for it" in typed.text
    assert f"{editor.stable_id} was re-activated afterwards" in typed.text
    active = await ctx.desktop.active_window()
    assert active is not None and active.handle == editor.handle
