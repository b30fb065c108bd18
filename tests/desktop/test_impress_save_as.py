"""Impress: fill a slide's title placeholder, Save As through the GTK dialog, check the file.

The title placeholder is a shape around a paragraph: ``fill`` on it fills its paragraph (the
fallback to typing selected every shape of the slide and deleted them). Opening and closing
the Save As dialog is reported by the actions that do it: a folder typed with Enter says the
dialog is still open, the file's path with Enter says it closed. The saved .odp is parsed.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import window_id_from

pytestmark = pytest.mark.asyncio(loop_scope="session")

PRESENTATION = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"


def titles(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as zf:
        root = ET.fromstring(zf.read("content.xml"))
    return [
        "".join(frame.itertext()).strip()
        for frame in root.iter(f"{{{DRAW}}}frame")
        if frame.get(f"{{{PRESENTATION}}}class") == "title"
    ]


async def test_fill_a_title_then_save_as_through_the_dialog(
    call: Call, ctx: ToolContext, apps: Apps, tmp_path: Path
) -> None:
    opened = await call("open_app", {"bundleId": "LibreOffice Impress"})
    assert not opened.is_error, opened.text
    main = window_id_from(opened.text)
    for w in await ctx.desktop.list_windows():  # the template chooser of a first start
        if w.title == "Select a Template":
            await call(
                "perform", {"action": "shortcut", "shortcut": "escape", "windowID": w.stable_id}
            )
            # open_app may have answered with the chooser (it came first): the slides' window
            main = next(
                v.stable_id
                for v in await ctx.desktop.list_windows()
                if v.pid == w.pid and v.title.endswith("LibreOffice Impress")
            )

    async def title_id() -> str | None:
        text = (await call("read_screen_ax", {"windowID": main})).text
        m = re.search(r'^\s*\S+ "PresentationTitle"[^@\n]* @(\S+)$', text, re.M)
        return m.group(1) if m else None

    eid = await async_wait_for(title_id, timeout=30, what="the title placeholder")
    filled = await call(
        "perform",
        {"action": "fill", "elementID": eid, "text": "Quarterly report", "windowID": main},
    )
    assert not filled.is_error and "its text" in filled.text, filled.text
    after = (await call("read_screen_ax", {"windowID": main})).text
    assert "PresentationSubtitle" in after  # the other shapes are still there

    save = await call(
        "perform", {"action": "shortcut", "shortcut": "ctrl+shift+s", "windowID": main}
    )
    assert "A new window opened" in save.text, save.text  # the Save As dialog, now the target
    dialog = re.search(r"\(windowID (\S+)\)", save.text)
    assert dialog, save.text
    # a folder and Enter: the dialog opens the folder and stays, and the result says so
    (tmp_path / "decks").mkdir()
    into = await call("perform", {"action": "type", "text": f"{tmp_path}/decks/\n"})
    assert "is still open" in into.text, into.text
    # the file's name in its field, then Enter: the dialog closes, and the result says so
    read = (await call("read_screen_ax")).text
    name = re.search(r'^\s*textbox "Name:?"[^@\n]* @(\S+)$', read, re.M)
    assert name, read
    filled = await call(
        "perform", {"action": "fill", "elementID": name.group(1), "text": "deck.odp"}
    )
    assert not filled.is_error, filled.text
    typed = await call("perform", {"action": "shortcut", "shortcut": "enter"})
    assert f"The window {dialog.group(1)} closed." in typed.text, typed.text
    target = tmp_path / "decks" / "deck.odp"

    async def saved() -> list[str] | None:
        try:
            return titles(target) if target.exists() else None
        except (zipfile.BadZipFile, KeyError):
            return None  # still being written

    assert await async_wait_for(saved, timeout=20, what="the .odp") == ["Quarterly report"]
