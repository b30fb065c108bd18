"""Tables as a model reads them: one line per row, cells named through the table's ID.

A virtual table (a spreadsheet, a tree view: read by the range on screen, see
``desktop/atspi_table.py``) would cost a line and an ID per cell — Calc shows 528 of them.
Instead a table reads as:

* its own line (with its ID), then a line saying what part of it this is and how to reach the
  rest: the range read and the table's size, the active cell and the selection, how to name
  any cell (``@<tableID>:B7`` in a spreadsheet, ``@<tableID>:R7C2`` in any table — on screen
  or not) and how to read another range (``read_screen_ax`` with ``elementID``
  ``<tableID>:A40:F80``);
* in a spreadsheet (cells named by address), one line per row with its non-empty cells:
  ``row 7: A7 "Pear" · B7 "5" [focused]`` — no ID per cell;
* in any other table (a file chooser's list), the columns' headers, then one line per row
  with its cells' texts joined by `` | ``, and one ID: the row's first cell (click it to
  choose the row). Headers that act on a click (a tree view's, sorting its column) read as
  ``colheader "Name"`` lines with IDs; others as one ``columns: Name | Size`` line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from deskpilot.ax.roles import clean_name, cut
from deskpilot.desktop.base import Node
from deskpilot.desktop.cell_refs import address, column_letters
from deskpilot.desktop.grid import Grid

#: Characters of row lines a table shows at most in a read (the rest is named for a zoom).
TABLE_BUDGET = 6000
#: Characters of one cell's text shown.
CELL_LIMIT = 60
#: Rows named in a "read more" hint past the range read.
MORE_ROWS = 50
#: Roles of a table's column headers.
HEADER_ROLES = frozenset({"table-column-header", "column-header"})


@dataclass
class RowLine:
    """One line of a table as shown: its text, and the node that takes its ID (if any)."""

    text: str
    node: Node | None = None
    row: int = -1


def cell_ref(grid: Grid, row: int, col: int) -> str:
    """How a cell is named after ``<tableID>:``: "B7" in a spreadsheet, else "R7C2"."""
    return address(row, col) if grid.addressed else f"R{row + 1}C{col + 1}"


def _text(cell: Node, addressed: bool = True) -> str:
    """A cell's content: its text (a spreadsheet names its cells by address), else its
    text or name (a tree view's cells are named by what they show)."""
    shown = cell.text or ("" if addressed else cell.name)
    if not shown and not addressed:  # a container cell (GTK: an icon and a name)
        parts = [d.text or d.name for d in cell.walk()[1:]]
        shown = " ".join(p for p in parts if p)
    return cut(clean_name(shown or ""), CELL_LIMIT)


def _marks(cells: list[Node]) -> str:
    states: set[str] = set()
    for cell in cells:
        states |= cell.states
    marks = [m for m in ("focused", "selected") if m in states]
    return f" [{' '.join(marks)}]" if marks else ""


def _rows(table: Node) -> dict[int, list[Node]]:
    rows: dict[int, list[Node]] = {}
    for child in table.children:
        if child.cell is not None:
            rows.setdefault(child.cell[0], []).append(child)
    for cells in rows.values():
        cells.sort(key=lambda c: c.cell[1] if c.cell is not None else 0)
    return dict(sorted(rows.items()))


def _range_text(grid: Grid) -> str:
    rows = f"rows {grid.first_row + 1}–{grid.last_row + 1} of {grid.rows}"
    if grid.first_row == 0 and grid.last_row == grid.rows - 1:
        rows = f"all {grid.rows} rows"
    if grid.addressed:
        cols = (
            f"columns {column_letters(grid.first_column)}–{column_letters(grid.last_column)} "
            f"of {grid.columns}"
        )
    else:
        cols = f"columns {grid.first_column + 1}–{grid.last_column + 1} of {grid.columns}"
    if grid.first_column == 0 and grid.last_column == grid.columns - 1:
        cols = f"all {grid.columns} columns"
    return f"{rows}, {cols}"


def _runs(indexes: set[int], name: Callable[[int], object]) -> str:
    """``1, 61–85``: sorted indexes as runs, each named by ``name`` (a callable)."""
    runs: list[list[int]] = []
    for i in sorted(indexes):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(name(a)) if a == b else f"{name(a)}–{name(b)}" for a, b in runs)


def _panes_text(table: Node, grid: Grid) -> str:
    """What a table read from several panes holds: its rows and columns as runs."""
    places = [c.cell for c in table.children if c.cell is not None]
    rows = _runs({r for r, _ in places}, lambda r: r + 1)
    cols = _runs({c for _, c in places}, column_letters if grid.addressed else lambda c: c + 1)
    return (
        f"rows {rows} of {grid.rows}, columns {cols} of {grid.columns} "
        f"(in {grid.panes} panes: frozen or split, read as one)"
    )


def _selection(table: Node, grid: Grid) -> str:
    """The active cell and the selection's bounding range (among the cells read)."""
    parts = []
    focused = next((c for c in table.children if "focused" in c.states and c.cell), None)
    if focused is not None and focused.cell is not None:
        parts.append(f"active cell {cell_ref(grid, *focused.cell)}")
    chosen = [c.cell for c in table.children if "selected" in c.states and c.cell is not None]
    if not grid.addressed:
        rows = sorted({r for r, _ in chosen})
        if rows:
            listed = ", ".join(str(r + 1) for r in rows[:10]) + (" …" if len(rows) > 10 else "")
            parts.append(f"selected row{'s' if len(rows) > 1 else ''} {listed}")
    elif len(chosen) > 1:
        r0, r1 = min(r for r, _ in chosen), max(r for r, _ in chosen)
        c0, c1 = min(c for _, c in chosen), max(c for _, c in chosen)
        whole = len(chosen) == (r1 - r0 + 1) * (c1 - c0 + 1)
        shown = f"{cell_ref(grid, r0, c0)}:{cell_ref(grid, r1, c1)}"
        parts.append(f"selected {shown}" + ("" if whole else " (in part)"))
    return "; ".join(parts)


def more_range(grid: Grid) -> str:
    """The next rows past the range read (for a "read more" hint), or "" when all are read."""
    if grid.last_row >= grid.rows - 1:
        return ""
    start = cell_ref(grid, grid.last_row + 1, grid.first_column)
    end = cell_ref(grid, min(grid.rows - 1, grid.last_row + MORE_ROWS), grid.last_column)
    return f"{start}:{end}"


def summary(table: Node, grid: Grid, eid: str) -> str:
    """The line under the table's: the part read, the selection, how to reach other cells."""
    what = "spreadsheet" if grid.addressed else "table"
    ranges = _panes_text(table, grid) if grid.panes > 1 else _range_text(grid)
    parts = [f"{what}, {ranges} read"]
    if sel := _selection(table, grid):
        parts.append(sel)
    example = cell_ref(grid, grid.first_row, grid.first_column)
    parts.append(f"act on any cell as @{eid}:{example}")
    if more := more_range(grid):
        parts.append(f'read more with read_screen_ax elementID "{eid}:{more}"')
    return "(" + "; ".join(parts) + ")"


def column_headers(table: Node) -> list[tuple[Node, bool]]:
    """The table's column headers read as its children, each with whether it acts on a click
    (a tree view's header sorts its column) — when one does: they read as lines, those that
    act with an ID, instead of the ``columns:`` line. Else none."""
    heads = [c for c in table.children if c.cell is None and c.role in HEADER_ROLES]
    acting = [(h, h.primary_action in ("click", "press")) for h in heads]
    return acting if any(a for _h, a in acting) else []


def row_lines(
    table: Node, grid: Grid, eid: str, budget: int = TABLE_BUDGET, *, columns: bool = True
) -> list[RowLine]:
    """The rows' lines within ``budget`` characters (a last line names what is left), after
    a ``columns:`` line of the headers' names (unless ``columns`` is false: they are lines
    of their own)."""
    out: list[RowLine] = []
    used = 0
    rows = _rows(table)
    if columns and not grid.addressed and grid.headers:
        cols = range(grid.first_column, grid.last_column + 1)
        out.append(RowLine("columns: " + " | ".join(grid.header(c) or "-" for c in cols)))
    for row, cells in rows.items():
        if grid.addressed:
            shown = [c for c in cells if _text(c) or {"focused", "selected"} & c.states]
            if not shown:
                continue
            parts = []
            for c in shown:
                assert c.cell is not None
                value = f' "{_text(c)}"' if _text(c) else ""
                parts.append(f"{cell_ref(grid, *c.cell)}{value}{_marks([c])}")
            line = RowLine(f"row {row + 1}: " + " · ".join(parts), row=row)
        else:
            texts = [_text(c, addressed=False) for c in cells]
            if not any(texts):
                continue
            line = RowLine(f"row {row + 1}{_marks(cells)}: " + " | ".join(texts), cells[0], row)
        if used + len(line.text) > budget:
            left = [r for r in rows if r >= row]
            start = cell_ref(grid, left[0], grid.first_column)
            end = cell_ref(grid, left[-1], grid.last_column)
            out.append(
                RowLine(
                    f"… {len(left)} more rows: read them with read_screen_ax elementID "
                    f'"{eid}:{start}:{end}"'
                )
            )
            break
        used += len(line.text)
        out.append(line)
    if not any(ln.row >= 0 for ln in out):
        out.append(RowLine("(the cells read are all empty)"))
    return out
