"""How typing into a named element is cut up: the first keys one at a time, then chunks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deskpilot.desktop.skills.keyed import CHUNK, HEAD, pieces


def test_a_short_text_goes_one_key_at_a_time() -> None:
    assert pieces("12ab") == ["1", "2", "a", "b"]
    assert pieces("") == []


def test_after_the_first_keys_the_text_goes_in_chunks() -> None:
    got = pieces("x" * (HEAD + 2 * CHUNK + 1))
    assert got[:HEAD] == ["x"] * HEAD
    assert [len(p) for p in got[HEAD:]] == [CHUNK, CHUNK, 1]


@given(st.text(max_size=10 * CHUNK))
def test_the_pieces_are_the_text(text: str) -> None:
    assert "".join(pieces(text)) == text
