"""ax/panes.py: a sheet's frozen or split panes merged into one table (pure logic; the real
case is tests/desktop/test_calc_panes.py)."""

from __future__ import annotations

from deskpilot.ax.panes import merge_panes
from deskpilot.ax.render import Renderer
from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.cell_refs import address
from deskpilot.desktop.grid import Grid


def pane(
    n: int, rows: range, cols: range, y: int, *, cursor: tuple[int, int] | None = None
) -> Node:
    grid = Grid(1000, 50, rows.start, rows.stop - 1, cols.start, cols.stop - 1, addressed=True)
    table = Node(
        key=("b", f"/t{n}"),
        role="table",
        name="Sheet S",
        grid=grid,
        bounds=Rect(0, y, 500, 20 * len(rows)),
        states={"showing"},
    )
    for r in rows:
        for c in cols:
            states = {"showing"} | ({"focused"} if (r, c) == cursor else set())
            table.children.append(
                Node(
                    key=("b", f"/c{n}{r}{c}"),
                    role="table-cell",
                    name=address(r, c),
                    text=f"v{r}.{c}",
                    cell=(r, c),
                    states=states,
                )
            )
    doc = Node(
        key=("b", f"/d{n}"), role="document-spreadsheet", states={"showing"}, bounds=table.bounds
    )
    doc.children.append(table)
    return doc


def test_frozen_panes_read_as_one_table_each_cell_once_in_sheet_order() -> None:
    root = Node(key=("b", "/r"), role="scroll-pane", states={"showing"})
    # bottom-right holds the cursor; the top panes overlap it on row 0 nowhere, the left
    # panes overlap the right ones on no column; a split's overlap (row 60 twice) is kept once
    root.children = [
        pane(1, range(60, 63), range(0, 1), 40),
        pane(2, range(60, 63), range(5, 7), 40, cursor=(60, 5)),
        pane(3, range(0, 1), range(0, 1), 20),
        pane(4, range(0, 1), range(5, 7), 20),
        pane(5, range(60, 61), range(5, 6), 100),
    ]
    merge_panes(root)
    assert [d.key for d in root.children] == [("b", "/d2")]
    table = root.children[0].children[0]
    assert [c.cell for c in table.children] == [
        (0, 0),
        (0, 5),
        (0, 6),
        (60, 0),
        (60, 5),
        (60, 6),
        (61, 0),
        (61, 5),
        (61, 6),
        (62, 0),
        (62, 5),
        (62, 6),
    ]
    assert table.grid is not None and table.grid.panes == 5
    text = Renderer(Rect(0, 0, 800, 600)).render(root).text
    assert "rows 1, 61–63 of 1000, columns A, F–G of 50 (in 5 panes" in text, text
    assert 'row 1: A1 "v0.0" · F1 "v0.5" · G1 "v0.6"' in text, text
    assert 'F61 "v60.5" [focused]' in text, text


def test_different_sheets_side_by_side_stay_apart() -> None:
    root = Node(key=("b", "/r"), role="scroll-pane", states={"showing"})
    a, b = pane(1, range(0, 2), range(0, 2), 0), pane(2, range(0, 2), range(0, 2), 50)
    b.children[0].name = "Sheet T"
    root.children = [a, b]
    merge_panes(root)
    assert len(root.children) == 2
