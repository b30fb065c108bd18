"""Bars folded away until the pointer moves, found in a snapshot (ax/revealers.py)."""

from __future__ import annotations

import re

from deskpilot.ax.render import Renderer
from deskpilot.ax.revealers import hidden_bars, hover_point
from deskpilot.desktop.base import Node, Rect

SHOWING = frozenset({"showing", "visible"})
HIDDEN = frozenset({"visible", "enabled", "sensitive"})
OFF = -2147483648


def node(role: str, bounds: Rect, states: frozenset[str], *kids: Node, name: str = "") -> Node:
    return Node(
        key=("b", f"/{role}{name}{bounds}"),
        role=role,
        name=name,
        states=states,
        bounds=bounds,
        children=list(kids),
    )


def player(fold: Rect, content_states: frozenset[str] = HIDDEN) -> tuple[Node, Node]:
    play = node("push-button", Rect(OFF, OFF, 62, 34), content_states, name="Play")
    bar = node(
        "panel", fold, SHOWING, node("filler", Rect(OFF, OFF, 468, 34), content_states, play)
    )
    area = node("filler", Rect(799, 20, 480, 320), SHOWING, bar)
    return node("frame", Rect(798, 0, 482, 345), SHOWING, area), bar


def test_a_bar_folded_to_a_line_with_hidden_controls_is_found() -> None:
    root, bar = player(Rect(799, 340, 480, 1))
    found = hidden_bars(root)
    assert [b for b, _ in found] == [bar]
    # its line lies one pixel below the window: the hover goes just inside it
    assert hover_point(bar, found[0][1], Rect(799, 20, 480, 320)) == (1039, 338)


def test_an_open_bar_or_a_line_without_hidden_controls_is_not() -> None:
    assert hidden_bars(player(Rect(799, 300, 480, 40))[0]) == []  # open: not folded
    assert hidden_bars(player(Rect(799, 340, 480, 1), SHOWING)[0]) == []  # content shows
    assert hidden_bars(player(Rect(799, 340, 20, 1))[0]) == []  # too short for a bar
    sep = node("separator", Rect(799, 200, 480, 1), SHOWING)
    assert hidden_bars(node("frame", Rect(0, 0, 500, 400), SHOWING, sep)) == []


def test_a_read_that_did_not_bring_the_bar_back_lists_its_controls_as_hidden() -> None:
    root, _bar = player(Rect(799, 340, 480, 1))
    text = Renderer(Rect(799, 20, 480, 320)).render(root).text
    assert re.fullmatch(r'button "Play" \[hidden\] @\S+', text.strip()), text
