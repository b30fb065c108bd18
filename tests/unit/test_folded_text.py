"""A paragraph read while the page replaces a span's text: the text shown, never a hole."""

from __future__ import annotations

from deskpilot.ax.page import sentence
from deskpilot.desktop.base import Node
from tests.unit.test_actionable import node, static


def clock(*kids: Node) -> Node:
    return node("section", "", *kids, text="00:00:12.5", actions=(), at=(90, 100, 70, 18))


def para(span: Node) -> Node:
    return node("paragraph", "", static("The time is ", at=(10, 100, 80, 18)), span, actions=())


def test_a_span_whose_text_node_is_being_replaced_reads_by_its_own_text() -> None:
    # Chromium, measured on a clock ticking every 100 ms (3-4 reads in 60): the span's text
    # node gone from the tree, or answering role "invalid", the new one not in it yet; the
    # span's own text is the new time
    assert sentence(para(clock())) == "The time is 00:00:12.5"
    gone = node("invalid", "", actions=())
    assert sentence(para(clock(gone))) == "The time is 00:00:12.5"


def test_the_spans_content_is_what_is_shown_when_it_says_anything() -> None:
    shown = static("00:00:12.0", at=(90, 100, 70, 18))
    assert sentence(para(clock(shown))) == "The time is 00:00:12.0"
