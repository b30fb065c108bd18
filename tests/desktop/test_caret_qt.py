"""The caret and the selection in a Qt text editor (issue #21 item 4): FeatherPad (Qt 5/6
text edit) shows them in the read as GTK's text views and LibreOffice Writer do
(tests/desktop/test_text_exact.py, tests/desktop/test_task_views.py). The caret and the
selection are checked against a separate AT-SPI reader asking the text itself, and what the
selection did against the file the editor saves."""

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
