"""Scrolling without gaps (issue #21 item 5): a scroll moves at most about one view, keeping
part of the old view in sight, and says what came into view; a scroll area reads in full on
request, what is off screen marked. The page reports which rows a person could see after each
scroll has come to rest (a channel the tools do not use)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Call
from tests.desktop.helpers import id_of_line
from tests.desktop.web import PageServer, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def seen_after(pages: PageServer, count: int) -> dict[str, Any]:
    """The page's report of what is in view, once a report newer than ``count`` came."""

    async def newer() -> dict[str, Any] | None:
        events = pages.of("seen")
        return events[-1] if events and events[-1]["n"] > count else None

    from deskpilot._wait import async_wait_for

    return await async_wait_for(newer, timeout=10, what="the page to report what is in view")


async def test_scrolling_an_area_skips_nothing_and_says_what_came(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "scroll-gaps.html")
    area = id_of_line(page, "scrollable (div#area)")
    last = await seen_after(pages, 0)
    first_rows = last["rows"]
    assert first_rows[0] == 1 and first_rows[1] < 60
    for _ in range(40):
        done = await call("scroll", {"elementID": area, "direction": "down"})
        assert not done.is_error, done.text
        if not done.data or not done.data["moved"]:
            break
        now = await seen_after(pages, last["n"])
        # part of the old view still in sight: no row was skipped between two reads
        assert now["rows"][0] <= last["rows"][1], (last["rows"], now["rows"], done.text)
        assert now["rows"][1] > last["rows"][1], (last["rows"], now["rows"])
        # what came into view is said: from just below the old view (a row cut by its edge
        # was in the read already) to the new view's last row
        said = [int(n) for n in re.findall(r'"Row (\d+) of the area"', done.text)]
        assert said and min(said) <= last["rows"][1] + 2, done.text
        assert now["rows"][1] in said, (now["rows"], done.text)
        last = now
    assert last["rows"][1] == 60, last


async def test_a_long_scroll_of_the_page_moves_one_view_at_most(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    await open_page(call, pages, "scroll-gaps.html")
    before = await seen_after(pages, 0)
    done = await call("scroll", {"direction": "down", "milliseconds": 20000})
    assert not done.is_error and done.data and done.data["moved"], done.text
    after = await seen_after(pages, before["n"])
    # what was at the bottom of the view is still in it: the page moved less than a view
    moved = after["y"] - before["y"]
    assert 0 < moved < before["height"] * 0.9, (before, after, done.text)


@pytest.mark.xfail(
    strict=True,
    reason="the tree reader (desktop/atspi, apps' room) fetches names and extents only for "
    "nodes on screen: a zoomed read of a scroll area lists only its visible rows",
)
async def test_a_scroll_area_reads_in_full_with_what_is_off_screen_marked(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    page = await open_page(call, pages, "scroll-gaps.html")
    assert "Row 60 of the area" not in page
    area = id_of_line(page, "scrollable (div#area)")
    whole = await call("read_screen_ax", {"elementID": area})
    assert not whole.is_error, whole.text
    lines = whole.text.splitlines()
    for n in (1, 30, 60):
        line = next((ln for ln in lines if f'"Row {n} of the area"' in ln), None)
        assert line is not None, whole.text
        assert ("offscreen" in line) == (n > 9), line
