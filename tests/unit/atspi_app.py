"""A small in-memory app that answers the AT-SPI calls the tree reader makes, and counts them.

For unit tests of the reader's bookkeeping (the desktop tests run it against real apps): a
dict of objects with roles, names, states and children; ``cached`` is what Cache.GetItems
returns. A table object answers the Table calls from its ``grid`` (rows × columns of cell
paths, made on demand) and says how many children it has without being able to list them.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dbus_fast import Message, MessageType, Variant

from deskpilot.desktop.atspi.consts import ROLE_NAMES, ROOT_PATH, STATE_BITS

APP = ":1.7"
Reply = Callable[[Message | None, Exception | None], None]
SHOWN = frozenset({"visible", "showing", "enabled"})


@dataclass
class Obj:
    role: str
    name: str
    states: set[str]
    children: list[str] = field(default_factory=list)
    parent: str = ""
    ifaces: tuple[str, ...] = ("Accessible", "Component")
    extents: tuple[int, int, int, int] = (10, 10, 50, 20)
    text: str | None = None
    #: a table: (rows, columns, visible rows, visible columns, first row on screen)
    grid: tuple[int, int, int, int, int] | None = None
    count: int | None = None  # ChildCount when it is not len(children)


def bits(states: set[str]) -> list[int]:
    value = sum(STATE_BITS[s] for s in states)
    return [value & 0xFFFFFFFF, value >> 32]


class InMemoryApp:
    """Answers the calls the reader makes, from a dict of objects; counts them."""

    def __init__(self, objects: dict[str, Obj], cached: set[str]) -> None:
        self.objects = objects
        self.cached = cached  # what Cache.GetItems returns
        self.asked: Counter[tuple[str, str]] = Counter()  # (member, path)

    def _call(self, msg: Message, callback: Reply) -> None:
        self.asked[(msg.member or "", msg.path or "")] += 1
        body = self._answer(msg)
        reply = Message(message_type=MessageType.METHOD_RETURN, reply_serial=1, body=body)
        asyncio.get_running_loop().call_soon(callback, reply, None)

    def count_of(self, obj: Obj) -> int:
        return obj.count if obj.count is not None else len(obj.children)

    def cell(self, table: str, row: int, col: int) -> str:
        """The path of a table's cell (made on first use, as toolkits make them)."""
        path = f"{table}/cell/{row}/{col}"
        if path not in self.objects:
            grid = self.objects[table].grid
            assert grid is not None
            _rows, _cols, vrows, vcols, top = grid
            shown = top <= row < top + vrows and col < vcols
            tx, ty = self.objects[table].extents[:2]
            self.objects[path] = Obj(
                "table-cell",
                f"{chr(65 + col)}{row + 1}",
                set(SHOWN if shown else {"visible", "enabled"}) | {"editable"},
                parent=table,
                ifaces=("Accessible", "Component", "Text"),
                extents=(tx + 40 * col, ty + 20 * (row - top), 40, 20) if shown else (0, 0, 0, 0),
                text=f"r{row}c{col}" if row < 5 else "",
            )
        return path

    def _answer(self, msg: Message) -> list[Any]:
        member, path = msg.member, msg.path or ""
        args = list(msg.body)
        if member == "GetItems":
            return [[self._item(p) for p in sorted(self.cached)]]
        obj = self.objects[path]
        if member == "Get":
            iface, prop = args
            if iface.endswith("Application"):
                return [Variant("s", "GTK")]
            if prop == "ChildCount":
                return [Variant("i", self.count_of(obj))]
            if prop == "Name":
                return [Variant("s", obj.name)]
            if prop in ("NRows", "NColumns"):
                assert obj.grid is not None
                return [Variant("i", obj.grid[0] if prop == "NRows" else obj.grid[1])]
            raise AssertionError(f"unexpected property {prop} on {path}")
        if member == "GetChildren":
            assert obj.grid is None, "GetChildren sent to a table"
            return [[(APP, kid) for kid in obj.children]]
        if member == "GetChildAtIndex":
            return [(APP, obj.children[args[0]])]
        if member == "GetState":
            return [bits(obj.states)]
        if member == "GetRole":
            return [ROLE_NAMES.index(obj.role)]
        if member == "GetInterfaces":
            return [[f"org.a11y.atspi.{i}" for i in obj.ifaces]]
        if member == "GetAll":
            return [
                {
                    "Name": Variant("s", obj.name),
                    "Description": Variant("s", ""),
                    "ChildCount": Variant("i", self.count_of(obj)),
                }
            ]
        if member == "GetExtents":
            return [obj.extents]
        if member == "GetText":
            return [obj.text or ""]
        if member == "GetRelationSet":
            return [[]]
        return self._table_answer(path, obj, member or "", args)

    def _table_answer(self, path: str, obj: Obj, member: str, args: list[Any]) -> list[Any]:
        if member == "GetAccessibleAtPoint":
            assert obj.grid is not None
            x, y = args[0] - obj.extents[0], args[1] - obj.extents[1]
            row, col = obj.grid[4] + y // 20, x // 40
            return [(APP, self.cell(path, row, col))]
        if member == "GetIndexInParent":
            table, _c, row, col = path.rsplit("/", 3)
            grid = self.objects[table].grid
            assert grid is not None
            return [int(row) * grid[1] + int(col)]
        if member in ("GetRowAtIndex", "GetColumnAtIndex"):
            assert obj.grid is not None
            row, col = divmod(args[0], obj.grid[1])
            return [row if member == "GetRowAtIndex" else col]
        if member == "GetAccessibleAt":
            return [(APP, self.cell(path, *args))]
        if member == "GetColumnHeader":
            return [(APP, "/org/a11y/atspi/null")]
        raise AssertionError(f"unexpected call {member} on {path}")

    def _item(self, path: str) -> tuple[Any, ...]:
        obj = self.objects[path]
        parent = self.objects.get(obj.parent)
        index = parent.children.index(path) if parent is not None else -1
        managed = "manages-descendants" in obj.states
        return (
            (APP, path),
            (APP, ROOT_PATH),
            (APP, obj.parent) if obj.parent else ("", "/org/a11y/atspi/null"),
            index,
            -1 if managed else self.count_of(obj),
            [f"org.a11y.atspi.{i}" for i in obj.ifaces],
            obj.name,
            ROLE_NAMES.index(obj.role),
            "",
            bits(obj.states),
        )
