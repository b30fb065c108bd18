"""Blocked apps: KeePassXC is refused by every tool; a user-added entry too."""

from __future__ import annotations

import dataclasses

import pytest

from deskpilot.config import Settings
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")

WINDOW_TOOLS = {
    "read_screen_ax": {},
    "perform": {"action": "type", "text": "secret"},
    "perform_sequence": {"steps": [{"action": "shortcut", "shortcut": "ctrl+a"}]},
    "scroll": {"milliseconds": 500},
    "computer_use_screenshot": {},
}


def keepass_procs() -> int:
    import os

    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/comm") as fh:
                    count += fh.read().strip() == "keepassxc"
            except OSError:
                pass
    return count


async def test_keepassxc_is_refused_by_every_tool(call: Call, ctx: ToolContext, apps: Apps) -> None:
    before = keepass_procs()
    refused = await call("open_app", {"bundleId": "KeePassXC"})
    assert refused.is_error
    assert "blocked apps list" in refused.text and "Stop trying" in refused.text
    assert keepass_procs() == before  # nothing was launched

    window = await apps.spawn(["keepassxc"], match=lambda w: "KeePassXC" in w.title)
    for name, args in WINDOW_TOOLS.items():
        result = await call(name, {**args, "windowID": window.stable_id})
        assert result.is_error, name
        assert "KeePassXC is on the blocked apps list" in result.text, (name, result.text)
        assert not result.images
    # ... also when it is simply the active window and no windowID is given
    await ctx.desktop.activate(window)
    ctx.session.target = None
    fallback = await call("read_screen_ax")
    assert fallback.is_error and "blocked" in fallback.text
    # list_windows shows it, but not its title
    listing = (await call("list_windows")).text
    assert "BLOCKED" in listing
    assert f'Window: "{window.title}"' not in listing


async def test_user_added_entry_is_refused(
    ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    settings = desktop_settings.with_overrides(confirm="none", blocklist_add=("galculator",))
    mine = dataclasses.replace(ctx, settings=settings, session=Session())
    tools = computer_use_tools()
    refused = await tools.call("open_app", {"bundleId": "galculator"}, mine)
    assert refused.is_error and "Galculator is on the blocked apps list" in refused.text
    window = await apps.open("galculator")
    read = await tools.call("read_screen_ax", {"windowID": window.stable_id}, mine)
    assert read.is_error and "blocked" in read.text
    # without the entry it is readable
    ok = await tools.call("read_screen_ax", {"windowID": window.stable_id}, ctx)
    assert not ok.is_error
    assert f"windowID: {window.stable_id}" in ok.text and "button" in ok.text  # its tree
