"""A browser tab reads as its page's title, never with the memory use Chromium adds to it.

Chromium (156) recomputes a tab's accessible name whenever the tab's data changes (its title,
its loading state) and, once it has measured the tab's memory (just after each load, and every
two minutes), writes it into that name: "Stopped page - Memory usage - 21.8 MB". The fixture
page retitles itself until its Stop button is pressed; the test waits, on the raw AT-SPI name
(a connection of its own: a channel the read does not use), until Chromium has put the memory
use into the tab's name, then presses Stop through the tools: the action's change summary and
a read with the browser's own controls must name the tab by the page's title alone.
"""

from __future__ import annotations

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.base import WindowInfo
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from tests.desktop.conftest import Call
from tests.desktop.helpers import find_id, id_of_line
from tests.desktop.web import PageServer, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_tab_reads_as_its_page_title_without_its_memory_use(
    call: Call, ctx: ToolContext, pages: PageServer, browser: WindowInfo, desktop_settings: Settings
) -> None:
    await open_page(call, pages, "tab-name.html")
    chrome = (await call("read_screen_ax", {"chrome": True})).text
    tab = lookup(ctx.session, find_id(chrome, "tab"))[1].key
    reader = await AtspiBus.connect(desktop_settings.session_bus)

    async def raw_name() -> str:
        return str(await reader.get_property(*tab, "Accessible", "Name"))

    async def measured() -> str | None:
        name = await raw_name()
        return name if "Memory usage" in name else None

    try:
        # the condition the fix is for: Chromium's own name for the tab carries its memory use
        await async_wait_for(measured, timeout=20, what="Chromium to put the memory use in the tab")
        # read with the browser's controls: the action's summary compares reads with them too
        page = (await call("read_screen_ax", {"chrome": True})).text
        done = await call("perform", {"elementID": id_of_line(page, 'button "Stop"')})
        assert not done.is_error, done.text
        await pages.wait_for("stopped")

        async def renamed() -> str | None:
            name = await raw_name()
            return name if name.startswith("Stopped page") else None

        raw = await async_wait_for(renamed, timeout=10, what="the tab to take the last title")
        # Chromium still says the memory use (measured at the load): the read must not
        assert "Memory usage" in raw, raw
        assert "Memory usage" not in done.text, done.text
        chrome = (await call("read_screen_ax", {"chrome": True})).text
        assert "Memory usage" not in chrome, chrome
        assert find_id(chrome, "tab", "Stopped page"), chrome
        # the window's title (X11's, not AT-SPI's) never carried it
        windows = (await call("list_windows")).text
        assert "Stopped page" in windows and "Memory usage" not in windows, windows
    finally:
        await reader.close()
