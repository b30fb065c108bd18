"""Which accessible frame is a window's: a contradicting title never matches by being the only
frame (a dialog an app does not expose must not read as its main window)."""

from __future__ import annotations

from deskpilot.desktop.atspi.consts import S_ACTIVE
from deskpilot.desktop.atspi.frames import _frame_score
from deskpilot.desktop.base import AppIdentity, Rect, WindowInfo


def window(title: str, geo: Rect, active: bool = True) -> WindowInfo:
    app = AppIdentity(name="App", app_id="app")
    return WindowInfo(handle=2, title=title, app=app, pid=1, geometry=geo, active=active)


MAIN = (0, 0, 800, 600)
DIALOG = Rect(100, 100, 600, 400)


def test_the_only_frame_named_otherwise_is_not_a_dialog_s_frame() -> None:
    assert _frame_score(window("Save As", DIALOG), "Editor", S_ACTIVE, MAIN, single=True) == 0


def test_the_only_frame_with_the_same_title_matches() -> None:
    assert _frame_score(window("Save As", DIALOG), "Save As", S_ACTIVE, (), single=True) > 0


def test_an_unnamed_only_frame_still_matches() -> None:
    assert _frame_score(window("Save As", DIALOG), "", 0, (), single=True) > 0


def test_exact_extents_match_despite_a_different_name() -> None:
    geo = (DIALOG.x, DIALOG.y, DIALOG.width, DIALOG.height)
    assert _frame_score(window("Save As", DIALOG), "File chooser", 0, geo, single=False) > 0


def test_close_extents_do_not_outweigh_a_different_name() -> None:
    geo = (DIALOG.x + 5, DIALOG.y + 5, DIALOG.width, DIALOG.height)
    assert _frame_score(window("Save As", DIALOG), "Editor", 0, geo, single=True) == 0


def test_title_beats_position() -> None:
    w = window("Report - Writer", Rect(0, 0, 800, 600))
    by_title = _frame_score(w, "Report - Writer", 0, (), single=False)
    by_place = _frame_score(w, "", 0, (0, 0, 800, 600), single=False)
    assert by_title > by_place > 0


def test_a_window_relative_frame_with_a_client_side_shadow_matches_despite_its_name() -> None:
    """LibreOffice names its message dialogs by kind ("Question"); on Wayland the frame is at
    0,0 and is the window plus its shadow (sway 1.7: 588x243 in the tree, a 608x263 frame)."""
    dialog = Rect(346, 278, 588, 243)
    w = window("Confirm File Format", dialog)
    assert _frame_score(w, "Question", S_ACTIVE, (0, 0, 608, 263), single=False) > 0
    assert _frame_score(w, "Question", S_ACTIVE, (0, 0, 588, 243), single=False) > 0
    # uneven, or wider than a shadow: another window
    assert _frame_score(w, "Question", S_ACTIVE, (0, 0, 608, 253), single=False) == 0
    assert _frame_score(w, "Question", S_ACTIVE, (0, 0, 700, 355), single=False) == 0
