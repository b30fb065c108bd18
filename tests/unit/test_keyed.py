"""How typing into a named element is cut up: one key at a time, chunks for a long text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deskpilot.desktop.skills.keyed import CHUNK, PER_KEY, pieces


def test_a_short_text_goes_one_key_at_a_time() -> None:
    assert pieces("12ab") == ["1", "2", "a", "b"]
    assert pieces("") == []


def test_a_long_text_goes_in_chunks() -> None:
    text = "x" * (PER_KEY + 1)
    got = pieces(text)
    assert all(len(p) == CHUNK for p in got[:-1]) and 0 < len(got[-1]) <= CHUNK


@given(st.text(max_size=3 * PER_KEY))
def test_the_pieces_are_the_text(text: str) -> None:
    assert "".join(pieces(text)) == text
