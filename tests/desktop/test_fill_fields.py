"""``fill`` on every kind of field: segmented dates and times, drop-downs, combo entries.

A browser's date and time inputs are rows of spin buttons (month, day, year; hours, minutes,
AM/PM) without editable text; a ``<select>`` and a GTK combo box have no text at all; a
``<input list>`` is an editable combo. ``fill`` sets each, or says what the field shows. The
web page reports every value it takes to the test server; the GTK combo's choice is read by a
separate AT-SPI reader (its own bus connection).
"""

from __future__ import annotations

import re

import pytest
from Xlib import display

from deskpilot.config import Settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.base import WindowInfo
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from tests.desktop.conftest import Apps, Call
from tests.desktop.web import PageServer

pytestmark = pytest.mark.asyncio(loop_scope="session")


def element(text: str, line: str) -> str:
    m = re.search(rf"^\s*{line}.* @(\S+)$", text, re.M)
    assert m, f"no line {line!r} in:\n{text}"
    return m.group(1)


async def test_web_dates_times_drop_downs_and_combo_entries(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    pages.clear()
    assert not (await call("open_urls", {"urls": [pages.url("fields.html")]})).is_error
    page = (await call("read_screen_ax")).text
    day, at = element(page, 'date "Arrival date"'), element(page, 'date "Arrival time"')

    async def fill(eid: str, text: str) -> str:
        done = await call("perform", {"action": "fill", "elementID": eid, "text": text})
        assert not done.is_error, done.text
        return done.text

    assert "month 3, day 7, year 2026" in await fill(day, "2026-03-07")
    await pages.wait_for("day", value="2026-03-07")
    assert "hours 2, minutes 5, PM" in await fill(at, "14:05")
    await pages.wait_for("at", value="14:05")
    chose = await fill(element(page, 'combobox "Room"'), "Suite")
    assert "Chose 'Suite'" in chose and "it shows 'Suite'" in chose, chose
    await pages.wait_for("room", value="Suite")
    await fill(element(page, 'combobox "City"'), "Oslo")  # an editable combo: typed, checked
    await pages.wait_for("city", value="Oslo")

    # what a field cannot take is reported with what it shows, or refused before anything
    bad = await call("perform", {"action": "fill", "elementID": day, "text": "2026-02-30"})
    assert bad.is_error and "invalid" in bad.text and "day 30" in bad.text, bad.text
    vague = await call("perform", {"action": "fill", "elementID": day, "text": "next Tuesday"})
    assert vague.is_error and "ISO form" in vague.text and "Nothing was typed" in vague.text
    none = await call(
        "perform",
        {"action": "fill", "elementID": element(page, 'combobox "Room"'), "text": "Palace"},
    )
    assert none.is_error and "'Single', 'Double', 'Twin', 'Suite'" in none.text, none.text
    assert pages.of("room", value="Palace") == [] and {e["value"] for e in pages.of("room")} == {
        "Suite"
    }


async def test_a_gtk_combo_box_gets_the_item_named(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    demo = await apps.spawn(["gtk3-demo", "--run", "combobox"], match=lambda w: "Combo" in w.title)
    text = (await call("read_screen_ax", {"windowID": demo.stable_id})).text
    capitals, icons = element(text, 'combobox "Boston"'), element(text, 'combobox "dialog-warning"')
    reader = await AtspiBus.connect(desktop_settings.session_bus)

    async def choice(eid: str) -> tuple[str, str]:
        """What the combo shows, read on its own: its name (GTK names a combo by its choice;
        an icon combo by the icon) and the name of the child it reports selected."""
        key = lookup(ctx.session, eid)[1].key
        got = await reader.call(*key, "Selection", "GetSelectedChild", "i", [0])
        bus, path = got[0]
        selected = await reader.get_property(str(bus), str(path), "Accessible", "Name")
        return str(await reader.get_property(*key, "Accessible", "Name")), str(selected)

    try:
        # "Denver" sits in the submenu "C - D": nested items are chosen too
        done = await call(
            "perform",
            {"action": "fill", "elementID": capitals, "text": "denver", "windowID": demo.stable_id},
        )
        assert not done.is_error and "Chose 'denver'" in done.text, done.text
        assert await choice(capitals) == ("Denver", "C - D")  # its submenu
        done = await call(
            "perform",
            {"action": "fill", "elementID": icons, "text": "Clear", "windowID": demo.stable_id},
        )
        assert not done.is_error, done.text
        assert await choice(icons) == ("edit-clear", "Clear")
        missing = await call(
            "perform", {"action": "fill", "elementID": capitals, "text": "Chicago"}
        )
        assert missing.is_error and "no item named 'Chicago'" in missing.text, missing.text
        assert "'Albany'" in missing.text and "(50 in all)" in missing.text
        assert (await choice(capitals))[0] == "Denver"  # nothing was chosen
    finally:
        await reader.close()


async def test_a_gtk4_drop_down_whose_list_exists_only_while_open(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    demo = await apps.spawn(["gtk4-demo", "--run", "dropdown"], match=lambda w: "Select" in w.title)
    text = (await call("read_screen_ax", {"windowID": demo.stable_id})).text
    fonts = element(text, r'combobox "\(None\) C059"')
    reader = await AtspiBus.connect(desktop_settings.session_bus)

    async def shown() -> tuple[list[str], set[str]]:
        """The labels with a size under the drop-down, and its button's states, read apart."""
        combo = lookup(ctx.session, fonts)[1].key
        labels, level, states = [], [combo], set()
        for depth in range(7):
            below = []
            for key in level:
                for bus, path in (await reader.call(*key, "Accessible", "GetChildren"))[0]:
                    child = (str(bus), str(path))
                    role = int((await reader.call(*child, "Accessible", "GetRole"))[0])
                    if depth == 0 and role == 43:  # ATSPI_ROLE_PUSH_BUTTON: the opener
                        bits = (await reader.call(*child, "Accessible", "GetState"))[0]
                        states = {"pressed"} if bits[0] & (1 << 20) else set()  # PRESSED
                        below.append(child)
                    elif depth > 0:
                        box = (await reader.call(*child, "Component", "GetExtents", "u", [0]))[0]
                        name = str(await reader.get_property(*child, "Accessible", "Name"))
                        if role == 29 and box[2] > 0 and name:  # ATSPI_ROLE_LABEL, sized
                            labels.append(name)
                        below.append(child)
            level = below
        return labels, states

    try:
        assert (await shown())[0] == ["C059"]
        done = await call(
            "perform",
            {
                "action": "fill",
                "elementID": fonts,
                "text": "Nimbus Sans",
                "windowID": demo.stable_id,
            },
        )
        assert not done.is_error and "Chose 'Nimbus Sans'" in done.text, done.text
        assert await shown() == (["Nimbus Sans"], set())  # chosen, and its list closed again
        missing = await call(
            "perform",
            {"action": "fill", "elementID": fonts, "text": "Comic", "windowID": demo.stable_id},
        )
        assert missing.is_error and "'DejaVu Sans Mono'" in missing.text, missing.text
        assert await shown() == (["Nimbus Sans"], set())  # unchanged, its list closed
        # a row of the open list clicked by its ID: GTK 4 places popover rows relative to the
        # popover, so the pointer would miss; the click reaches the row named, by keys
        opened = await call("perform", {"elementID": fonts, "windowID": demo.stable_id})
        assert not opened.is_error, opened.text
        text = (await call("read_screen_ax", {"windowID": demo.stable_id})).text
        row = element(text, 'listitem "URW Gothic"')
        clicked = await call("perform", {"elementID": row, "windowID": demo.stable_id})
        assert not clicked.is_error and "then Enter" in clicked.text, clicked.text
        assert await shown() == (["URW Gothic"], set())
        # the pointer on a row by its ID lands on that row: GTK 4 puts the popover 26 px
        # above its popup window; where the pointer is, is asked of X on a connection of its own
        await call("perform", {"elementID": fonts, "windowID": demo.stable_id})
        text = (await call("read_screen_ax", {"windowID": demo.stable_id})).text
        row = element(text, 'listitem "Nimbus Mono PS"')
        hover = await call(
            "perform", {"action": "hover", "elementID": row, "windowID": demo.stable_id}
        )
        assert not hover.is_error, hover.text
        x = display.Display(desktop_settings.display)
        try:
            at = x.screen().root.query_pointer()
            px, py = int(at.root_x) - demo.geometry.x, int(at.root_y) - demo.geometry.y
        finally:
            x.close()
        clicked = await call(
            "perform", {"action": "click", "x": px, "y": py, "windowID": demo.stable_id}
        )
        assert not clicked.is_error, clicked.text
        assert await shown() == (["Nimbus Mono PS"], set())
    finally:
        await reader.close()
