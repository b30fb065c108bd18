"""A list view's rows are read and clicked as rows: GTK 4's list view wraps each row's label
in a tree expander, whose only actions expand and collapse it. The row's line carries the
row's ID; a click on it selects the row. The selection is read by a separate AT-SPI reader
(its own bus connection), and what the demo shows for the row is checked there too."""

from __future__ import annotations

import re

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.consts import S_SELECTED, state_bits
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_gtk4_list_row_is_clicked_by_its_line(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    demo = await apps.spawn(["gtk4-demo"], match=lambda w: w.title == "GTK Demo")
    text = (await call("read_screen_ax", {"windowID": demo.stable_id})).text
    found = re.search(r'^\s*listitem "Application Class"[^@\n]* @(\S+)$', text, re.M)
    assert found, text
    assert text.count('"Application Class"') == 1, text  # one line for the row
    row = lookup(ctx.session, found.group(1))[1].key
    reader = await AtspiBus.connect(desktop_settings.session_bus)

    async def selected() -> bool:
        return bool(state_bits((await reader.call(*row, "Accessible", "GetState"))[0]) & S_SELECTED)

    try:
        assert not await selected()
        clicked = await call(
            "perform", {"action": "click", "elementID": found.group(1), "windowID": demo.stable_id}
        )
        assert not clicked.is_error, clicked.text
        assert "No visible effect" not in clicked.text, clicked.text
        await async_wait_for(selected, timeout=5, what="the row to be selected", interval=0.05)
    finally:
        await reader.close()
