"""Containers too big to list, read by what they show: never GetChildren on them.

A node that manages its descendants (a spreadsheet, a tree view, a document) or that reports
an absurd number of children is never asked ``GetChildren``: LibreOffice Calc's sheet reports
2,147,483,647 children, and listing them sends soffice to 100% CPU, allocating ~35 MB/s until
it is killed (atk-bridge's GetChildren creates every child it counts). Instead its live child
count is asked (one call), then:

* a table (spreadsheet, tree view) is read through its Table interface: all of it when it is
  small, else the range of rows and columns on screen (:mod:`.table`);
* any other such container (a Writer document's paragraphs, a list box) is read child by
  child (``GetChildAtIndex``) when it has at most MAX_LISTED children, else the children
  between the first and the last one on screen.

What was read is kept as a :class:`Span` on the tree (``AppTree.virtual``): the table's size,
the range read and each cell's row and column, for rendering and for addressing cells.
"""

from __future__ import annotations

from collections.abc import Sequence

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import AtspiTimeout
from deskpilot.desktop.atspi.consts import NULL_PATH, S_MANAGES_DESCENDANTS
from deskpilot.desktop.atspi.model import AppTree, RawNode, Span
from deskpilot.desktop.atspi.partial import guard, note_failure, settled
from deskpilot.desktop.atspi.table import TableReader

#: A node reporting more children than this is never listed, managed or not.
ABSURD_CHILDREN = 5000
#: A managed container (not a table) with at most this many children is read child by child.
MAX_LISTED = 400


def is_virtual(node: RawNode) -> bool:
    """Whether a node's children must never be listed (read by what shows instead)."""
    return bool(node.states & S_MANAGES_DESCENDANTS) or node.child_count > ABSURD_CHILDREN


class VirtualReader:
    """Reads the children of virtual containers by what they show."""

    def __init__(self, bus: AtspiBus, tables: TableReader) -> None:
        self.bus = bus
        self.tables = tables

    async def virtual_children(self, tree: AppTree, path: str) -> list[str] | None:
        """The children to read of a virtual container (None when it did not answer)."""
        node = tree.nodes[path]
        bus = tree.bus
        count = await guard(
            tree, "ChildCount", self.bus.get_property(bus, path, "Accessible", "ChildCount")
        )
        if count is None:
            return None
        node.child_count = int(count)
        span: Span | None
        kids: list[str]
        if node.child_count <= 0:
            span, kids = Span(0), []
        elif node.has("Table"):
            span, kids = await self.tables.read_table(tree, path)
        else:
            span, kids = await self._list(tree, path, node.child_count)
        if span is None:
            return None
        self._forget_others(tree, path, kids)
        tree.virtual[path] = span
        return kids

    @staticmethod
    def _forget_others(tree: AppTree, path: str, kids: Sequence[str]) -> None:
        """Drop the nodes of an earlier range that this read no longer holds."""
        keep = set(kids)
        for old in tree.nodes[path].children or []:
            if old not in keep and old in tree.nodes and tree.nodes[old].parent == path:
                for gone in tree.subtree(old):
                    del tree.nodes[gone]

    # -- lists -----------------------------------------------------------------------------

    async def _list(self, tree: AppTree, path: str, count: int) -> tuple[Span | None, list[str]]:
        if count <= MAX_LISTED:
            first, last = 0, count - 1
        else:
            found = await self._on_screen_indexes(tree, path)
            first, last = found if found is not None else (0, MAX_LISTED - 1)
            last = min(last, first + MAX_LISTED - 1, count - 1)
        kids = await self._children_at(tree, path, range(first, last + 1))
        if kids is None:
            return None, []
        return Span(count, first_row=first, last_row=last), kids

    async def _children_at(self, tree: AppTree, path: str, indexes: range) -> list[str] | None:
        calls = [
            self.bus.request(tree.bus, path, "Accessible", "GetChildAtIndex", "i", [i])
            for i in indexes
        ]
        await settled(calls)
        out: list[str] = []
        for call in calls:
            if (exc := call.exception()) is not None:
                note_failure(tree, "GetChildAtIndex", exc)
                if isinstance(exc, AtspiTimeout):
                    return None
                continue
            kbus, kpath = call.result()[0]
            if kbus == tree.bus and kpath != NULL_PATH:
                out.append(str(kpath))
        return out

    async def _on_screen_indexes(self, tree: AppTree, path: str) -> tuple[int, int] | None:
        """Index in parent of the first and last children on screen."""
        corners = await self.tables.corners(tree, path)
        if corners is None:
            return None
        top, bottom = corners
        indexes: list[int | None] = []
        for child in (top, bottom):
            if child is None:
                indexes.append(None)
                continue
            got = await guard(
                tree,
                "GetIndexInParent",
                self.bus.call(tree.bus, child, "Accessible", "GetIndexInParent"),
            )
            indexes.append(int(got[0]) if got is not None and int(got[0]) >= 0 else None)
        first, last = indexes
        if first is None:
            return None
        return first, last if last is not None and last >= first else first + MAX_LISTED - 1
