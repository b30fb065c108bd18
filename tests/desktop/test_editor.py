"""mousepad: fill a multi-line text, read it back, save it through the Save dialog by tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, value_of

pytestmark = pytest.mark.asyncio(loop_scope="session")

TEXT = "first line\nsecond line with «unicode» ✓\nthird"


async def test_fill_read_back_and_save(
    call: Call, ctx: ToolContext, apps: Apps, tmp_path: Path
) -> None:
    opened = await call("open_app", {"bundleId": "Mousepad"})
    assert not opened.is_error, opened.text
    await apps.adopt(
        next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    )
    read = (await call("read_screen_ax")).text
    area = find_id(read, "textbox")
    filled = await call("perform", {"action": "fill", "elementID": area, "text": TEXT})
    assert not filled.is_error, filled.text
    assert value_of((await call("read_screen_ax")).text, area) == TEXT

    saved = await call("perform", {"action": "shortcut", "shortcut": "ctrl+s"})
    assert "A new window opened" in saved.text, saved.text
    dialog = (await call("read_screen_ax")).text
    dialog_id = ctx.session.target
    assert "Save As" in dialog
    target = tmp_path / "note.txt"
    name_field = find_id(dialog, "textbox")
    # GTK's file chooser reacts to key input: type the name like a person, then press enter
    typed = await call(
        "perform_sequence",
        {
            "steps": [
                {"action": "type", "elementID": name_field, "text": str(target)},
                {"action": "shortcut", "shortcut": "enter"},
            ]
        },
    )
    assert not typed.is_error, typed.text
    await async_wait_for(_exists(target), timeout=10, what="the saved file")

    async def dialog_closed() -> bool:  # the file is written before the dialog goes away
        return all(w.stable_id != dialog_id for w in await ctx.desktop.list_windows())

    await async_wait_for(dialog_closed, timeout=10, what="the Save dialog to close")
    assert target.read_text() == TEXT
    # the dialog is gone: the next read falls back to the editor window, and says so
    back = (await call("read_screen_ax")).text
    assert "has closed; now using the earlier target" in back
    assert "note.txt - Mousepad" in back


def _exists(path: Path):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return path.exists() and path.stat().st_size > 0

    return check
