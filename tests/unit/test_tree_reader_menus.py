"""The tree reader's closed menus: their items are listed unread, and re-read when it opens.

A unit test of the reader's bookkeeping over a small in-memory app that answers AT-SPI calls
(the desktop tests open real LibreOffice and GTK menus; LibreOffice announces both the menu and
its items, so only this test shows the path where an app announces the menu alone).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from dbus_fast import Message, MessageType, Variant

from deskpilot.desktop.atspi_bus import AtspiBus
from deskpilot.desktop.atspi_consts import ROLE_NAMES, ROOT_PATH, STATE_BITS
from deskpilot.desktop.atspi_model import Dirty
from deskpilot.desktop.atspi_tree import TreeReader

pytestmark = pytest.mark.asyncio

APP = ":1.7"
Reply = Callable[[Message | None, Exception | None], None]


@dataclass
class Obj:
    role: str
    name: str
    states: set[str]
    children: list[str] = field(default_factory=list)
    parent: str = ""


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

    def _answer(self, msg: Message) -> list[Any]:
        member, path = msg.member, msg.path or ""
        if member == "GetItems":
            return [[self._item(p) for p in sorted(self.cached)]]
        if member == "Get":  # the toolkit's name
            return [Variant("s", "GTK")]
        obj = self.objects[path]
        if member == "GetChildren":
            return [[(APP, kid) for kid in obj.children]]
        if member == "GetState":
            return [bits(obj.states)]
        if member == "GetRole":
            return [ROLE_NAMES.index(obj.role)]
        if member == "GetInterfaces":
            return [["org.a11y.atspi.Accessible", "org.a11y.atspi.Component"]]
        if member == "GetAll":
            return [
                {
                    "Name": Variant("s", obj.name),
                    "Description": Variant("s", ""),
                    "ChildCount": Variant("i", len(obj.children)),
                }
            ]
        if member == "GetExtents":
            return [(10, 10, 50, 20)]
        raise AssertionError(f"unexpected call {member} on {path}")

    def _item(self, path: str) -> tuple[Any, ...]:
        obj = self.objects[path]
        parent = self.objects.get(obj.parent)
        index = parent.children.index(path) if parent is not None else -1
        return (
            (APP, path),
            (APP, ROOT_PATH),
            (APP, obj.parent) if obj.parent else ("", "/org/a11y/atspi/null"),
            index,
            len(obj.children),
            ["org.a11y.atspi.Accessible", "org.a11y.atspi.Component"],
            obj.name,
            ROLE_NAMES.index(obj.role),
            "",
            bits(obj.states),
        )


def an_app_with_a_closed_menu() -> InMemoryApp:
    shown = {"visible", "showing", "enabled"}
    items = [f"/item{i}" for i in range(3)]
    objects = {
        ROOT_PATH: Obj("application", "app", set(), ["/frame"]),
        "/frame": Obj("frame", "Editor", shown | {"active"}, ["/menubar"], ROOT_PATH),
        "/menubar": Obj("menu-bar", "", set(shown), ["/menu"], "/frame"),
        "/menu": Obj("menu", "File", set(shown), items, "/menubar"),
    }
    for i, path in enumerate(items):
        objects[path] = Obj("menu-item", f"Item {i}", {"visible", "enabled"}, [], "/menu")
    # the menu's items are not in the app's cache: the reader asks for them live
    return InMemoryApp(objects, cached={ROOT_PATH, "/frame", "/menubar", "/menu"})


async def test_a_closed_menu_s_items_are_listed_without_reading_them() -> None:
    app = an_app_with_a_closed_menu()
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, lazy_hidden=True)
    assert tree.nodes["/menu"].closed and not tree.partial
    assert tree.nodes["/menu"].children == ["/item0", "/item1", "/item2"]
    assert all(tree.nodes[f"/item{i}"].stub for i in range(3))
    assert not any(path.startswith("/item") for _member, path in app.asked)


async def test_a_menu_that_opens_gets_its_items_read() -> None:
    app = an_app_with_a_closed_menu()
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, lazy_hidden=True)
    app.objects["/menu"].states |= {"selected", "expanded"}
    for i in range(3):
        app.objects[f"/item{i}"].states.add("showing")
    # the app announces the menu's state only (LibreOffice also announces each item)
    await reader.refresh(tree, Dirty(props={"/menu"}))
    assert not tree.nodes["/menu"].closed
    assert [tree.nodes[f"/item{i}"].name for i in range(3)] == ["Item 0", "Item 1", "Item 2"]
    assert all(tree.shown(f"/item{i}") and not tree.nodes[f"/item{i}"].stub for i in range(3))
