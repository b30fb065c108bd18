"""Virtual tables in a read: rows as lines, cells named through the table's ID."""

from __future__ import annotations

from deskpilot.ax.render import Renderer
from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.grid import Grid

AREA = Rect(0, 0, 1280, 800)
SHOWN = frozenset({"showing", "visible", "enabled"})


def sheet(values: dict[tuple[int, int], str], focused: tuple[int, int] = (0, 0)) -> Node:
    grid = Grid(
        rows=1048576,
        columns=16384,
        first_row=0,
        last_row=32,
        first_column=0,
        last_column=15,
        addressed=True,
    )
    table = Node(
        key=(":1.5", "/t"),
        role="table",
        name="Sheet Sheet1",
        states=SHOWN | {"focused"},
        bounds=Rect(40, 150, 1100, 560),
        grid=grid,
    )
    for r in range(33):
        for c in range(16):
            states = SHOWN | ({"focused"} if (r, c) == focused else set())
            table.children.append(
                Node(
                    key=(":1.5", f"/c{r}_{c}"),
                    role="table-cell",
                    name=f"{chr(65 + c)}{r + 1}",
                    states=frozenset(states),
                    text=values.get((r, c), ""),
                    cell=(r, c),
                    parent_key=table.key,
                )
            )
    return table


def window_with(child: Node) -> Node:
    return Node(key=(":1.5", "/frame"), role="frame", name="w", states=SHOWN, children=[child])


def test_a_spreadsheet_reads_as_rows_of_its_non_empty_cells() -> None:
    table = sheet({(0, 0): "Name", (0, 1): "Qty", (1, 0): "Pear", (1, 1): "5"}, focused=(1, 1))
    out = Renderer(AREA).render(window_with(table))
    lines = out.text.splitlines()
    assert lines[0] == 'table "Sheet Sheet1" [focused] @5.t' or lines[0].startswith("table ")
    tid = next(eid for eid, n in out.ids.items() if n.key == table.key)
    assert f"act on any cell as @{tid}:A1" in lines[1] and "active cell B2" in lines[1]
    assert "rows 1–33 of 1048576, columns A–P of 16384" in lines[1]
    assert f'read more with read_screen_ax elementID "{tid}:A34:P83"' in lines[1]
    assert lines[2].strip() == 'row 1: A1 "Name" · B1 "Qty"'
    assert lines[3].strip() == 'row 2: A2 "Pear" · B2 "5" [focused]'
    assert len(lines) == 4  # empty rows are not shown; no ID per cell
    assert len(out.text) < 600


def test_a_tree_view_reads_as_rows_with_one_id_each_under_its_headers() -> None:
    grid = Grid(
        rows=3,
        columns=2,
        first_row=0,
        last_row=2,
        first_column=0,
        last_column=1,
        headers=((0, "Name"), (1, "Size")),
    )
    table = Node(key=(":1.5", "/files"), role="table", name="Files", states=SHOWN, grid=grid)
    for r, (name, size) in enumerate([("a.txt", "1 kB"), ("b.txt", "2 kB"), ("c.txt", "")]):
        for c, text in enumerate((name, size)):
            states = SHOWN | ({"selected"} if r == 1 else set())
            table.children.append(
                Node(
                    key=(":1.5", f"/f{r}{c}"),
                    role="table-cell",
                    name=text,
                    states=frozenset(states),
                    cell=(r, c),
                    parent_key=table.key,
                )
            )
    out = Renderer(AREA).render(window_with(table))
    lines = [ln.strip() for ln in out.text.splitlines()]
    assert "selected row 2" in lines[1] and "all 3 rows" in lines[1]
    assert lines[2] == "columns: Name | Size"
    assert lines[3].startswith("row 1: a.txt | 1 kB @")
    assert lines[4].startswith("row 2 [selected]: b.txt | 2 kB @")
    row_ids = [ln.rsplit("@", 1)[1] for ln in lines[3:6]]
    assert [out.ids[i].key for i in row_ids] == [
        (":1.5", "/f00"),
        (":1.5", "/f10"),
        (":1.5", "/f20"),
    ]


def test_headers_that_sort_on_a_click_are_lines_with_ids() -> None:
    grid = Grid(
        rows=1,
        columns=2,
        first_row=0,
        last_row=0,
        first_column=0,
        last_column=1,
        headers=((0, "Name"), (1, "Size")),
    )
    table = Node(key=(":1.5", "/files"), role="table", name="Files", states=SHOWN, grid=grid)
    for c, (title, clicks) in enumerate((("Name", ("click",)), ("Size", ()))):
        table.children.append(
            Node(
                key=(":1.5", f"/h{c}"),
                role="table-column-header",
                name=title,
                states=SHOWN,
                actions=clicks,
            )
        )
    for c, text in enumerate(("a.txt", "1 kB")):
        table.children.append(
            Node(key=(":1.5", f"/f{c}"), role="table-cell", name=text, states=SHOWN, cell=(0, c))
        )
    out = Renderer(AREA).render(window_with(table))
    lines = [ln.strip() for ln in out.text.splitlines()]
    assert lines[2].startswith('colheader "Name" @'), lines
    assert out.ids[lines[2].rsplit("@", 1)[1]].key == (":1.5", "/h0")
    assert lines[3] == 'colheader "Size"', lines  # it does nothing: named, no ID
    assert not any(ln.startswith("columns:") for ln in lines)  # said once, by the lines
    assert lines[4].startswith("row 1: a.txt | 1 kB @")


def test_a_long_table_stops_at_its_budget_and_names_the_rest() -> None:
    table = sheet({(r, c): "x" * 50 for r in range(33) for c in range(16)})
    out = Renderer(AREA).render(window_with(table))
    tid = next(eid for eid, n in out.ids.items() if n.key == table.key)
    assert len(out.text) < 7000
    assert f'more rows: read them with read_screen_ax elementID "{tid}:A' in out.text
