"""The caret and the selection in a Qt text editor and in Writer (issue #21 item 4).

FeatherPad (a Qt text edit) and a Writer paragraph: a text selected by the select step, the
read's Caret and Selected lines, checked against a separate AT-SPI reader asking the text
itself, and what the selection did (typing replaces it) against the file the app saves. The
GTK cases are in tests/desktop/test_text_exact.py and tests/desktop/test_task_views.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import id_of_line
from tests.desktop.office_files import write_fodt
from tests.desktop.test_task_views import caret_of

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.skipif(shutil.which("featherpad") is None, reason="FeatherPad not installed"),
]


async def ok(call: Call, name: str, args: dict[str, object]) -> str:
    done = await call(name, args)
    assert not done.is_error, done.text
    return done.text


async def test_select_and_caret_in_a_qt_text_editor(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("first line\nthe second line\nthird line\n")
    window = await apps.spawn(
        ["featherpad", "--standalone", str(path)], match=lambda w: "notes.txt" in w.title
    )
    wid = window.stable_id
    read = await ok(call, "read_screen_ax", {"windowID": wid})
    view = id_of_line(read, "textbox")
    done = await ok(
        call, "perform", {"windowID": wid, "action": "select", "elementID": view, "text": "second"}
    )
    assert "Selected 'second'" in done and "offsets 15–21" in done, done
    read = await ok(call, "read_screen_ax", {"windowID": wid})
    offset, selection = await caret_of(desktop_settings, lookup(ctx.session, view)[1].key)
    assert selection == (15, 21), selection
    column = offset - 11 + 1  # the second line starts at offset 11
    assert f"Caret: line 2, column {column} in @{view}" in read, read
    assert f"Selected in @{view}: 'second' (offsets 15–21" in read, read
    # the selection is the app's: typing replaces it, and the saved file says so
    await ok(call, "perform", {"windowID": wid, "action": "type", "text": "2nd"})
    await ok(call, "perform", {"windowID": wid, "action": "shortcut", "shortcut": "ctrl+s"})

    async def saved() -> bool:
        return path.read_text() == "first line\nthe 2nd line\nthird line\n"

    await async_wait_for(saved, timeout=10, what="FeatherPad to save the edit")


@pytest.mark.skipif(shutil.which("lowriter") is None, reason="LibreOffice Writer not installed")
async def test_select_by_text_in_a_writer_paragraph(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings, tmp_path: Path
) -> None:
    doc = write_fodt(tmp_path / "memo.fodt", ["Alpha one.", "Beta paragraph two.", "Gamma."])
    writer = await apps.spawn(
        ["lowriter", "--norestore", str(doc)], match=lambda w: "memo" in w.title.lower()
    )
    wid = writer.stable_id
    read = await ok(call, "read_screen_ax", {"windowID": wid})
    para = id_of_line(read, 'para = "Beta paragraph two."')
    done = await ok(
        call, "perform", {"windowID": wid, "action": "select", "elementID": para, "text": "two"}
    )
    assert "Selected 'two'" in done and "offsets 15–18" in done, done
    read = await ok(call, "read_screen_ax", {"windowID": wid})
    offset, selection = await caret_of(desktop_settings, lookup(ctx.session, para)[1].key)
    assert selection == (15, 18) and offset in (15, 18), (offset, selection)
    assert f"Selected in @{para}: 'two' (offsets 15–18" in read, read
    await ok(call, "perform", {"windowID": wid, "action": "type", "text": "2"})
    await ok(call, "perform", {"windowID": wid, "action": "shortcut", "shortcut": "ctrl+s"})

    async def saved() -> bool:
        return "Beta paragraph 2." in paragraphs(doc)

    await async_wait_for(saved, timeout=20, what="Writer to save the edit")


def paragraphs(path: Path) -> list[str]:
    """The paragraphs of a flat ODF text document, parsed from the file."""
    from xml.etree import ElementTree as ET

    text = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:  # being written
        return []
    return ["".join(p.itertext()) for p in root.iter(f"{text}p")]
