"""LibreOffice Calc: reads that cannot hurt the app.

Calc's sheet reports 2^31 - 1 children; listing them hangs soffice (100% CPU, memory growing
by ~35 MB/s). Here Calc, its menus and a dialog are read again and again through the tools,
while a separate reader (its own connection to the accessibility bus) checks that soffice
still answers, and /proc tells its memory.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import CallQueue
from deskpilot.desktop.base import WindowInfo
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id
from tests.desktop.office_files import write_fods

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROWS: list[list[Any]] = [["Name", "Qty", "Price"]] + [
    [f"Item {i}", i, round(i * 1.25, 2)] for i in range(1, 21)
]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


@pytest.fixture
def calls_sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[tuple[str, str]]]:
    """(member, path) of every AT-SPI call the tools send."""
    sent: Counter[tuple[str, str]] = Counter()
    original = CallQueue.request

    def spy(self: CallQueue, dest: str, path: str, iface: str, member: str, *a: Any, **k: Any):  # type: ignore[no-untyped-def]
        sent[(member, path)] += 1
        return original(self, dest, path, iface, member, *a, **k)

    monkeypatch.setattr(CallQueue, "request", spy)
    yield sent


async def open_calc(apps: Apps, tmp_path: Path) -> WindowInfo:
    doc = write_fods(tmp_path / "stock.fods", {"Stock": ROWS})
    return await apps.spawn(
        ["localc", "--norestore", str(doc)], match=lambda w: "stock" in w.title.lower()
    )


class Reads:
    """Reads through the tools, with soffice's memory before and after each."""

    def __init__(self, call: Call, pid: int) -> None:
        self.call, self.pid = call, pid
        self.count = 0
        self.grown = 0.0  # MB, summed over the reads (what soffice allocated while read)

    async def read(self, args: dict[str, Any] | None = None) -> str:
        before = rss_mb(self.pid)
        result = await self.call("read_screen_ax", args or {})
        self.grown += rss_mb(self.pid) - before
        self.count += 1
        assert not result.is_error and "partial read" not in result.text, result.text
        return result.text


class Probe:
    """A separate reader: its own bus connection, one small call, how long it took."""

    def __init__(self, bus: AtspiBus, app: str, frame: str) -> None:
        self.bus, self.app, self.frame = bus, app, frame
        self.worst = 0.0

    async def answers(self) -> bool:
        start = time.monotonic()
        await self.bus.call(self.app, self.frame, "Accessible", "GetState", timeout=5.0)
        self.worst = max(self.worst, time.monotonic() - start)
        return True


async def test_calc_its_menus_and_a_dialog_read_50_times_leave_soffice_well(
    call: Call,
    ctx: ToolContext,
    apps: Apps,
    desktop_settings: Settings,
    tmp_path: Path,
    calls_sent: Counter[tuple[str, str]],
) -> None:
    calc = await open_calc(apps, tmp_path)
    located = await ctx.desktop.ports.a11y.trees.locate(calc)  # type: ignore[attr-defined]
    assert located is not None
    bus_name, frame, _ = located
    probe = Probe(await AtspiBus.connect(desktop_settings.session_bus), bus_name, frame)
    try:
        reads = Reads(call, calc.pid)
        first = await reads.read({"windowID": calc.stable_id})
        # the sheet's cells are in the read, with their addresses and contents
        assert 'row 1: A1 "Name" [focused] · B1 "Qty"' in first and 'C3 "2.5"' in first, first
        sheet = next(path for (member, path) in calls_sent if member == "GetAccessibleAt")
        assert await probe.answers()
        reads.grown = 0.0  # the first read made soffice create the visible cells (~3 MB)
        start = rss_mb(calc.pid)
        for i in range(50):
            text = await reads.read({"windowID": calc.stable_id})
            if i % 10 == 3:  # a menu, open: read it, close it
                menu = find_id(text, "menu", "Sheet")
                opened = await call("perform", {"elementID": menu, "windowID": calc.stable_id})
                assert not opened.is_error, opened.text

                async def shows_items() -> bool:
                    return "Rename Sheet" in await reads.read({"windowID": calc.stable_id})

                await async_wait_for(shows_items, timeout=15, what="the Sheet menu's items")
                closed = await call(
                    "perform",
                    {"action": "shortcut", "shortcut": "escape", "windowID": calc.stable_id},
                )
                assert not closed.is_error, closed.text
            if i % 10 == 7:  # a dialog: read it (and only it), close it
                opened = await call(
                    "perform",
                    {"action": "shortcut", "shortcut": "ctrl+1", "windowID": calc.stable_id},
                )
                assert "A new window opened" in opened.text, opened.text
                calls_sent.clear()
                shown = await reads.read()  # the dialog: now the tracked target
                assert "Format Cells" in shown, shown
                # the read of the dialog asked nothing of the sheet or its cells
                assert not [k for k in calls_sent if k[1] == sheet], calls_sent
                closed = await call("perform", {"action": "shortcut", "shortcut": "escape"})
                assert "closed" in closed.text, closed.text
            assert await probe.answers(), f"soffice stopped answering after read {i + 1}"
        assert reads.count >= 61
        # a GetChildren on the sheet grows soffice by ~35 MB a second, for good; opening the
        # dialog costs soffice ~8 MB each time, read or not: not counted (the first read of an
        # open menu makes soffice create its items: ~3 MB)
        assert reads.grown < 10, f"soffice grew by {reads.grown:.1f} MB while read"
        assert probe.worst < 3.0, f"soffice took {probe.worst:.1f} s to answer a probe"
        # no call ever listed the sheet's children
        assert not any(m == "GetChildren" and path == sheet for m, path in calls_sent)
        print(
            f"\n{reads.count} reads: soffice grew {reads.grown:.1f} MB while read "
            f"({rss_mb(calc.pid) - start:.1f} MB in all, dialogs included); slowest probe "
            f"{probe.worst * 1000:.0f} ms"
        )
    finally:
        await probe.bus.close()
