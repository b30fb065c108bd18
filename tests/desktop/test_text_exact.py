"""Exact text, caret and selection on real apps (issue #21 item 4).

A web page with inline pieces, an icon, a long paragraph, a field and a text area (the page
reports its own texts and what is selected to the test server); mousepad's text view (GTK 3:
what a selection did is checked in the file the app saves). Each effect is checked through a
channel the tools do not use.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.base import WindowInfo
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import id_of_line
from tests.desktop.web import PageServer, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def ok(call: Call, name: str, args: dict[str, object]) -> str:
    done = await call(name, args)
    assert not done.is_error, done.text
    return done.text


async def test_web_text_reads_as_the_page_has_it(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "text.html")
    print(page)
    texts = await pages.wait_for("texts")
    said = " ".join(texts["instruction"].split())
    assert said.startswith('Enter "Michel" in the Name field, then press')
    # inline pieces joined as rendered, the icon by its name where it is
    # (a quoted name escapes its quotes: \" is ")
    shown = page.replace('\\"', '"')
    assert (
        'para "Enter "Michel" in the Name field, then press [image: Settings] to go on."' in shown
    )
    # the long paragraph: cut, with an ID that reads it all
    long_line = next(ln for ln in page.splitlines() if "A long paragraph begins here" in ln)
    assert "LAST-WORDS-HERE" not in long_line and "for all" in long_line, long_line
    print(long_line)
    whole = await ok(call, "read_screen_ax", {"elementID": long_line.rsplit("@", 1)[1].split()[0]})
    print(whole)
    assert " ".join(texts["long"].split()) in " ".join(whole.split())
    # a field reads by its value
    assert 'textbox = "Ada Lovelace"' in page


async def test_select_in_web_field_and_paragraph(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "text.html")
    name = id_of_line(page, '"Ada Lovelace"')
    done = await ok(call, "perform", {"action": "select", "elementID": name, "text": "Lovelace"})
    assert "Selected 'Lovelace'" in done and "offsets 4–12" in done, done
    await pages.wait_for("selection", **{"in": "name", "start": 4, "end": 12})
    read = await ok(call, "read_screen_ax", {})
    assert re.search(rf"Selected in @{re.escape(name)}: 'Lovelace' \(offsets 4–12", read), read
    assert f"Caret: column 13 in @{name}" in read, read
    by_offsets = await ok(
        call, "perform", {"action": "select", "elementID": name, "start": 0, "end": 3}
    )
    assert "Selected 'Ada'" in by_offsets
    await pages.wait_for("selection", **{"in": "name", "start": 0, "end": 3})

    # a paragraph's text (not a field, no ID): found in the window; the page's own selection
    done = await ok(call, "perform", {"action": "select", "text": "brown fox"})
    assert "Selected 'brown fox'" in done, done
    await pages.wait_for("selection", page="brown fox")
    twice = await call("perform", {"action": "select", "text": "lazy dog"})
    assert twice.is_error and "2 times" in twice.text and "Nothing was selected" in twice.text
    missing = await call("perform", {"action": "select", "text": "purple fox"})
    assert missing.is_error and "not in it" in missing.text


async def test_select_and_caret_in_a_gtk_text_view(
    call: Call, ctx: ToolContext, apps: Apps, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("first line\nthe second line\nthird line\n")
    window = await apps.spawn(["mousepad", str(path)], match=lambda w: "notes.txt" in w.title)
    wid = window.stable_id
    read = await ok(call, "read_screen_ax", {"windowID": wid})
    view = id_of_line(read, "textbox")
    done = await ok(
        call,
        "perform",
        {"windowID": wid, "action": "select", "elementID": view, "text": "second"},
    )
    assert "Selected 'second'" in done and "offsets 15–21" in done, done
    read = await ok(call, "read_screen_ax", {"windowID": wid})
    assert f"Caret: line 2, column 11 in @{view}" in read, read
    assert f"Selected in @{view}: 'second' (offsets 15–21" in read, read
    # the selection is the app's: typing replaces it, and the saved file says so
    await ok(call, "perform", {"windowID": wid, "action": "type", "text": "2nd"})
    await ok(call, "perform", {"windowID": wid, "action": "shortcut", "shortcut": "ctrl+s"})

    async def saved() -> bool:
        return path.read_text() == "first line\nthe 2nd line\nthird line\n"

    await async_wait_for(saved, timeout=10, what="mousepad to save the edit")
