"""Tables read through the Table interface: the range on screen, cell by cell, cheaply.

A spreadsheet (Calc: 1,048,576 × 16,384) or a tree view (GTK) is read by what it shows: its
size (``NRows``/``NColumns``); the cells at the viewport's top-left and bottom-right corners
(``Component.GetAccessibleAtPoint``) and their row and column (``Table.GetRowAtIndex`` and
``GetColumnAtIndex`` of their index in the table); then each cell of that range
(``Table.GetAccessibleAt``), at most MAX_CELLS. A small table is read whole.

Cells of a column are alike, so the first one of each column is read in full (role,
interfaces, properties) and the others only for what differs: their text, their name (unless
the table names its cells by address, as spreadsheets do: "B7") and their state — which, in a
large spreadsheet, is the table's own word: its cursor cell is the active descendant it
announced (``ActiveDescendantChanged``) and its selected cells are the Selection's. Their
extents come from the rows' and columns' geometry (the first row's and first column's cells).
Calc's visible 33 × 16 cells cost about two calls a cell this way, against seven for a full
read of each. (Calc makes a new object for a cell each time it is asked, except its cursor
cell: cell paths are not reused across reads, and selected cells are matched by address.)
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import DBUS_PROPS, AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi.consts import NULL_PATH, S_FOCUSED, S_SELECTED, state_bits
from deskpilot.desktop.atspi.fetch import ACCESSIBLE, NodeFetcher
from deskpilot.desktop.atspi.model import AppTree, RawNode, Span
from deskpilot.desktop.atspi.partial import guard, note_failure, settled
from deskpilot.desktop.cell_refs import Place, address, parse_cell

#: A table with at most this many cells is read whole; a larger one by its visible range.
SMALL_TABLE = 240
#: Cells read per table at most (Calc shows ~530 at 1280×800), and columns at most.
MAX_CELLS = 600
MAX_COLUMNS = 40
#: Where to look for the first and last cells on screen, in pixels in from the viewport's
#: corners (tree views have a row of column headers at the top).
_PROBES = (2, 12, 28, 44)


class TableReader:
    """Reads the visible range of tables, and finds what lies at a container's corners."""

    def __init__(self, bus: AtspiBus, fetcher: NodeFetcher) -> None:
        self.bus = bus
        self.fetcher = fetcher

    async def corners(self, tree: AppTree, path: str) -> tuple[str | None, str | None] | None:
        """The children at the top-left and bottom-right of a container's viewport."""
        ext = await guard(
            tree, "GetExtents", self.bus.call(tree.bus, path, "Component", "GetExtents", "u", [0])
        )
        if ext is None:
            return None
        x, y, w, h = (int(v) for v in ext[0])
        if w <= 0 or h <= 0:
            return None
        tops = [(x + min(d, w - 1), y + min(d, h - 1)) for d in _PROBES]
        bottoms = [(x + w - 1 - min(d, w - 1), y + h - 1 - min(d, h - 1)) for d in _PROBES]
        top, bottom = await asyncio.gather(
            self._first_at(tree, path, tops), self._first_at(tree, path, bottoms)
        )
        return top, bottom

    async def _first_at(
        self, tree: AppTree, path: str, points: list[tuple[int, int]]
    ) -> str | None:
        """The first child found at one of these screen points, in order."""
        calls = [
            self.bus.request(
                tree.bus, path, "Component", "GetAccessibleAtPoint", "iiu", [px, py, 0]
            )
            for px, py in points
        ]
        await settled(calls)
        for call in calls:
            if (exc := call.exception()) is not None:
                if not isinstance(exc, AtspiCallError | AtspiTimeout):
                    raise exc
                continue
            cbus, cpath = call.result()[0]
            if cbus == tree.bus and cpath not in (NULL_PATH, path):
                return str(cpath)
        return None

    # -- the range -------------------------------------------------------------------------

    async def table_size(self, tree: AppTree, path: str) -> tuple[int, int] | None:
        """(rows, columns) of a table."""
        bus = tree.bus
        size = await guard(
            tree,
            "table size",
            asyncio.gather(
                self.bus.get_property(bus, path, "Table", "NRows"),
                self.bus.get_property(bus, path, "Table", "NColumns"),
            ),
        )
        return None if size is None else (int(size[0]), int(size[1]))

    async def read_table(self, tree: AppTree, path: str) -> tuple[Span | None, list[str]]:
        """The table's span and its cells' paths (row by row); (None, []) if it failed."""
        size = await self.table_size(tree, path)
        if size is None:
            return None, []
        rows, cols = size
        span = Span(rows, cols)
        if rows <= 0 or cols <= 0:
            return span, []
        if rows * cols <= SMALL_TABLE:
            span.first_row, span.last_row = 0, rows - 1
            span.first_column, span.last_column = 0, cols - 1
        else:
            await self._visible_range(tree, path, span)
        await self.read_cells(tree, path, span)
        heads = [h for h in span.header_paths.values() if h not in span.cells]
        return span, [*dict.fromkeys(heads), *span.cells]

    async def _visible_range(self, tree: AppTree, path: str, span: Span) -> None:
        """The rows and columns on screen (within MAX_CELLS and MAX_COLUMNS)."""
        corners = await self.corners(tree, path)
        top, bottom = corners if corners is not None else (None, None)
        first, last = await asyncio.gather(
            self._cell_place(tree, path, top), self._cell_place(tree, path, bottom)
        )
        r0, c0 = first if first is not None else (0, 0)
        end = (span.rows - 1, span.columns - 1)
        r1, c1 = last if last is not None and last >= (r0, c0) else end
        c1 = min(max(c1, c0), span.columns - 1, c0 + MAX_COLUMNS - 1)
        width = c1 - c0 + 1
        r1 = min(max(r1, r0), span.rows - 1, r0 + max(1, MAX_CELLS // width) - 1)
        span.first_row, span.last_row, span.first_column, span.last_column = r0, r1, c0, c1

    async def _cell_place(self, tree: AppTree, table: str, cell: str | None) -> Place | None:
        """A cell's (row, column) from its index in the table."""
        if cell is None:
            return None
        got = await guard(
            tree,
            "GetIndexInParent",
            self.bus.call(tree.bus, cell, "Accessible", "GetIndexInParent"),
        )
        if got is None or int(got[0]) < 0:
            return None
        index = int(got[0])
        place = await guard(
            tree,
            "cell place",
            asyncio.gather(
                self.bus.call(tree.bus, table, "Table", "GetRowAtIndex", "i", [index]),
                self.bus.call(tree.bus, table, "Table", "GetColumnAtIndex", "i", [index]),
            ),
        )
        if place is None:
            return None
        row, col = int(place[0][0]), int(place[1][0])
        return (row, col) if row >= 0 and col >= 0 else None

    # -- the cells -------------------------------------------------------------------------

    async def read_cells(self, tree: AppTree, path: str, span: Span) -> None:
        """The cells of the span's range: paths, one full read per column, then states and
        texts; the columns' headers; extents from the rows' and columns' geometry."""
        places = [
            (r, c)
            for r in range(span.first_row, span.last_row + 1)
            for c in range(span.first_column, span.last_column + 1)
        ]
        await self._cell_paths(tree, path, span, places)
        columns = range(span.first_column, span.last_column + 1)
        templates = await self._templates(tree, path, span)
        await asyncio.gather(
            self._cell_details(tree, path, span, templates),
            self._headers(tree, path, span, columns),
        )
        await self._geometry(tree, span)

    async def _cell_paths(self, tree: AppTree, table: str, span: Span, places: list[Place]) -> None:
        """Each cell's path, asked every read: Calc makes a new object for a cell each time it
        is asked (only its cursor cell stays), so an earlier read's paths are not reused."""
        calls = [
            self.bus.request(tree.bus, table, "Table", "GetAccessibleAt", "ii", [r, c])
            for r, c in places
        ]
        await settled(calls)
        for place, call in zip(places, calls, strict=True):
            if (exc := call.exception()) is not None:
                note_failure(tree, "GetAccessibleAt", exc)
                continue
            cbus, cpath = call.result()[0]
            if cbus == tree.bus and cpath != NULL_PATH and str(cpath) not in span.cells:
                span.cells[str(cpath)] = place

    async def _templates(self, tree: AppTree, table: str, span: Span) -> dict[int, RawNode]:
        """One fully read cell per column (a known one, else the column's first new one)."""
        templates: dict[int, RawNode] = {}
        unread: dict[int, str] = {}
        for cell, (_r, c) in span.cells.items():
            node = tree.nodes.get(cell)
            if node is not None and not node.stub and c not in templates:
                templates[c] = node
            elif node is None and c not in unread:
                unread[c] = cell
        wanted: list[tuple[str, str | None, list[Any] | None]] = [
            (cell, table, None) for c, cell in unread.items() if c not in templates
        ]
        for node in await self.fetcher.fetch_nodes(tree, wanted):
            if node is None:
                continue
            node.index = -1
            tree.nodes[node.path] = node
            templates[span.cells[node.path][1]] = node
        if templates:
            first = next(iter(templates.values()))
            place = span.cells.get(first.path)
            span.addressed = place is not None and first.name == address(*place)
        return templates

    async def _marked(
        self, tree: AppTree, table: str, span: Span
    ) -> tuple[Place, set[Place]] | None:
        """For a large spreadsheet: its cursor cell (the active descendant it announced) and
        its selected cells (Selection), by address — instead of one GetState a cell. None:
        ask each cell."""
        if len(span.cells) <= SMALL_TABLE or not span.addressed:
            return None
        if not tree.nodes[table].has("Selection"):
            return None
        cursor = self.bus.active_descendant.get((tree.bus, table))
        if cursor is None:
            return None  # not announced yet: the cells' states tell (and the next read knows)
        count = await guard(
            tree,
            "NSelectedChildren",
            self.bus.get_property(tree.bus, table, "Selection", "NSelectedChildren"),
        )
        if count is None or int(count) > MAX_CELLS:
            return None
        calls = [
            self.bus.request(tree.bus, table, "Selection", "GetSelectedChild", "i", [i])
            for i in range(int(count))
        ]
        await settled(calls)
        paths = [cursor] + [str(c.result()[0][1]) for c in calls if c.exception() is None]
        names = [
            self.bus.request(tree.bus, p, DBUS_PROPS, "Get", "ss", [ACCESSIBLE, "Name"])
            for p in paths
        ]
        await settled(names)
        places = [
            parse_cell(str(n.result()[0].value)) if n.exception() is None else None for n in names
        ]
        if places[0] is None:
            return None  # the cursor cell is gone: ask each cell
        return places[0], {pl for pl in places[1:] if pl is not None}

    async def _cell_details(
        self, tree: AppTree, table: str, span: Span, templates: dict[int, RawNode]
    ) -> None:
        """State and text of every cell (and name, where cells are not named by address)."""
        bus, req = tree.bus, self.bus.request
        marked = await self._marked(tree, table, span)
        plans: list[tuple[str, RawNode, dict[str, asyncio.Future[list[Any]]]]] = []
        for cell, place in span.cells.items():
            template = templates.get(place[1])
            if template is None:
                continue
            calls = {} if marked else {"state": req(bus, cell, "Accessible", "GetState")}
            if template.has("Text"):
                calls["text"] = req(bus, cell, "Text", "GetText", "ii", [0, -1])
            if not span.addressed:
                calls["name"] = req(bus, cell, DBUS_PROPS, "Get", "ss", [ACCESSIBLE, "Name"])
            plans.append((cell, template, calls))
        await settled(c for _cell, _t, calls in plans for c in calls.values())
        for cell, template, calls in plans:
            errors = [e for c in calls.values() if (e := c.exception()) is not None]
            if errors:
                note_failure(tree, "cell", errors[0])
                span.cells.pop(cell, None)
                continue
            node = tree.nodes.get(cell)
            if node is None or node is template:
                node = node or replace(template, path=cell, extents=None, label="")
                node.children = [] if template.child_count <= 0 else None
                tree.nodes[cell] = node
            node.parent, node.stub = table, False
            if marked is None:
                node.states = state_bits(calls["state"].result()[0])
                if node.states & S_FOCUSED:
                    self.bus.active_descendant[(bus, table)] = cell
            else:
                cursor, chosen = marked
                place = span.cells[cell]
                node.states = template.states & ~(S_FOCUSED | S_SELECTED)
                node.states |= (S_FOCUSED if place == cursor else 0) | (
                    S_SELECTED if place in chosen else 0
                )
            if span.addressed:
                node.name = address(*span.cells[cell])
            elif "name" in calls:
                node.name = str(calls["name"].result()[0].value)
            if "text" in calls:
                node.text = str(calls["text"].result()[0]).replace("\ufffc", "")
            node.text_ok = True
            node.label_ok = True

    async def _headers(self, tree: AppTree, table: str, span: Span, columns: range) -> None:
        """The names of the columns' headers (tree views; spreadsheets have none), and their
        nodes: read as the table's children, a header that sorts its column on a click gets
        an ID."""
        bus, req = tree.bus, self.bus.request
        heads = [req(bus, table, "Table", "GetColumnHeader", "i", [c]) for c in columns]
        await settled(heads)
        named: list[tuple[int, str, asyncio.Future[list[Any]]]] = []
        for col, call in zip(columns, heads, strict=True):
            if call.exception() is not None:
                continue
            hbus, hpath = call.result()[0]
            if hbus == bus and hpath != NULL_PATH:
                asked = req(bus, str(hpath), DBUS_PROPS, "Get", "ss", [ACCESSIBLE, "Name"])
                named.append((col, str(hpath), asked))
        await settled(f for _c, _p, f in named)
        for col, head, call in named:
            if call.exception() is None and (title := str(call.result()[0].value)):
                span.headers[col] = title
                span.header_paths[col] = head

    async def _geometry(self, tree: AppTree, span: Span) -> None:
        """Cells' extents from the first row's (columns) and first column's (rows) cells."""
        by_place = {pl: p for p, pl in span.cells.items()}
        top = [
            by_place.get((span.first_row, c))
            for c in range(span.first_column, span.last_column + 1)
        ]
        left = [
            by_place.get((r, span.first_column)) for r in range(span.first_row, span.last_row + 1)
        ]
        probes = {p for p in [*top, *left] if p is not None}
        calls = {
            p: self.bus.request(tree.bus, p, "Component", "GetExtents", "u", [0]) for p in probes
        }
        await settled(calls.values())
        boxes: dict[str, tuple[int, int, int, int]] = {}
        for p, call in calls.items():
            if call.exception() is None:
                x, y, w, h = (int(v) for v in call.result()[0])
                boxes[p] = (x, y, w, h)
        xs = {span.cells[p][1]: (b[0], b[2]) for p, b in boxes.items() if p in top}
        ys = {span.cells[p][0]: (b[1], b[3]) for p, b in boxes.items() if p in left}
        for cell, (r, c) in span.cells.items():
            node = tree.nodes.get(cell)
            if node is None:
                continue
            if r in ys and c in xs:
                node.extents = (xs[c][0], ys[r][0], xs[c][1], ys[r][1])
            else:
                node.extents = None  # asked for with the other shown nodes
