"""Change summaries (issue 21 item 3): reorders are news (moved lines), and a summary after an
action is about that action only — the same lines never come back after every action."""

from __future__ import annotations

from deskpilot.ax.diff import diff
from deskpilot.config import Settings
from tests.unit.test_tools_fake import call, make


def test_a_reordered_list_shows_what_moved_and_where() -> None:
    before = {"a": 'row "Apples" @1.a', "b": 'row "Bananas" @1.b', "c": 'row "Cherries" @1.c'}
    after = {"c": 'row "Cherries" @1.c', "a": 'row "Apples" @1.a', "b": 'row "Bananas" @1.b'}
    d = diff(before, after)
    assert not d.empty and not d.added and not d.removed and not d.changed
    assert d.lines() == ['↕ row "Cherries" @1.c  (moved: now first)']
    assert d.summary() == 'Changes: ↕ row "Cherries" @1.c (moved: now first)'


def test_a_row_made_anew_in_another_place_is_moved_not_gone_and_new() -> None:
    # a spreadsheet sorted: the app made new cells for the rows (new IDs), same texts
    before = {"1": 'cell "Zoe" @1.1', "2": 'cell "Adam" @1.2', "3": 'cell "Mia" @1.3'}
    after = {"4": 'cell "Adam" @1.4', "5": 'cell "Mia" @1.5', "6": 'cell "Zoe" @1.6'}
    d = diff(before, after)
    assert not d.added and not d.removed
    assert [line for line, _ in d.moved] == ['cell "Zoe" @1.6']
    assert d.lines() == ['↕ cell "Zoe" @1.6  (moved: now after cell "Mia")']


def test_a_line_made_anew_in_its_place_is_no_news_and_an_insertion_moves_nothing() -> None:
    before = {"1": 'button "Go" @1.1', "2": 'text "x"'}
    assert diff(before, {"9": 'button "Go" @1.9', "2": 'text "x"'}).empty
    inserted = diff(before, {"1": 'button "Go" @1.1', "n": 'text "new"', "2": 'text "x"'})
    assert inserted.added == ['text "new"'] and not inserted.moved
    gone = diff(before, {"2": 'text "x"'})
    assert gone.removed == ['button "Go" @1.1'] and not gone.moved


def _buttons(text: str) -> dict[str, str]:
    return {
        ln.split('"')[1]: ln.rsplit("@", 1)[1]
        for ln in text.splitlines()
        if "@" in ln and ln.strip().startswith("button")
    }


def test_each_action_summary_is_about_that_action_only(settings: Settings) -> None:
    ctx, _desk, _ = make(settings)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    ids = _buttons(call(ctx, "read_screen_ax").text)
    first = call(ctx, "perform", {"elementID": ids["7"]}).text
    assert "Changes: ~" in first and "7" in first.splitlines()[-1]
    second = call(ctx, "perform", {"elementID": ids["C"]}).text.splitlines()[-1]
    assert second.startswith("Changes: ~") and '(was: "7")' in second  # since the last action
    third = call(ctx, "perform", {"elementID": ids["C"]}).text.splitlines()[-1]
    assert third == "No visible effect: nothing in the window changed."  # not the C again


def test_a_sequence_says_which_steps_had_no_visible_effect(settings: Settings) -> None:
    ctx, desk, _ = make(settings)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    ids = _buttons(call(ctx, "read_screen_ax").text)
    steps = [{"elementID": ids[k]} for k in ("4", "C", "C", "2")]
    result = call(ctx, "perform_sequence", {"steps": steps})
    assert not result.is_error
    assert desk.display_text(desk.windows[0].info.handle) == "2"  # the app's own state
    head, *lines = result.text.splitlines()
    assert head == "All 4 steps ran, but 1 had no visible effect (step 3): re-read before going on:"
    assert lines[2].startswith("3. ") and lines[2].endswith(
        "No visible effect: nothing in the window changed."
    )
    assert not any("No visible effect" in ln for ln in lines[:2] + lines[3:4])
