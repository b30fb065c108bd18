"""What tasks need to see: the caret and selection in text, an open combo list in full, the
slide pane.

Each view is checked against what the test knows independently: the caret and the selection
against a separate AT-SPI reader (its own bus connection) asking the text itself; the combo's
items against the values zenity was given, and the item chosen against zenity's own answer;
the slides against the presentation file written for the test.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from tests.desktop.conftest import Apps, Call
from tests.desktop.office_files import write_fodp, write_fodt

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def keys(call: Call, window: str, *combos: str) -> None:
    for combo in combos:
        done = await call("perform", {"action": "shortcut", "shortcut": combo, "windowID": window})
        assert not done.is_error, done.text


async def caret_of(settings: Settings, key: tuple[str, str]) -> tuple[int, tuple[int, int]]:
    """The caret offset and first selection of a text, asked by a reader of its own."""
    reader = await AtspiBus.connect(settings.session_bus)
    try:
        offset = int(await reader.get_property(*key, "Text", "CaretOffset"))
        start, end = await reader.call(*key, "Text", "GetSelection", "i", [0])
        return offset, (int(start), int(end))
    finally:
        await reader.close()


def header_caret(text: str) -> tuple[str, str]:
    """The element ID and the position of the read's ``Caret:`` line."""
    m = re.search(r"^Caret: (.+) in @(\S+) \(offset", text, re.M)
    assert m, text[:800]
    return m.group(2), m.group(1)


async def test_the_caret_and_selection_in_a_text_editor(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("first line\nsecond line here\nthird\n")
    pad = await apps.spawn(["mousepad", str(path)], match=lambda w: "notes" in w.title)
    await call("read_screen_ax", {"windowID": pad.stable_id})
    await keys(call, pad.stable_id, "ctrl+home", "down", "shift+end")
    text = (await call("read_screen_ax", {"windowID": pad.stable_id})).text
    eid, where = header_caret(text)
    offset, selection = await caret_of(desktop_settings, lookup(ctx.session, eid)[1].key)
    assert selection == (11, 27)  # the whole second line, by the text's own account
    assert where == f"line 2, column {offset - 11 + 1}", text[:400]
    assert "Selected in @" in text and "'second line here' (offsets 11–27" in text


async def test_the_caret_and_selection_in_a_writer_paragraph(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings, tmp_path: Path
) -> None:
    doc = write_fodt(tmp_path / "memo.fodt", ["Alpha one.", "Beta paragraph two.", "Gamma."])
    writer = await apps.spawn(
        ["lowriter", "--norestore", str(doc)], match=lambda w: "memo" in w.title.lower()
    )
    await call("read_screen_ax", {"windowID": writer.stable_id})
    await keys(call, writer.stable_id, "ctrl+home", "down", "ctrl+shift+right")
    text = (await call("read_screen_ax", {"windowID": writer.stable_id})).text
    eid, where = header_caret(text)
    assert re.search(rf'para = "Beta paragraph two\.".* @{re.escape(eid)}$', text, re.M), text
    offset, selection = await caret_of(desktop_settings, lookup(ctx.session, eid)[1].key)
    assert selection == (0, 5) and where == f"column {offset + 1}", (selection, where)
    assert "'Beta ' (offsets 0–5, 5 characters)" in text


async def test_an_open_combo_list_names_every_item_the_scrolled_ones_as_more(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    values = [f"Option {i}" for i in range(1, 61)]
    answer = tmp_path / "answer.txt"
    script = (
        f"zenity --forms --add-combo=Pick --combo-values={shlex.quote('|'.join(values))} > {answer}"
    )
    form = await apps.spawn(["sh", "-c", script], match=lambda w: w.app.executable == "zenity")
    win = form.stable_id
    text = (await call("read_screen_ax", {"windowID": win})).text
    combo = re.search(r"^\s*combobox.* @(\S+)$", text, re.M)
    assert combo, text
    opened = await call("perform", {"elementID": combo.group(1), "windowID": win})
    assert not opened.is_error, opened.text
    text = (await call("read_screen_ax", {"windowID": win})).text
    listed = re.findall(r'^\s*menuitem "(Option \d+)"', text, re.M)
    more = re.search(r"… (\d+) more items scrolled out of the list: (.*)$", text, re.M)
    assert more, text
    hidden = re.findall(r'"(Option \d+)"', more.group(2))
    assert len(listed) + int(more.group(1)) == 60, text
    assert listed + hidden == values[: len(listed) + len(hidden)], text
    # one of the scrolled-away items, chosen by name; zenity answers with it
    await keys(call, win, "escape")
    chose = await call(
        "perform",
        {"action": "fill", "elementID": combo.group(1), "text": "Option 47", "windowID": win},
    )
    assert not chose.is_error, chose.text
    text = (await call("read_screen_ax", {"windowID": win})).text
    ok = re.search(r'^\s*button "OK" @(\S+)$', text, re.M)
    assert ok, text
    await call("perform", {"elementID": ok.group(1), "windowID": win})

    async def answered() -> str | None:
        got = answer.read_text() if answer.exists() else ""
        return got if got.endswith("\n") else None

    assert await async_wait_for(answered, timeout=15, what="zenity's answer") == "Option 47\n"


async def test_the_impress_slide_pane_lists_the_slides(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    titles = ["Intro", "Numbers", "Questions"]
    deck = write_fodp(tmp_path / "deck.fodp", titles)
    impress = await apps.spawn(
        ["loimpress", "--norestore", str(deck)], match=lambda w: "deck" in w.title.lower()
    )
    text = (await call("read_screen_ax", {"windowID": impress.stable_id})).text

    def pane(read: str) -> list[tuple[str, str]]:
        part = read[read.index('document "Slides View"') :]
        return re.findall(r'^\s*\S+ "Slide (\d)"[^@\n]* @(\S+)$', part, re.M)

    assert [n for n, _ in pane(text)] == ["1", "2", "3"], text
    # each slide of the pane shows its own content when clicked: the file's titles, in order
    # (Impress makes the pane's objects anew when the selection moves: read before each click)
    for n, title in enumerate(titles, 1):
        eid = dict(pane((await call("read_screen_ax", {"windowID": impress.stable_id})).text))
        done = await call("perform", {"elementID": eid[str(n)], "windowID": impress.stable_id})
        assert not done.is_error, done.text

        async def shows(title: str = title) -> bool:
            read = (await call("read_screen_ax", {"windowID": impress.stable_id})).text
            editing = read[read.index("document-presentation") :]  # the slide being edited
            return f'para = "{title}"' in editing

        await async_wait_for(shows, timeout=15, what=f"slide {title!r} in the editing view")
