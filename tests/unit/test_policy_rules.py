"""Consequential-act rules: names by word, shortcuts by the keys they press."""

from __future__ import annotations

import pytest

from deskpilot.policy import ConsequentialRules


@pytest.mark.parametrize(
    "shortcut",
    [
        "ctrl+enter",
        "ctrl+return",
        "cmd+enter",
        "control+Return",
        "ctl+return",
        "ctrl+KP_Enter",
        "CTRL + ENTER",
        "alt+s",
        "Alt+S",
    ],
)
def test_every_spelling_of_a_sending_shortcut_is_consequential(shortcut: str) -> None:
    assert ConsequentialRules().shortcut_reason(shortcut) == (
        f"shortcut {shortcut} may send or submit"
    )


@pytest.mark.parametrize("shortcut", ["ctrl+s", "enter", "shift+enter", "ctrl+", "nonsense"])
def test_other_shortcuts_are_not(shortcut: str) -> None:
    assert ConsequentialRules().shortcut_reason(shortcut) is None


def test_resolved_keysyms_match_the_same_rules() -> None:
    rules = ConsequentialRules(shortcuts=["ctrl+shift+p"])
    assert rules.keys_reason(("Control_L", "Shift_L", "p"), "ctrl+shift+p")
    assert rules.keys_reason(("Control_L", "p"), "ctrl+p") is None
