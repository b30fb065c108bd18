"""A range of a table's cells, read on request: a spreadsheet's cells beyond the screen.

A read shows a virtual table's visible range (:mod:`.table`); ``read_screen_ax`` with
``elementID`` ``<tableID>:A40:F80`` asks for another one. Tables answer ``GetAccessibleAt``
for any cell, on screen or not, so the range is read the same way as the visible one — at most
MAX_CELLS cells — and returned as a table :class:`~deskpilot.desktop.base.Node` whose children
are its cells, for the same renderer.
"""

from __future__ import annotations

from deskpilot.desktop.atspi.consts import state_names
from deskpilot.desktop.atspi.model import AppTree, RawNode, Span
from deskpilot.desktop.atspi.nodes import grid_of
from deskpilot.desktop.atspi.tab_names import plain_name
from deskpilot.desktop.atspi.table import MAX_CELLS, MAX_COLUMNS
from deskpilot.desktop.atspi.tree import TreeReader
from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.cell_refs import Place


def clip(span: Span, first: Place, last: Place) -> None:
    """Set the span's range to first..last, within the table and MAX_CELLS/MAX_COLUMNS."""
    r0, c0 = min(first[0], span.rows - 1), min(first[1], span.columns - 1)
    c1 = min(last[1], span.columns - 1, c0 + MAX_COLUMNS - 1)
    width = c1 - c0 + 1
    r1 = min(last[0], span.rows - 1, r0 + max(1, MAX_CELLS // width) - 1)
    span.first_row, span.last_row, span.first_column, span.last_column = r0, r1, c0, c1


async def read_range(
    reader: TreeReader, bus: str, path: str, first: Place, last: Place
) -> tuple[Node | None, list[str]]:
    """The table at ``path`` with the cells of first..last as children; and what went wrong."""
    tree = AppTree(bus)
    table = await reader.fetcher.fetch_node(tree, path, None)
    if table is None or not table.has("Table"):
        return None, [*tree.problems, "it is not a table"]
    tree.nodes[path] = table
    size = await reader.tables.table_size(tree, path)
    if size is None:
        return None, tree.problems or ["the table did not say its size"]
    span = Span(*size)
    clip(span, first, last)
    await reader.tables.read_cells(tree, path, span)
    node = _node(tree, table, None)
    node.grid = grid_of(span)
    for cell, place in span.cells.items():
        raw = tree.nodes.get(cell)
        if raw is not None:
            child = _node(tree, raw, node.key)
            child.cell = place
            node.children.append(child)
    return node, tree.problems


def _node(tree: AppTree, raw: RawNode, parent: tuple[str, str] | None) -> Node:
    x, y, w, h = raw.extents or (0, 0, 0, 0)
    return Node(
        key=(tree.bus, raw.path),
        role=raw.role_name,
        name=plain_name(raw.role_name, raw.name),
        states=state_names(raw.states),
        bounds=Rect(x, y, w, h) if raw.extents else None,
        text=raw.text,
        interfaces=raw.interfaces,
        parent_key=parent,
    )
