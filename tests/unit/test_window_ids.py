"""Window IDs (desktop/window_ids.py): every form the tools accept, parsed and resolved the
same way by every surface (tools, native calls, the console's previews)."""

from __future__ import annotations

from deskpilot.desktop.base import AppIdentity, Rect, WindowInfo
from deskpilot.desktop.window_ids import find_window, handle_of, parse_window_id, pid_of


def win(pid: int, handle: int, title: str) -> WindowInfo:
    app = AppIdentity(name="app", app_id="app")
    return WindowInfo(handle=handle, pid=pid, title=title, app=app, geometry=Rect(0, 0, 10, 10))


WINDOWS = [
    win(12, 0x400007, "Report/2024 - Writer"),
    win(12, 77, "77"),  # a title that is only digits
    win(30, 5, "Calculator"),
]


def test_each_form_names_its_window() -> None:
    assert find_window(WINDOWS, "12/4194311") is WINDOWS[0]  # pid/handle (stable)
    assert find_window(WINDOWS, " 12/Report/2024 - Writer ") is WINDOWS[0]  # title with '/'
    assert find_window(WINDOWS, "0x400007") is WINDOWS[0]  # bare hex, as xwininfo prints
    assert find_window(WINDOWS, "4194311") is WINDOWS[0]  # bare decimal
    assert find_window(WINDOWS, "30/Calculator") is WINDOWS[2]
    assert find_window(WINDOWS, "12/77") is WINDOWS[1]


def test_a_handle_of_another_pid_or_a_wrong_title_names_nothing() -> None:
    assert find_window(WINDOWS, "30/4194311") is None
    assert find_window(WINDOWS, "12/Calculator") is None
    for junk in ("", "  ", None, "x/5", "/5", "writer", "0xZZ", "-1/5"):
        assert find_window(WINDOWS, junk) is None, junk


def test_handle_and_pid_of_an_id() -> None:
    assert (pid_of("12/4194311"), handle_of("12/4194311")) == (12, 4194311)
    assert handle_of("12/Report/2024") is None  # a title, not a handle
    assert handle_of("12/a/56") is None  # everything after the first '/' is one part
    assert handle_of("4194311") is None  # a bare handle has no pid: not a stable ID
    assert pid_of("12/Report/2024") == 12 and pid_of("Calculator") is None
    assert parse_window_id("0x10") is not None and parse_window_id("0x10").handle == 16  # type: ignore[union-attr]
