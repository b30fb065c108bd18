"""A GTK file chooser: choosing a file by its row returns exactly that file.

GTK activates the row of a cell, but the chooser answers with the row *selected*: a cell
activated without moving the selection returned the file selected before (the first one),
silently. Each file is chosen through the tools by its row's ID; what zenity prints (its
answer, not the tools') must be that file.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize("wanted", [7, 3, 31], ids=["file7", "file3", "file31-off-screen"])
async def test_choosing_a_file_by_its_row_returns_exactly_that_file(
    wanted: int, call: Call, apps: Apps, tmp_path: Path
) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    for i in range(1, 41):
        (folder / f"file{i}.txt").write_text(f"{i}\n")
    answer = tmp_path / "answer.txt"
    script = f"zenity --file-selection --filename={shlex.quote(str(folder))}/ > {answer}"
    chooser = await apps.spawn(["sh", "-c", script], match=lambda w: w.app.executable == "zenity")

    async def row_id() -> str | None:
        text = (await call("read_screen_ax", {"windowID": chooser.stable_id})).text
        m = re.search(rf"^\s*row \d+[^:]*: file{wanted}\.txt \|.* @(\S+)$", text, re.M)
        return m.group(1) if m else None

    eid = await async_wait_for(row_id, timeout=20, what=f"file{wanted}.txt's row")
    clicked = await call("perform", {"elementID": eid, "windowID": chooser.stable_id})
    assert not clicked.is_error, clicked.text
    assert "selected" in clicked.text, clicked.text
    assert not answer.exists() or not answer.read_text()  # selecting never confirms
    text = (await call("read_screen_ax", {"windowID": chooser.stable_id})).text
    opened = await call("perform", {"elementID": find_id(text, "button", "OK")})
    assert not opened.is_error, opened.text

    async def answered() -> str | None:
        text = answer.read_text() if answer.exists() else ""
        return text if text.endswith("\n") else None

    got = await async_wait_for(answered, timeout=15, what="zenity's answer")
    assert got == f"{folder}/file{wanted}.txt\n"
