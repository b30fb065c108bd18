"""A scroll is judged on what a person sees: the scrolled area's content moved in its
picture counts though nothing in the accessibility tree moved (Chromium sends no event when a
page scrolls, and its tree trails the paint: under load a scroll said "nothing moved" while
the page had moved). A change in place — a ticking clock — is no movement. The page reports
where it is scrolled to (a channel the tools do not use)."""

from __future__ import annotations

import pytest

from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Call
from tests.desktop.web import PageServer, open_page

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_page_that_moves_only_in_its_picture_has_moved(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    """What scrolls is hidden from the accessibility tree: the page's only accessible element
    is a fixed bar, so nothing in the tree moves (as when Chromium's tree trails a scroll). A
    person sees the page move: so does the scroll's result. At the top, nothing moves though
    the bar's clock ticks. Where the page is scrolled to, it reports itself."""
    await open_page(call, pages, "scroll-unplaced.html")
    down = await call("scroll", {"direction": "down"})
    assert not down.is_error and down.data and down.data["moved"], down.text
    assert (await pages.wait_for("scrolled"))["y"] > 0
    pages.clear()
    up = await call("scroll", {"direction": "up", "milliseconds": 60000})
    assert up.data and up.data["moved"], up.text
    assert (await pages.wait_for("scrolled"))["y"] == 0
    at_top = await call("scroll", {"direction": "up"})
    assert at_top.data is not None and not at_top.data["moved"], at_top.text
    assert "nothing moved" in at_top.text
