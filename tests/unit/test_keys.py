"""The shortcut grammar: documented forms parse; anything else is a clear error, never a crash."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskpilot.desktop.keys import Combo, parse_shortcut
from deskpilot.errors import InvalidArguments


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ctrl+shift+t", ("Control_L", "Shift_L", "t")),
        ("CTRL+S", ("Control_L", "s")),
        ("cmd+k", ("Control_L", "k")),
        ("escape", ("Escape",)),
        ("esc", ("Escape",)),
        ("shift+enter", ("Shift_L", "Return")),
        ("alt+F4", ("Alt_L", "F4")),
        ("ctrl++", ("Control_L", "plus")),
        ("+", ("plus",)),
        ("ctrl+*", ("Control_L", "asterisk")),
        ("super", ("Super_L",)),
        ("pagedown", ("Page_Down",)),
        ("KP_0", ("KP_0",)),
        ("option+arrowleft", ("Alt_L", "Left")),
    ],
)
def test_documented_forms(text: str, expected: tuple[str, ...]) -> None:
    assert parse_shortcut(text).keysyms == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("ctrl+", "empty part"),
        ("ctrl++shift+a", "empty part"),
        ("ctrl+a+b", "more than one non-modifier key"),
        ("ctrl+banana", "unknown key 'banana'"),
        ("+ctrl", "empty part"),
    ],
)
def test_malformed_shortcuts_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(InvalidArguments, match=problem):
        parse_shortcut(text)


@given(st.text(max_size=40))
def test_never_crashes(text: str) -> None:
    try:
        combo = parse_shortcut(text)
    except InvalidArguments as exc:
        assert str(exc)
    else:
        assert isinstance(combo, Combo) and combo.key


@given(
    st.lists(st.sampled_from(["ctrl", "shift", "alt", "super"]), max_size=4),
    st.sampled_from(["a", "Z", "1", "f12", "tab", "space", "home"]),
)
def test_modifiers_then_key(mods: list[str], key: str) -> None:
    combo = parse_shortcut("+".join([*mods, key]))
    assert len(combo.modifiers) == len(set(mods))
