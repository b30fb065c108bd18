"""Session element records: the oldest are dropped first, and re-shown IDs are not old."""

from __future__ import annotations

import pytest

from deskpilot import session as session_mod
from deskpilot.session import ElementRecord, Session


def record(n: int) -> ElementRecord:
    return ElementRecord(":1.5", f"/p/{n}", "push-button", f"B{n}", "/p", 1, 1)


def test_ids_shown_again_survive_the_eviction_of_old_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(session_mod, "MAX_ELEMENTS", 3)
    s = Session()
    s.remember({"a": record(1), "b": record(2), "c": record(3)})
    s.remember({"a": record(1)})  # "a" is shown again: now the newest
    s.remember({"d": record(4)})
    assert list(s.elements) == ["c", "a", "d"]
