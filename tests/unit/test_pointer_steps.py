"""Pointer steps of perform on the FakeDesktop: arguments, points, and the policy for points.

Pure logic (which point a step aims at, what is refused or asked); the pointer input itself
is tested on real pages in tests/desktop/test_web_pointer.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.base import LiveElement, WindowInfo
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.errors import AppGone
from deskpilot.policy import CallbackApprover, DenyAll
from deskpilot.session import Session
from deskpilot.tools.context import ToolContext
from tests.unit.test_tools_fake import call, make


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"action": "double_click"}, "double_click needs an elementID from read_screen_ax, or"),
        ({"action": "hover", "x": 3}, "a point needs both x and y"),
        ({"action": "fill", "x": 3, "y": 4, "text": "a"}, "fill does not take a point"),
        ({"action": "click", "x": 1, "y": 1, "elementID": "1.2"}, "not both"),
        ({"action": "drag", "x": 1, "y": 1}, "drag needs exactly one destination"),
        ({"action": "drag", "x": 1, "y": 1, "dx": 5, "toX": 3, "toY": 3}, "exactly one"),
        ({"action": "click", "x": 1, "y": 1, "dx": 5}, "only for drag"),
        ({"action": "drag", "x": 1, "y": 1, "toX": 4}, "a drop point needs both toX and toY"),
        ({"action": "click", "x": -1, "y": 1}, "x: Input should be greater than or equal to 0"),
    ],
)
def test_bad_pointer_arguments_change_nothing(
    settings: Settings, args: dict[str, Any], message: str
) -> None:
    ctx, desk, _ = make(settings)
    result = call(ctx, "perform", args)
    assert result.is_error and message in result.text, result.text
    assert desk.log == []


def test_a_point_is_in_screenshot_pixels_and_must_be_inside(settings: Settings) -> None:
    ctx, desk, _ = make(settings)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    geo = desk.windows[0].info.geometry
    button = next(n for n in desk.windows[0].root.walk() if n.name == "7")
    assert button.bounds is not None
    bx, by = button.bounds.center
    done = call(ctx, "perform", {"x": bx - geo.x, "y": by - geo.y})
    assert not done.is_error, done.text
    assert f"click {bx},{by}" in desk.log and desk.display_text(geo_xid(desk)) == "7"
    assert 'on button "7"' in done.text
    outside = call(ctx, "perform", {"x": geo.width, "y": 10})
    assert outside.is_error and f"is {geo.width}x{geo.height} pixels" in outside.text


def geo_xid(desk: Any) -> int:
    return int(desk.windows[0].info.handle)


def test_pointer_actions_on_elements_and_drags(settings: Settings) -> None:
    ctx, desk, _ = make(settings)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    text = call(ctx, "read_screen_ax").text
    ids = {ln.split('"')[1]: ln.rsplit("@", 1)[1] for ln in text.splitlines() if "@" in ln}
    steps = [
        {"action": "double_click", "elementID": ids["8"]},
        {"action": "hover", "elementID": ids["9"]},
        {"action": "drag", "elementID": ids["1"], "toElementID": ids["2"]},
        {"action": "drag", "elementID": ids["1"], "dx": 30, "dy": -5},
    ]
    done = call(ctx, "perform_sequence", {"steps": steps})
    assert not done.is_error, done.text
    assert desk.display_text(geo_xid(desk)) == "88"
    nodes = {n.name: n for n in desk.windows[0].root.walk()}
    (x1, y1), (x2, y2) = (nodes[k].bounds.center for k in ("1", "2"))  # type: ignore[union-attr]
    assert f"drag {x1},{y1} {x2},{y2}" in desk.log
    assert f"drag {x1},{y1} {x1 + 30},{y1 - 5}" in desk.log
    assert "Dragged button" in done.text and "by (30, -5) pixels" in done.text
    too_far = call(ctx, "perform", {"action": "drag", "elementID": ids["1"], "dx": -5000})
    assert too_far.is_error and "would end outside window" in too_far.text


def test_a_point_in_a_blocked_window_is_refused(settings: Settings) -> None:
    ctx, desk, _ = make(settings)
    call(ctx, "open_app", {"bundleId": "Editor"})
    editor = desk.windows[0].info
    desk.add_window(FAKE_APPS[2])  # the password manager, over the editor's right part
    vault = desk.windows[1].info.geometry
    ctx.session.target = editor.stable_id
    x = vault.x + 20 - editor.geometry.x
    for args in ({"x": x, "y": 50}, {"action": "drag", "x": 5, "y": 50, "toX": x, "toY": 50}):
        refused = call(ctx, "perform", args)
        assert refused.is_error and "blocked apps list" in refused.text, refused.text
    assert not any(e.startswith(("click", "drag")) for e in desk.log)


def test_a_press_on_a_send_like_element_at_a_point_asks(settings: Settings) -> None:
    ctx, desk, _events = make(settings, confirm="consequential")
    call(ctx, "open_app", {"bundleId": "Editor"})
    send = next(n for n in desk.windows[0].root.walk() if n.name == "Send")
    geo = desk.windows[0].info.geometry
    assert send.bounds is not None
    point = {"x": send.bounds.x + 5 - geo.x, "y": send.bounds.y + 5 - geo.y}
    ctx.approver = DenyAll()
    declined = call(ctx, "perform", point)
    assert declined.is_error and declined.text.startswith("Declined"), declined.text
    assert not any(e.startswith("click ") for e in desk.log)
    asked: list[str] = []
    ctx.approver = CallbackApprover(lambda req: asked.append(req.reason) or True, person=True)
    hover = call(ctx, "perform", {"action": "hover", **point})
    assert not hover.is_error and asked == []  # a hover presses nothing
    assert not call(ctx, "perform", {"action": "double_click", **point}).is_error
    assert asked and "Send" in asked[0]


@dataclass
class LeavingDesktop(FakeDesktop):
    """A FakeDesktop where one window's app answers one hit-test, then has left the bus (its
    dialog closed by another session's click between the policy's look and the step's)."""

    leaving: int | None = None  # the handle of that window
    answered: int = 0

    async def element_at(
        self, x: int, y: int, window: WindowInfo | None = None
    ) -> LiveElement | None:
        hit = window or await self.window_at(x, y)
        if hit is not None and hit.handle == self.leaving:
            self.answered += 1
            if self.answered > 1:
                raise AppGone(f"the app of window {hit.stable_id} left the accessibility bus")
        return await super().element_at(x, y, window)


def test_a_point_another_window_covers_clicks_this_window_whatever_becomes_of_that_one(
    settings: Settings,
) -> None:
    """A click at a point of the session's window that another window covers (another
    session's dialog) presses this window's element there, and says so; that the other
    window's app leaves meanwhile is not this window closing."""
    desk = LeavingDesktop()
    ctx = ToolContext(desktop=desk, settings=settings, session=Session(), audit=lambda _e: None)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    calc = desk.windows[0].info
    other = desk.add_window(FAKE_APPS[1], title="Another session's dialog")
    seven = next(n for n in desk.windows[0].root.walk() if n.name == "7")
    assert seven.bounds is not None
    x, y = seven.bounds.center
    covering = asyncio.run(desk.window_at(x, y))
    assert covering is not None and covering.handle == other.handle  # the premise
    desk.leaving = other.handle
    ctx.session.target = calc.stable_id
    done = call(ctx, "perform", {"x": x - calc.geometry.x, "y": y - calc.geometry.y})
    assert not done.is_error, done.text
    assert 'on button "7"' in done.text, done.text
    assert desk.display_text(int(calc.handle)) == "7"  # pressed: the calculator shows it
    assert desk.answered == 0  # neither the policy nor the step asked the window over it


def test_a_send_under_another_window_is_judged_as_the_send_the_click_presses(
    settings: Settings,
) -> None:
    """A click at a point of the session's window raises that window and presses its element
    there: under ``confirm = consequential`` the press is judged by that element ("Send"),
    not by the harmless element of a window that covers the point now."""
    ctx, desk, _events = make(settings, confirm="consequential")
    call(ctx, "open_app", {"bundleId": "Editor"})
    editor = desk.windows[0].info
    send = next(n for n in desk.windows[0].root.walk() if n.name == "Send")
    assert send.bounds is not None
    x, y = send.bounds.center
    cover = desk.add_window(FAKE_APPS[0], title="A calculator over the editor")
    covering = asyncio.run(desk.window_at(x, y))
    assert covering is not None and covering.handle == cover.handle  # the premise
    ctx.session.target = editor.stable_id
    ctx.approver = DenyAll()
    declined = call(ctx, "perform", {"x": x - editor.geometry.x, "y": y - editor.geometry.y})
    assert declined.is_error and declined.text.startswith("Declined"), declined.text
    assert "Send" in declined.text, declined.text
    assert not any(e.startswith("click ") for e in desk.log)  # nothing pressed, anywhere
