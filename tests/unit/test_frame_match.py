"""Which accessible frame is a window's: a contradicting title never matches by being the only
frame (a dialog an app does not expose must not read as its main window)."""

from __future__ import annotations

from deskpilot.desktop.atspi.consts import S_ACTIVE
from deskpilot.desktop.atspi.frames import _frame_score, frame_offset
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


# -- where a frame's extents are: on the screen, or relative to the window ------------------


def test_a_gtk3_frame_at_the_screen_corner_holds_its_decorated_window_there() -> None:
    # measured: Mousepad at the corner, its frame (with the WM's border and title) at (0, 0)
    assert frame_offset((0, 0, 802, 621), Rect(1, 20, 800, 600)) == (0, 0)


def test_a_window_relative_frame_is_moved_to_its_window() -> None:
    assert frame_offset((0, 0, 800, 600), Rect(300, 200, 800, 600)) == (300, 200)


def test_a_window_relative_frame_with_a_shadow_is_moved_less_its_shadow() -> None:
    assert frame_offset((0, 0, 820, 620), Rect(300, 200, 800, 600)) == (290, 190)


def test_a_shadowed_frame_at_the_corner_reads_the_same_either_way() -> None:
    assert frame_offset((0, 0, 820, 620), Rect(10, 10, 800, 600)) == (0, 0)


def test_screen_extents_away_from_the_corner_are_kept() -> None:
    assert frame_offset((40, 60, 802, 621), Rect(41, 80, 800, 600)) == (0, 0)
