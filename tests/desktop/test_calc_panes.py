"""LibreOffice Calc sheets with frozen or split panes read whole (issue #21 item 4).

A sheet saved with frozen panes (its header row and first column kept in view while the rest
scrolls) opens scrolled far down and right: the read must show the header row and the frozen
column with the scrolled part, each cell once, row by row in sheet order. A split view (two
scrolled parts) reads both parts, no cell twice. What is expected comes from the file written
here and read back by its own parser (not through the tools)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from openpyxl.worksheet.views import Pane, Selection

from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")

COLUMNS = 14
ROWS: list[list[Any]] = [[f"Head {chr(65 + c)}" for c in range(COLUMNS)]] + [
    [f"Item {r}"] + [r * 100 + c for c in range(1, COLUMNS)] for r in range(2, 201)
]


def write_sheet(path: Path, freeze: str, scrolled_to: str) -> Path:
    """An .xlsx whose sheet opens with the rows above and columns left of ``freeze`` frozen,
    the scrolling pane showing ``scrolled_to`` at its top left (the cursor there)."""
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Stock"
    for row in ROWS:
        sheet.append(row)
    sheet.freeze_panes = freeze
    view = sheet.sheet_view
    assert view.pane is not None
    view.pane.topLeftCell = scrolled_to
    view.selection = [Selection(pane="bottomRight", activeCell=scrolled_to, sqref=scrolled_to)]
    book.save(path)
    return path


async def open_sheet(apps: Apps, path: Path) -> WindowInfo:
    return await apps.spawn(
        ["localc", "--norestore", str(path)], match=lambda w: path.stem in w.title.lower()
    )


def cells_read(text: str) -> list[tuple[str, str]]:
    """(address, text) of every cell in a read, in the read's order."""
    return re.findall(r'\b([A-Z]{1,3}[0-9]+) "([^"]*)"', text)


def expected(book: Path, rows: list[int], columns: list[int]) -> list[tuple[str, str]]:
    """(address, text) of these cells as the saved file has them (openpyxl, not the tools),
    row by row, the empty ones left out."""
    sheet = openpyxl.load_workbook(book)["Stock"]
    out = []
    for r in rows:
        for c in columns:
            value = sheet.cell(row=r, column=c).value
            if value is not None:
                out.append((f"{openpyxl.utils.get_column_letter(c)}{r}", str(value)))
    return out


async def test_a_sheet_with_frozen_panes_reads_its_header_row_and_frozen_column(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    doc = write_sheet(tmp_path / "frozen.xlsx", "B2", "F61")
    calc = await open_sheet(apps, doc)
    read = await call("read_screen_ax", {"windowID": calc.stable_id})
    assert not read.is_error, read.text
    cells = cells_read(read.text.split("<appGuidance>")[0])
    # one table, every cell once, in sheet order
    assert read.text.count('table "Sheet Stock"') == 1, read.text
    assert len(cells) == len(set(cells)), cells
    places = [(int(re.sub(r"[A-Z]", "", a)), re.sub(r"[0-9]", "", a)) for a, _t in cells]
    assert places == sorted(places, key=lambda p: (p[0], len(p[1]), p[1])), cells
    # the header row over the scrolled columns, and the frozen column beside the scrolled rows
    rows = sorted({p[0] for p in places})
    assert rows[0] == 1 and rows[1] == 61 and 2 not in rows, rows
    letters = sorted({p[1] for p in places}, key=lambda x: (len(x), x))
    assert letters[:2] == ["A", "F"] and "B" not in letters, letters
    columns = [openpyxl.utils.column_index_from_string(x) for x in letters]
    assert cells == expected(doc, rows, columns), cells


async def test_a_split_view_reads_both_parts_each_cell_once(
    call: Call, apps: Apps, tmp_path: Path
) -> None:
    # split under about eight rows; the lower part scrolled to row 5: rows 5–8 or so show in
    # both parts
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Stock"
    for row in ROWS:
        sheet.append(row)
    sheet.sheet_view.pane = Pane(
        ySplit=2400, topLeftCell="A5", activePane="bottomLeft", state="split"
    )
    sheet.sheet_view.selection = [Selection(pane="bottomLeft", activeCell="B5", sqref="B5")]
    doc = tmp_path / "split.xlsx"
    book.save(doc)
    calc = await open_sheet(apps, doc)
    read = await call("read_screen_ax", {"windowID": calc.stable_id})
    assert not read.is_error, read.text
    cells = cells_read(read.text.split("<appGuidance>")[0])
    assert read.text.count('table "Sheet Stock"') == 1, read.text
    assert len(cells) == len(set(cells)), cells
    rows = [int(re.sub(r"[A-Z]", "", a)) for a, _t in cells]
    assert rows == sorted(rows), cells
    shown = sorted(set(rows))
    # both parts: the top from row 1, the lower part well past what the top shows, no gap
    assert shown[0] == 1 and shown[-1] > 15 and shown == list(range(1, shown[-1] + 1)), shown
    letters = sorted({re.sub(r"[0-9]", "", a) for a, _t in cells}, key=lambda x: (len(x), x))
    columns = [openpyxl.utils.column_index_from_string(x) for x in letters]
    assert cells == expected(doc, shown, columns), cells
