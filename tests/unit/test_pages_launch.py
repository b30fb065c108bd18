"""Loading again the first pages that ran without the rules (pages/launch.py), on stand-in
pages; the real race is in tests/desktop/test_pages_live.py."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from deskpilot.pages import launch

pytestmark = pytest.mark.asyncio


class StandIn:
    """A page whose runtime appears after ``ready_after`` loads (None: never)."""

    def __init__(self, url: str, ready_after: int | None) -> None:
        self.url = url
        self.ready_after = ready_after
        self.reloads = 0

    async def evaluate(self, expression: str) -> Any:
        assert expression == launch.RULED
        return self.ready_after is not None and self.reloads >= self.ready_after

    async def reload(self, **_kw: Any) -> None:
        self.reloads += 1


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "FIRST_WAIT_S", 0.0)


async def repair(*pages: StandIn) -> int:
    return await launch._repair(list(pages), timeout=30)  # type: ignore[arg-type]


async def test_a_page_that_had_its_rules_is_never_loaded_again() -> None:
    page = StandIn("https://example.com/", ready_after=0)
    assert await repair(page) == 0 and page.reloads == 0


async def test_a_page_that_missed_them_is_loaded_again_until_it_has_them() -> None:
    had, missed, late = (StandIn(f"https://example.com/{n}", r) for n, r in enumerate((0, 1, 3)))
    assert await repair(had, missed, late) == 4
    assert (had.reloads, missed.reloads, late.reloads) == (0, 1, 3)


async def test_loads_are_capped_and_a_page_left_without_rules_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    page = StandIn("https://example.com/never", ready_after=None)
    with caplog.at_level(logging.WARNING, logger=launch.log.name):
        assert await repair(page) == launch.MAX_RELOADS
    assert page.reloads == launch.MAX_RELOADS
    assert "https://example.com/never runs without the page rules" in caplog.text


async def test_the_store_where_no_extension_runs_is_never_loaded_again() -> None:
    page = StandIn("https://chromewebstore.google.com/detail/x", ready_after=None)
    assert await repair(page) == 0 and page.reloads == 0
