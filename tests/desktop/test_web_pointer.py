"""Pointer actions on real pages, found the way a pixel agent finds them (in a screenshot).

double_click, right_click, hover, drag (a mouse-event drag, an HTML5 drag and drop, an element
onto another by their IDs) and click at a point of a canvas, each driven only through the
tools; each page reports what the pointer did to the test server.
"""

from __future__ import annotations

import pytest

from deskpilot.desktop.base import WindowInfo
from tests.desktop.conftest import Call
from tests.desktop.helpers import id_of_line
from tests.desktop.web import PageServer, color_center

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def open_page(call: Call, pages: PageServer, page: str) -> str:
    pages.clear()
    opened = await call("open_urls", {"urls": [pages.url(page)]})
    assert not opened.is_error, opened.text
    return opened.text


async def screenshot(call: Call) -> bytes:
    shot = await call("computer_use_screenshot")
    assert not shot.is_error, shot.text
    return shot.images[0].data


async def test_double_click_right_click_and_hover(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    await open_page(call, pages, "pointer.html")
    png = await screenshot(call)
    dbl = color_center(png, (220, 40, 40))
    right = color_center(png, (40, 160, 40))
    hover = color_center(png, (40, 40, 220))

    done = await call("perform", {"action": "double_click", "x": dbl[0], "y": dbl[1]})
    assert not done.is_error, done.text
    assert done.text.startswith(f"Double-clicked at ({dbl[0]}, {dbl[1]})")
    await pages.wait_for("dblclick")

    done = await call("perform", {"action": "right_click", "x": right[0], "y": right[1]})
    assert not done.is_error, done.text
    assert (await pages.wait_for("contextmenu"))["button"] == 2

    done = await call("perform", {"action": "hover", "x": hover[0], "y": hover[1]})
    assert not done.is_error, done.text
    await pages.wait_for("hover")
    assert not pages.of("dblclick", page="/other")  # nothing else was pressed on the way


async def test_drag_by_mouse_events_and_html5_drop(
    call: Call, pages: PageServer, browser: WindowInfo
) -> None:
    await open_page(call, pages, "drag.html")
    png = await screenshot(call)
    apple = color_center(png, (255, 204, 102))
    basket = color_center(png, (200, 255, 200))

    step = {"action": "drag", "x": apple[0], "y": apple[1], "toX": basket[0], "toY": basket[1]}
    done = await call("perform", step)
    assert not done.is_error, done.text
    dropped = await pages.wait_for("drop", item="apple")
    assert dropped["inside"] and dropped["moves"] >= 5

    # by an offset: from the pear (it moved up when the apple left the shelf) to the basket
    png = await screenshot(call)
    pear, basket = color_center(png, (153, 204, 255)), color_center(png, (200, 255, 200))
    offset = {"dx": basket[0] - pear[0], "dy": basket[1] - pear[1] + 20}
    done = await call("perform", {"action": "drag", "x": pear[0], "y": pear[1], **offset})
    assert not done.is_error, done.text
    assert "by (" in done.text
    await pages.wait_for("drop", item="pear")

    # from one element to another, by their IDs: a sortable list's item onto another
    page = (await call("read_screen_ax")).text
    wash, fold = id_of_line(page, 'Wash"'), id_of_line(page, 'Fold"')  # "1. Wash"
    done = await call("perform", {"action": "drag", "elementID": wash, "toElementID": fold})
    assert not done.is_error, done.text
    assert (await pages.wait_for("order"))["order"] == ["Dry", "Fold", "Wash"]


async def test_click_points_on_a_canvas(call: Call, pages: PageServer, browser: WindowInfo) -> None:
    await open_page(call, pages, "canvas.html")
    png = await screenshot(call)
    steps = [
        {"x": x, "y": y}
        for x, y in (color_center(png, (0, 0, 238)), color_center(png, (238, 0, 0)))
    ]
    done = await call("perform_sequence", {"steps": steps})
    assert not done.is_error, done.text
    await pages.wait_for("canvas-click", shape="blue square")
    await pages.wait_for("canvas-click", shape="red circle")
    shapes = [e["shape"] for e in pages.of("canvas-click")]
    assert shapes == ["blue square", "red circle"]
    assert "(on canvas" in done.text  # what was under the point
