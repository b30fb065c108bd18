"""gnome-calculator, opened by the name "Calculator": element clicks, typing, re-reads."""

from __future__ import annotations

import re

import pytest

from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")


def ids_by_name(text: str) -> dict[str, str]:
    """{'7': '2_tnacu', ...} for lines like: button "7" @2_tnacu"""
    found: dict[str, str] = {}
    for m in re.finditer(r'^\s*(\w+) "([^"]*)".*@(\S+)$', text, re.M):
        found.setdefault(f"{m.group(1)}:{m.group(2)}", m.group(3))
    return found


def display_value(text: str) -> str:
    m = re.search(r'^\s*textbox = "([^"]*)".*@', text, re.M)
    assert m, text
    return m.group(1)


async def test_calculator_by_clicks_then_by_typing(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    opened = await call("open_app", {"bundleId": "Calculator"})
    assert not opened.is_error, opened.text
    assert "Stable Window ID:" in opened.text
    window = await apps.adopt(
        next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    )
    assert window.app.app_id == "org.gnome.Calculator"

    read = await call("read_screen_ax")
    assert read.text.startswith("<activeAppContext>")
    assert "<appGuidance>" in read.text
    ids = ids_by_name(read.text)
    steps = [{"elementID": ids[f"button:{label}"]} for label in ("1", "2", "×", "7", "=")]
    done = await call("perform_sequence", {"steps": steps})
    assert not done.is_error, done.text
    assert "All 5 steps ran" in done.text
    # the result ends with what the clicks changed: the display now shows 84
    assert done.text.splitlines()[-1].startswith("Changes: ~ textbox")
    assert '= "84"' in done.text.splitlines()[-1]
    assert display_value((await call("read_screen_ax")).text) == "84"

    typed = await call(
        "perform_sequence",
        {
            "steps": [
                {"action": "shortcut", "shortcut": "escape"},
                {"action": "type", "text": "6*7"},
                {"action": "shortcut", "shortcut": "enter"},
            ]
        },
    )
    assert not typed.is_error, typed.text
    assert display_value((await call("read_screen_ax")).text) == "42"
