"""The policy's events in words (deskpilot.policy.records), as the chips and `deskpilot log
show` print them."""

from __future__ import annotations

import io

from rich.console import Console

from deskpilot.agent.chips import ChipPrinter
from deskpilot.events import Event
from deskpilot.policy.records import decided_sentence, grants_sentence, sentence

ASKED = {
    "tool": "perform",
    "outcome": "asked",
    "risk": "consequential",
    "effect": "delete",
    "act": "place",
    "evidence": {
        "why": 'activates "OK" in a dialog that says "cannot be undone": delete',
        "window": "Delete file",
    },
    "answer": {"by": "TerminalApprover", "person": True, "approved": True, "scope": "task"},
}


def test_each_outcome_is_one_sentence() -> None:
    assert decided_sentence(ASKED) == (
        'asked: activates "OK" in a dialog that says "cannot be undone": delete (in “Delete '
        "file”) — approved by TerminalApprover (a person), for the rest of the task"
    )
    allowed = {
        **ASKED,
        "outcome": "allowed",
        "answer": None,
        "grant": {"source": "goal", "words": "delete draft-old.txt"},
    }
    assert decided_sentence(allowed).endswith("— granted by the goal (“delete draft-old.txt”)")
    declined = {
        **ASKED,
        "outcome": "declined",
        "answer": {"by": "TerminalApprover"},
        "refused": "Declined: perform needs a person's yes (…) and there is no terminal "
        "to ask. Nothing was done.",
    }
    assert decided_sentence(declined).endswith(
        "— declined by TerminalApprover: nobody could be asked (no terminal)"
    )
    refused = "KeePassXC is blocked: deskpilot does not open, read or control it."
    blocked = {
        "tool": "read_screen_ax",
        "outcome": "blocked",
        "risk": "read-only",
        "refused": refused,
    }
    assert decided_sentence(blocked).startswith("blocked: KeePassXC is blocked")
    plain = {"tool": "scroll", "outcome": "allowed", "risk": "acts"}
    assert decided_sentence(plain) == "allowed: scroll (acts, nothing consequential)"


def test_what_a_goal_grants_in_a_sentence() -> None:
    data = {"goal": "x", "grants": [{"text": 'delete of "Globex"'}], "withheld": ["submit"]}
    assert grants_sentence(data) == (
        'the goal allows without asking: delete of "Globex" (never: submit)'
    )
    assert "nothing consequential" in grants_sentence({"grants": []})
    assert sentence("grant.revoked", {"by": "console", "text": "delete"}) == (
        "revoked by console: delete"
    )
    assert sentence("tool.call", {}) is None


def test_the_chips_print_the_sentence() -> None:
    out = io.StringIO()
    printer = ChipPrinter(Console(file=out, width=200, color_system=None))
    printer(Event("policy.decided", {**ASKED, "sentence": decided_sentence(ASKED)}, run_id="r"))
    printer(Event("policy.grants", {"goal": "x", "grants": [{"text": "delete"}]}, run_id="r"))
    text = out.getvalue()
    assert '⚖ asked: activates "OK"' in text and "for the rest of the task" in text
    assert "⚖ the goal allows without asking: delete" in text
