"""A sheet shown in frozen or split panes, read as one table.

LibreOffice Calc shows a sheet with frozen rows or columns (View ▸ Freeze Cells) or a split
view (Window ▸ Split) in up to four panes, each its own document holding its own table of the
same sheet, read by the part that pane shows. Read pane by pane, the header row came apart
from its columns (or went missing) and a split view's overlap was read twice. Here the panes'
tables under one parent are merged into one: every cell once (by its address), rows in sheet
order, the table's ID the pane that has the cursor (any cell can be named through it).
"""

from __future__ import annotations

from dataclasses import replace

from deskpilot.desktop.base import Node, Rect

#: Roles of a pane's document (its one child is the sheet's table).
PANE_ROLES = frozenset({"document-spreadsheet"})


def merge_panes(root: Node) -> None:
    """Merge, under every parent, the panes that show the same sheet (in place)."""
    for node in root.walk():
        groups: dict[str, list[tuple[Node, Node]]] = {}
        for kid in node.children:
            table = _sheet_of(kid)
            if table is not None:
                groups.setdefault(table.name, []).append((kid, table))
        for panes in groups.values():
            if len(panes) > 1:
                _merge(node, panes)


def _sheet_of(pane: Node) -> Node | None:
    if pane.role not in PANE_ROLES:
        return None
    tables = [c for c in pane.children if c.grid is not None and c.grid.addressed]
    return tables[0] if len(tables) == 1 else None


def _merge(parent: Node, panes: list[tuple[Node, Node]]) -> None:
    def rank(pair: tuple[Node, Node]) -> tuple[bool, int]:
        _pane, table = pair
        cursor = any("focused" in c.states for c in table.children) or "focused" in table.states
        b = table.bounds
        return (cursor, 0 if b is None else b.width * b.height)

    main_pane, main = max(panes, key=rank)
    cells: dict[tuple[int, int], Node] = {}
    for _pane, table in panes:
        for cell in table.children:
            if cell.cell is None:
                continue
            known = cells.get(cell.cell)
            if known is None or ("focused" in cell.states and "focused" not in known.states):
                cells[cell.cell] = cell
    grids = [t.grid for _p, t in panes if t.grid is not None]
    assert main.grid is not None
    main.grid = replace(
        main.grid,
        first_row=min(g.first_row for g in grids),
        last_row=max(g.last_row for g in grids),
        first_column=min(g.first_column for g in grids),
        last_column=max(g.last_column for g in grids),
        panes=len(panes),
    )
    ordered = sorted(cells.values(), key=lambda c: c.cell or (0, 0))
    main.children = [*ordered, *(c for c in main.children if c.cell is None)]
    main.bounds = _union([t.bounds for _p, t in panes])
    main_pane.bounds = _union([p.bounds for p, _t in panes])
    others = {id(p) for p, _t in panes if p is not main_pane}
    parent.children = [c for c in parent.children if id(c) not in others]


def _union(rects: list[Rect | None]) -> Rect | None:
    known = [r for r in rects if r is not None and not r.empty]
    if not known:
        return None
    x0, y0 = min(r.x for r in known), min(r.y for r in known)
    x1 = max(r.x + r.width for r in known)
    y1 = max(r.y + r.height for r in known)
    return Rect(x0, y0, x1 - x0, y1 - y0)
