"""Chromium via open_urls on a local page: IDs for inputs, buttons, links; fill + click."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, value_of

pytestmark = pytest.mark.asyncio(loop_scope="session")

FORM = Path(__file__).parent.parent / "fixtures" / "form.html"


async def test_fill_and_submit_a_web_form(call: Call, ctx: ToolContext, apps: Apps) -> None:
    opened = await call("open_urls", {"urls": [FORM.as_uri()]})
    assert not opened.is_error, opened.text
    window = next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    await apps.adopt(window)
    assert window.app.app_id == "chromium"

    page = (await call("read_screen_ax")).text
    first = find_id(page, "textbox", "First name")
    last = find_id(page, "textbox", "Last name")
    email = find_id(page, "textbox", "Email")
    news = find_id(page, "checkbox", "Newsletter")
    register = find_id(page, "button", "Register")
    find_id(page, "link", "Details")
    assert 'para "Not registered yet"' in page

    done = await call(
        "perform_sequence",
        {
            "steps": [
                {"action": "fill", "elementID": first, "text": "Alex"},
                {"action": "fill", "elementID": last, "text": "Rivera"},
                {"action": "fill", "elementID": email, "text": "alex@example.com"},
                {"elementID": news},
                {"elementID": register},
            ]
        },
    )
    assert not done.is_error, done.text

    async def welcomed() -> str | None:
        text = (await call("read_screen_ax")).text
        return text if "Welcome, Alex Rivera <alex@example.com>" in text else None

    after = await async_wait_for(welcomed, timeout=10, what="the page to show the welcome")
    assert value_of(after, first) == "Alex"
    assert value_of(after, email) == "alex@example.com"
    assert "[checked]" in next(ln for ln in after.splitlines() if f"@{news}" in ln)
