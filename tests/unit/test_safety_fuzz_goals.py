"""Safety suite — property fuzzing of the goal reader (deskpilot.policy.goals).

A goal is whatever a person typed: any text, any length, quotes left open, emoji, right-to-left
marks, other scripts. Reading one never fails, and what it grants keeps its promises whatever
the text: an act the goal forbids is granted by no grant, a password granted is text of the
goal, and no grant comes from a goal with no verb of an act.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskpilot.policy.goals import derive, explain
from tests.safety_figures import Figures
from tests.unit.test_safety_fuzz import Counter, fuzz

pytestmark = pytest.mark.safety

WORDS = st.sampled_from(
    [
        "send",
        "submit",
        "delete",
        "remove",
        "pay",
        "buy",
        "transfer",
        "post",
        "share",
        "reply",
        "log in",
        "sign up",
        "the",
        "form",
        "Ann",
        "ann@example.test",
        "order",
        "Globex",
        "all",
        "it",
        "and",
        "then",
        "but",
        "don't",
        "not",
        "without",
        "please",
        "to",
        "with",
        "€",
        "25",
        "'",
        '"',
        "“",
        "”",
        "«",
        "»",
        ",",
        ".",
        ":",
        ";",
        "-",
        "(",
        ")",
        "\n",
        "\u202e",
        "🙂",
        "Löschen",
        "envoie",
        "nicht",
        "pas",
        "password",
        "Tr0ub4dor&3",
        "#1042",
        "x.txt",
        "click",
        "Pay now",
        "how",
        "can I",
        "?",
        "DE02120300000000202051",
    ]
)
#: words and signs that name no act: a goal made of them alone grants nothing
NO_ACT = st.sampled_from(
    [
        "the",
        "form",
        "Ann",
        "ann@example.test",
        "invoice",
        "Globex",
        "all",
        "it",
        "and",
        "then",
        "please",
        "to",
        "with",
        "€",
        "25",
        "'",
        '"',
        ",",
        ".",
        "?",
        "\n",
        "🙂",
        "#1042",
        "x.txt",
        "yesterday",
        "status",
        "lunch",
        "the",
        "table",
        "Monday",
        "the Globex order",
        "my account",
        "price",
        "quietly",
        "now",
        "Tr0ub4dor&3",
    ]
)
GOALS = st.one_of(
    st.text(max_size=200),
    st.lists(WORDS, max_size=40).map(" ".join),
    st.lists(st.one_of(WORDS, st.text(max_size=8)), max_size=30).map("".join),
)


def test_any_goal_is_read_and_keeps_its_promises(figures: Figures) -> None:
    count = Counter()

    @fuzz(figures)
    @given(goal=GOALS, forbidden=st.sampled_from(["submit", "delete", "pay", "send"]))
    def check(goal: str, forbidden: str) -> None:
        count()
        derived = derive(goal)
        for line in explain(goal):
            assert isinstance(line, str)
        for grant in derived.grants:
            assert grant.acts and not set(grant.acts) & set(derived.withheld)
            for secret in grant.secrets:
                assert secret in goal
        told = derive(f"{goal}. Do not {forbidden} anything.")
        acts = {"submit": "submit", "delete": "delete", "pay": "pay", "send": "submit"}
        assert not any(acts[forbidden] in g.acts for g in told.grants), told

    check()
    figures.fuzzed("goals (derive, explain)", examples=count.n)


def test_a_goal_that_names_no_act_grants_nothing_whatever_else_it_says(figures: Figures) -> None:
    count = Counter()

    @fuzz(figures)
    @given(goal=st.lists(st.one_of(NO_ACT, st.sampled_from(["", " "])), max_size=40).map(" ".join))
    def check(goal: str) -> None:
        count()
        assert not derive(goal).grants, goal

    check()
    figures.fuzzed("goals without an act", examples=count.n)
