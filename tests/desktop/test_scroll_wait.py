"""scroll moves a long page in each direction and a long text view; wait enforces its bounds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")

LONG = Path(__file__).parent.parent / "fixtures" / "long.html"


def visible_lines(text: str) -> set[str]:
    return {ln.strip() for ln in text.splitlines() if '"Line ' in ln}


async def test_scroll_a_long_page_every_direction(call: Call, ctx: ToolContext, apps: Apps) -> None:
    opened = await call("open_urls", {"urls": [LONG.as_uri()]})
    assert not opened.is_error, opened.text
    await apps.adopt(
        next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    )
    top = (await call("read_screen_ax")).text
    assert 'Line 1: the quick brown fox"' in top
    assert "Line 250" not in top

    down = await call("scroll", {"direction": "down", "milliseconds": 3000})
    assert not down.is_error and down.data and down.data["moved"], down.text
    lower = (await call("read_screen_ax")).text
    assert 'Line 1: the quick brown fox"' not in lower
    assert visible_lines(lower) and visible_lines(lower) != visible_lines(top)

    up = await call("scroll", {"direction": "up", "milliseconds": 60000})
    assert up.data and up.data["moved"], up.text
    for _ in range(10):  # one view a scroll: as many as it takes to reach the top
        if not (await call("scroll", {"direction": "up"})).data["moved"]:  # type: ignore[index]
            break
    assert 'Line 1: the quick brown fox"' in (await call("read_screen_ax")).text

    at_top = await call("scroll", {"direction": "up", "milliseconds": 1000})
    assert "nothing moved" in at_top.text

    for _ in range(20):  # one view a scroll: as many as it takes to reach the right edge
        right = await call("scroll", {"direction": "right", "milliseconds": 20000})
        if not right.data or not right.data["moved"]:
            break
    assert "Right edge marker" in (await call("read_screen_ax")).text
    left = await call("scroll", {"direction": "left", "milliseconds": 20000})
    assert left.data and left.data["moved"], left.text


async def test_scroll_a_long_text_view(
    call: Call, ctx: ToolContext, apps: Apps, tmp_path: Path
) -> None:
    path = tmp_path / "long.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 201)))
    window = await apps.spawn(["mousepad", str(path)], match=lambda w: "long.txt" in w.title)
    before = await ctx.desktop.capture(window)
    down = await call("scroll", {"windowID": window.stable_id, "direction": "down"})
    assert down.data and down.data["moved"], down.text
    assert await ctx.desktop.capture(window) != before
    up = await call(
        "scroll", {"windowID": window.stable_id, "direction": "up", "milliseconds": 60000}
    )
    assert up.data and up.data["moved"], up.text


async def test_wait_bounds(call: Call) -> None:
    start = time.monotonic()
    waited = await call("wait", {"seconds": 0.2})
    assert not waited.is_error and time.monotonic() - start >= 0.2
    for bad in (0, -1, 3601, "soon"):
        result = await call("wait", {"seconds": bad})
        assert result.is_error and result.text.startswith("Invalid arguments for wait: seconds")
    missing = await call("wait", {})
    assert missing.is_error and "required" in missing.text
