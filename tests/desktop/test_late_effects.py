"""Effects that come late are still in the result (issue #21 item 6: whatever is cut from an
action's time, the settle after it still sees them). A page that reacts after a timeout — a
click's effect, a debounced search — is reported with its effect whenever the page's timer ran
on time, also on a loaded machine (each report says how late it ran; Blink sends such a change
in its next batch, up to 150 ms later: the settle waits a batch after the action's own events,
even when one of them showed an effect already, and then asks for what it holds back); a GTK
button clicked by its action, whose click comes 250 ms later, too. The page
reports to the test server and the calculator's display is read afterwards: channels the
action's result does not use."""

from __future__ import annotations

import re
from typing import Any

import pytest

from deskpilot.desktop.base import WindowInfo
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, id_of_line
from tests.desktop.web import PageServer, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")


def changes(text: str) -> str:
    """The change summary at the end of a result (empty when there is none)."""
    _, found, after = text.partition("Changes:")
    return after if found else ""


#: The page's timers are set for 120 ms; one that ran within this of its input was on time.
#: A change on time comes within the web settle's batching period of the action's own events
#: (WEB_BATCH_S, 150 ms), which is what the result promises to include; a timer a busy machine
#: ran later (seen once: the suite's first minutes at load 15, the debounce past the settle)
#: is past that promise, and its summary is not checked.
ON_TIME_MS = 140


def check_late(report: dict[str, Any], text: str, wanted: str) -> None:
    if report["late"] <= ON_TIME_MS:
        assert wanted in changes(text), (f"the change came {report['late']:.0f} ms after", text)


async def test_a_pages_effect_after_a_timeout_is_in_the_result(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "late.html")
    done = await call("perform", {"elementID": id_of_line(page, 'button "Save"')})
    assert not done.is_error, done.text
    check_late(await pages.wait_for("saved"), done.text, "Status: saved")

    field = id_of_line(page, 'textbox "Search"')
    typed = await call("perform", {"action": "type", "text": "tea", "elementID": field})
    assert not typed.is_error, typed.text
    check_late(await pages.wait_for("searched", text="tea"), typed.text, "3 results for tea")

    # a fill (select-all, then the keys) too: its summary is read while the settle waits
    # for the page's next batch, and read again when the search's results come in it
    filled = await call("perform", {"action": "fill", "text": "milk", "elementID": field})
    assert not filled.is_error, filled.text
    searched = await pages.wait_for("searched", text="milk")
    check_late(searched, filled.text, "3 results for milk")


async def test_a_gtk_buttons_late_click_is_in_the_result(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    window = await apps.open("org.gnome.Calculator")
    read = await call("read_screen_ax", {"windowID": window.stable_id})
    assert not read.is_error, read.text
    seven = find_id(read.text, "button", "7")
    done = await call("perform", {"elementID": seven, "windowID": window.stable_id})
    assert not done.is_error, done.text
    # the display's change, which GTK makes 250 ms after the action, is in the result
    assert re.search(r'textbox.*"7"', changes(done.text)), done.text
    again = await call("read_screen_ax", {"windowID": window.stable_id})
    assert re.search(r'^\s*textbox = "7"', again.text, re.M), again.text
