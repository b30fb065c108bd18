"""The tree reader's bounds: virtual containers read by what shows, one window per read.

Over an in-memory app (tests/unit/atspi_app.py) shaped like Calc: a sheet that manages its
descendants and counts 2^31 - 1 children, a small managed list, and a dialog. The desktop tests
read real Calc (tests/desktop/test_calc_reads.py); these pin the call patterns.
"""

from __future__ import annotations

import time

import pytest
from dbus_fast import Message

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.consts import ROOT_PATH
from deskpilot.desktop.atspi.model import Dirty
from deskpilot.desktop.atspi.tree import TreeReader
from deskpilot.desktop.cell_refs import address, column_letters, parse_cell, parse_range
from tests.unit.atspi_app import APP, SHOWN, InMemoryApp, Obj, Reply

HUGE = 2**31 - 1


def a_spreadsheet_app(first_row: int = 0, name: str = "sheets") -> InMemoryApp:
    objects = {
        ROOT_PATH: Obj("application", name, set(), ["/frame", "/dialog"]),
        "/frame": Obj("frame", "Sheet - Calc", set(SHOWN), ["/sheet", "/list"], ROOT_PATH),
        "/sheet": Obj(
            "table",
            "Sheet Sheet1",
            set(SHOWN) | {"manages-descendants"},
            parent="/frame",
            ifaces=("Accessible", "Component", "Table", "Selection"),
            extents=(100, 100, 400, 200),
            grid=(1048576, 16384, 10, 10, first_row),
            count=HUGE,
        ),
        "/list": Obj(
            "list", "Recent", set(SHOWN) | {"manages-descendants"}, ["/l0", "/l1"], "/frame"
        ),
        "/l0": Obj("list-item", "one", set(SHOWN), parent="/list"),
        "/l1": Obj("list-item", "two", set(SHOWN), parent="/list"),
        "/dialog": Obj("dialog", "Format Cells", set(SHOWN), ["/ok"], ROOT_PATH),
        "/ok": Obj("push-button", "OK", set(SHOWN), parent="/dialog"),
    }
    return InMemoryApp(objects, cached={ROOT_PATH, "/frame", "/sheet", "/list", "/dialog", "/ok"})


@pytest.mark.asyncio
async def test_a_sheet_is_read_by_its_visible_cells_never_by_its_children() -> None:
    app = a_spreadsheet_app()
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/frame", lazy_hidden=True)
    assert not tree.partial, tree.problems
    assert ("GetChildren", "/sheet") not in app.asked
    assert ("GetChildren", "/list") not in app.asked  # managed: read child by child
    span = tree.virtual["/sheet"]
    assert (span.rows, span.columns) == (1048576, 16384)
    assert (span.first_row, span.last_row, span.first_column, span.last_column) == (0, 9, 0, 9)
    cells = tree.nodes["/sheet"].children or []
    assert len(cells) == 100 and span.addressed
    a1 = tree.nodes[cells[0]]
    assert (a1.name, a1.text, a1.role_name) == ("A1", "r0c0", "table-cell")
    assert tree.nodes[cells[11]].name == "B2" and tree.nodes[cells[11]].extents == (
        140,
        120,
        40,
        20,
    )
    assert [tree.nodes[p].name for p in tree.nodes["/list"].children or []] == ["one", "two"]
    # cells beyond the first of each column are asked only their state and text
    roles = sum(
        n for (member, path), n in app.asked.items() if member == "GetRole" and "cell" in path
    )
    assert roles == 10


@pytest.mark.asyncio
async def test_a_dialog_read_asks_nothing_of_the_main_window() -> None:
    app = a_spreadsheet_app()
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/dialog", lazy_hidden=True)
    assert tree.nodes["/dialog"].children == ["/ok"]
    touched = {path for _member, path in app.asked}
    assert not touched & {"/frame", "/sheet", "/list"} and not any("cell" in p for p in touched)
    # and the main window, read later from the same tree, is repaired then
    await reader.read_frame(tree, "/frame")
    assert len(tree.nodes["/sheet"].children or []) == 100


@pytest.mark.asyncio
async def test_a_scrolled_sheet_is_read_again_at_its_new_range_and_old_cells_go() -> None:
    app = a_spreadsheet_app()
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/frame", lazy_hidden=True)
    old = set(tree.nodes["/sheet"].children or [])
    grid = app.objects["/sheet"].grid
    assert grid is not None
    app.objects["/sheet"].grid = (*grid[:4], 50)  # scrolled down to row 51
    for path in old:
        del app.objects[path]
    rest = await reader.refresh(tree, Dirty(containers={"/sheet"}), frame="/frame")
    span = tree.virtual["/sheet"]
    assert (
        span.first_row == 50 and tree.nodes[(tree.nodes["/sheet"].children or [])[0]].name == "A51"
    )
    assert not old & set(tree.nodes)  # the cells of the old range are forgotten
    assert not (rest.props or rest.children)


@pytest.mark.asyncio
async def test_changes_in_another_window_wait_for_that_window_s_read() -> None:
    app = a_spreadsheet_app()
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/dialog", lazy_hidden=True)
    app.asked.clear()
    rest = await reader.refresh(
        tree, Dirty(props={"/list", "/ok"}, children={"/frame"}), frame="/dialog"
    )
    assert rest.props == {"/list"} and rest.children == {"/frame"}
    assert {path for _m, path in app.asked} - {ROOT_PATH} == {"/ok"}  # (root: its toolkit)


@pytest.mark.asyncio
async def test_libreoffice_is_never_asked_for_its_cache_and_is_read_live() -> None:
    app = a_spreadsheet_app(name="soffice")
    reader = TreeReader(AtspiBus(app))  # type: ignore[arg-type]
    tree = await reader.read_app(APP, frame="/frame", lazy_hidden=True)
    assert not tree.partial and not any(m == "GetItems" for m, _p in app.asked)
    assert tree.nodes["/frame"].children == ["/sheet", "/list"]
    assert len(tree.nodes["/sheet"].children or []) == 100


class HungApp(InMemoryApp):
    """Answers its cache, then nothing more (soffice at 100% CPU)."""

    def _call(self, msg: Message, callback: Reply) -> None:
        if msg.member == "GetItems":
            super()._call(msg, callback)
        else:
            self.asked[(msg.member or "", msg.path or "")] += 1


@pytest.mark.asyncio
async def test_an_app_that_stops_answering_ends_the_read_after_one_timeout() -> None:
    healthy = a_spreadsheet_app()
    app = HungApp(healthy.objects, healthy.cached)
    reader = TreeReader(AtspiBus(app, call_timeout=0.3))  # type: ignore[arg-type]
    start = time.monotonic()
    tree = await reader.read_app(APP, frame="/frame", lazy_hidden=True)
    assert time.monotonic() - start < 1.5  # not one timeout per call
    assert tree.partial and any("no reply in time" in p for p in tree.problems), tree.problems
    assert sum(app.asked.values()) < 10


def test_spreadsheet_addresses() -> None:
    assert [column_letters(c) for c in (0, 25, 26, 51, 701, 702, 16383)] == [
        "A",
        "Z",
        "AA",
        "AZ",
        "ZZ",
        "AAA",
        "XFD",
    ]
    assert address(0, 0) == "A1" and address(1048575, 16383) == "XFD1048576"
    assert parse_cell("b7") == (6, 1) and parse_cell("$AA$10") == (9, 26)
    assert parse_cell("R7C2") == (6, 1) and parse_cell("r1c1") == (0, 0)
    assert parse_cell("Sheet1") is None and parse_cell("A0") is None and parse_cell("R0C1") is None
    assert parse_range("C5:A1") == ((0, 0), (4, 2)) and parse_range("B2") == ((1, 1), (1, 1))
    assert parse_range("A1:") is None
