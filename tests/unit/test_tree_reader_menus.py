"""The tree reader's closed menus: their items are listed unread, and re-read when it opens.

A unit test of the reader's bookkeeping over a small in-memory app that answers AT-SPI calls
(the desktop tests open real LibreOffice and GTK menus; LibreOffice announces both the menu and
its items, so only this test shows the path where an app announces the menu alone).
"""

from __future__ import annotations

import pytest

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.consts import ROOT_PATH, state_names
from deskpilot.desktop.atspi.model import Dirty
from deskpilot.desktop.atspi.nodes import rendered
from deskpilot.desktop.atspi.tree import TreeReader
from tests.unit.atspi_app import APP, SHOWN, InMemoryApp, Obj

pytestmark = pytest.mark.asyncio


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
    # only the first item's state is asked (is the menu showing its items?), nothing else
    asked = {(member, path) for member, path in app.asked if path.startswith("/item")}
    assert asked == {("GetState", "/item0")}


async def test_a_menu_in_a_menu_bar_that_shows_its_items_is_read() -> None:
    """A web page's menu inside its menu bar has no expanded state of its own: its items
    showing is what says it is open."""
    app = an_app_with_a_closed_menu()
    for i in range(3):
        app.objects[f"/item{i}"].states.add("showing")
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, lazy_hidden=True)
    assert not tree.nodes["/menu"].closed
    assert [tree.nodes[f"/item{i}"].name for i in range(3)] == ["Item 0", "Item 1", "Item 2"]


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


async def test_a_sensitivity_change_re_reads_the_states_of_what_it_holds() -> None:
    """GTK 3 announces a tool item made sensitive, not its button (which changes with it)."""
    shown = {"visible", "showing"}
    app = InMemoryApp(
        {
            ROOT_PATH: Obj("application", "app", set(), ["/frame"]),
            "/frame": Obj("frame", "Viewer", shown | {"active", "sensitive"}, ["/item"], ROOT_PATH),
            "/item": Obj("panel", "", set(shown), ["/up"], "/frame"),
            "/up": Obj("push-button", "Up", set(shown), [], "/item"),
        },
        cached={ROOT_PATH, "/frame", "/item", "/up"},
    )
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, lazy_hidden=True)
    assert "sensitive" not in state_names(tree.nodes["/up"].states)
    for path in ("/item", "/up"):
        app.objects[path].states.add("sensitive")
    await reader.refresh(tree, Dirty(props={"/item"}, sensitivity={"/item"}))
    assert "sensitive" in state_names(tree.nodes["/up"].states)


async def test_a_live_read_of_a_window_leaves_its_closed_menus_unread() -> None:
    """An app whose cache is not asked (LibreOffice) is read live from the root and the frame
    alone: whether it sets SHOWING below its windows is told by what lies under the frame, not
    decided before anything does (it was taken as "no", so every VISIBLE node counted as shown
    and a cold read of Writer read its ~800 closed menu items in full)."""
    app = an_app_with_a_closed_menu()
    app.cached = set()
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/frame", lazy_hidden=True)
    assert tree.uses_showing and not tree.partial
    assert tree.nodes["/menu"].closed
    assert all(tree.nodes[f"/item{i}"].stub for i in range(3))
    asked = {(member, path) for member, path in app.asked if path.startswith("/item")}
    assert asked == {("GetState", "/item0")}


async def test_a_live_read_reads_a_view_s_panes_that_do_not_say_showing() -> None:
    """LibreOffice leaves SHOWING off the documents of a sheet's frozen header row and column
    (their tables show): deciding that the app uses SHOWING must not drop them, while its
    closed menus stay unread and other hidden nodes stay stubs."""
    app = an_app_with_a_closed_menu()
    app.cached = set()
    visible = {"visible", "enabled"}
    app.objects["/frame"].children.append("/view")
    app.objects.update(
        {
            "/view": Obj("scroll-pane", "", set(SHOWN), ["/main", "/header", "/bar"], "/frame"),
            "/main": Obj("document-spreadsheet", "", set(SHOWN), ["/cells"], "/view"),
            "/cells": Obj("table-cell", "B61", set(SHOWN), [], "/main"),
            "/header": Obj("document-spreadsheet", "", set(visible), ["/head"], "/view"),
            "/head": Obj("table-cell", "B1", set(SHOWN), [], "/header"),
            "/bar": Obj("scroll-bar", "", set(visible), [], "/view"),
        }
    )
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/frame", lazy_hidden=True)
    assert tree.uses_showing and not tree.partial
    assert tree.nodes["/head"].name == "B1" and not tree.nodes["/header"].stub
    assert "/head" in rendered(tree, "/frame") and "/cells" in rendered(tree, "/frame")
    assert tree.nodes["/bar"].stub and "/bar" not in rendered(tree, "/frame")
    assert tree.nodes["/menu"].closed and all(tree.nodes[f"/item{i}"].stub for i in range(3))


async def test_an_app_that_sets_showing_only_on_frames_reads_what_is_visible() -> None:
    """GTK 4.8 sets SHOWING on its frames only: below them VISIBLE says what shows."""
    visible = {"visible", "enabled"}
    app = InMemoryApp(
        {
            ROOT_PATH: Obj("application", "app", set(), ["/frame"]),
            "/frame": Obj("frame", "Demo", {"visible", "showing", "active"}, ["/box"], ROOT_PATH),
            "/box": Obj("panel", "", set(visible), ["/ok"], "/frame"),
            "/ok": Obj("push-button", "OK", set(visible), [], "/box"),
        },
        cached=set(),
    )
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/frame", lazy_hidden=True)
    assert not tree.uses_showing
    assert tree.shown("/ok") and not tree.nodes["/ok"].stub and tree.nodes["/ok"].name == "OK"
