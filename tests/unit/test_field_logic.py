"""Pure logic behind fill and reads of fields: date/time parts, carets, combo lists."""

from __future__ import annotations

import dataclasses

from deskpilot.ax.popup import more_line, open_popup, scrolled_items
from deskpilot.ax.render import Renderer
from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.caret import Caret, describe_caret, line_and_column
from deskpilot.desktop.skills.segments import keys_for, wanted_parts
from tests.unit.test_render import node


def test_iso_dates_and_times_give_each_segment_its_value() -> None:
    date = {"month", "day", "year"}
    assert wanted_parts("2026-03-07", date) == {"year": 2026, "month": 3, "day": 7}
    clock = {"hours", "minutes", "am/pm"}
    assert wanted_parts("14:05", clock) == {"hours": 2, "minutes": 5, "am/pm": 2}
    assert wanted_parts("00:30", clock) == {"hours": 12, "minutes": 30, "am/pm": 1}
    assert wanted_parts("2:05 pm", {"hours", "minutes"}) == {"hours": 14, "minutes": 5}
    both = wanted_parts("2026-03-07T09:15:30", date | {"hours", "minutes", "seconds"})
    assert both == {"year": 2026, "month": 3, "day": 7, "hours": 9, "minutes": 15, "seconds": 30}
    assert wanted_parts("next Tuesday", date) == {}
    assert [keys_for(k, v) for k, v in [("month", 3), ("year", 26), ("am/pm", 2)]] == [
        "03",
        "0026",
        "P",
    ]


def test_a_caret_as_line_and_column_and_the_selection_cut() -> None:
    assert line_and_column("") == (1, 1)
    assert line_and_column("ab\ncd") == (2, 3)
    caret = Caret((":1.2", "/t"), 5, 2, 3, 40, [(3, 300, "x" * 297)])
    lines = describe_caret(caret, "2.5")
    assert lines[0] == "Caret: line 2, column 3 in @2.5 (offset 5 of 40)"
    assert lines[1].startswith("Selected in @2.5: 'xxx") and "…' (offsets 3–300, 297" in lines[1]
    one_line = describe_caret(dataclasses.replace(caret, line=1, selections=[]), None)
    assert one_line == ["Caret: column 3 (offset 5 of 40)"]


def _combo(items: int, visible: int) -> Node:
    """A combo box whose open list (at y 100–200) shows ``visible`` of ``items`` items."""
    kids = [node("menu-item", f"Item {i}", at=(10, 100 + 20 * i)) for i in range(items)]
    for kid in kids[visible:]:
        kid.bounds = Rect(10, 900 + kid.bounds.y, 40, 20) if kid.bounds else None
    menu = node("menu", kids=kids, at=(10, 100))
    menu.bounds = Rect(0, 100, 200, 20 * visible)
    return node("combo-box", "Pick", kids=[menu])


def test_an_open_combo_list_is_judged_by_its_own_rectangle() -> None:
    combo = _combo(items=30, visible=5)
    found = open_popup(combo)
    assert found is not None
    popup, area = found
    hidden = scrolled_items(popup, area)
    assert [n.name for n in hidden] == [f"Item {i}" for i in range(5, 30)]
    assert more_line(hidden).startswith('… 25 more items scrolled out of the list: "Item 5"')
    # the window is small (the list reaches past it): still every visible item is listed
    frame = node("frame", "Dialog", kids=[combo], at=(0, 0))
    text = Renderer(Rect(0, 0, 300, 120), 10000).render(frame).text
    assert all(f'menuitem "Item {i}"' in text for i in range(5)), text
    assert "… 25 more items scrolled out of the list" in text
    closed = node("combo-box", "Pick", kids=[node("menu", states=frozenset({"enabled"}))])
    assert open_popup(closed) is None


def test_which_steps_may_open_a_window() -> None:
    from deskpilot.tools.steps import Step
    from deskpilot.tools.window_changes import may_open_window, presses_enter

    def key(s: str) -> list[Step]:
        return [Step(action="shortcut", shortcut=s)]

    assert all(
        may_open_window(key(s))
        for s in ("ctrl+s", "ctrl+shift+s", "alt+f4", "f12", "enter", "ctrl+o")
    )
    assert not any(
        may_open_window(key(s))
        for s in ("ctrl+c", "ctrl+shift+right", "shift+tab", "escape", "down")
    )
    assert presses_enter([Step(action="type", text="/tmp/a.odp\n")])
    assert not presses_enter([Step(action="type", text="12*7")])
