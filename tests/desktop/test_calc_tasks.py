"""LibreOffice Calc tasks done through the tools, checked in the saved file.

As a model would: read the sheet, fill a column with a formula (its first cell by the table's
ID and address, then the Name Box and ctrl+d), rename the sheet through its menu and dialog,
sort a range through the Data menu, save — then the saved .fods is parsed (not the tools).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.office_files import column, read_sheets, write_fods

pytestmark = pytest.mark.asyncio(loop_scope="session")

FRUIT = ["Apple", "Banana", "Cherry", "Damson", "Elder", "Fig", "Grape", "Hazel", "Kiwi",
         "Lemon", "Mango", "Nectar", "Olive", "Peach", "Quince", "Rowan", "Sloe", "Tamarind",
         "Ugli", "Vanilla"]  # fmt: skip
ROWS: list[list[Any]] = [["Name", "Qty", "Price"]] + [
    [name, (i * 7) % 20 + 1, round(1 + i * 0.5, 2)] for i, name in enumerate(FRUIT)
]


async def _menu_item(call: Call, window: str, menu: str, item: str) -> None:
    """Open ``menu`` and click its item whose name starts with ``item``."""
    text = (await call("read_screen_ax", {"windowID": window})).text
    opened = await call("perform", {"elementID": find_id(text, "menu", menu), "windowID": window})
    assert not opened.is_error, opened.text

    async def shown() -> str | None:
        read = (await call("read_screen_ax", {"windowID": window})).text
        m = re.search(rf'^\s*menuitem "{re.escape(item)}[^"]*".* @(\S+)$', read, re.M)
        return m.group(1) if m else None

    eid = await async_wait_for(shown, timeout=15, what=f"the {menu} menu's {item!r}")
    clicked = await call("perform", {"elementID": eid, "windowID": window})
    assert not clicked.is_error, clicked.text


async def _select(call: Call, window: str, cells: str) -> None:
    """Select a range through the Name Box (ctrl+shift+f5), as a person types it."""
    for step in (
        {"action": "shortcut", "shortcut": "ctrl+shift+f5"},
        {"action": "type", "text": f"{cells}\n"},
    ):
        done = await call("perform", {**step, "windowID": window})
        assert not done.is_error, done.text


async def test_fill_a_column_rename_the_sheet_sort_and_save(
    call: Call, ctx: ToolContext, apps: Apps, tmp_path: Path
) -> None:
    doc = write_fods(tmp_path / "fruit.fods", {"Stock": ROWS})
    calc = await apps.spawn(
        ["localc", "--norestore", str(doc)], match=lambda w: "fruit" in w.title.lower()
    )
    win = calc.stable_id
    first = (await call("read_screen_ax", {"windowID": win})).text
    assert 'row 2: A2 "Apple" · B2 "1" · C2 "1"' in first, first
    table = re.search(r'^\s*table "Sheet Stock".* @(\S+)$', first, re.M)
    assert table, first
    tid = table.group(1)

    # a column with a formula: the first cell by address, then fill down over the range
    head = await call("perform", {"action": "fill", "elementID": f"{tid}:D1", "text": "Total"})
    assert "it shows 'Total'" in head.text, head.text
    filled = await call("perform", {"action": "fill", "elementID": f"{tid}:D2", "text": "=B2*C2"})
    assert "holds" in filled.text and "B2*C2" in filled.text, filled.text
    await _select(call, win, "D2:D21")
    down = await call("perform", {"action": "shortcut", "shortcut": "ctrl+d", "windowID": win})
    assert not down.is_error, down.text

    # rename the sheet: Sheet > Rename Sheet…, its dialog reported and read, then OK
    await _menu_item(call, win, "Sheet", "Rename Sheet")
    dialog = (await call("read_screen_ax")).text  # the dialog is now the tracked target
    assert "Rename Sheet" in dialog, dialog
    name_field = find_id(dialog, "textbox")
    renamed = await call("perform", {"action": "fill", "elementID": name_field, "text": "Fruit"})
    assert not renamed.is_error, renamed.text
    ok = await call("perform", {"elementID": find_id(dialog, "button", "OK")})
    assert "closed" in ok.text, ok.text

    # sort the data rows by name, descending: select them, Data > Sort Descending
    await _select(call, win, "A2:D21")
    await _menu_item(call, win, "Data", "Sort Descending")

    before = doc.stat().st_mtime
    saved = await call("perform", {"action": "shortcut", "shortcut": "ctrl+s", "windowID": win})
    assert not saved.is_error, saved.text

    async def written() -> dict[str, Any] | None:
        if doc.stat().st_mtime == before:
            return None
        try:
            return read_sheets(doc)
        except Exception:  # still being written
            return None

    await async_wait_for(written, timeout=20, what="Calc to save the file")
    sheets = read_sheets(doc)
    assert list(sheets) == ["Fruit"], sheets.keys()
    rows = sheets["Fruit"]
    names = [c.text for c in column(rows, 0)[1:21]]
    assert names == sorted(FRUIT, reverse=True), names
    for r, row in enumerate(rows[1:21], start=2):
        qty, price, total = row[1].value, row[2].value, row[3]
        assert qty is not None and price is not None
        assert total.value == pytest.approx(qty * price), (r, row)
        assert re.fullmatch(rf"of:=\[\.B{r}\]\*\[\.C{r}\]", total.formula), total.formula
