"""The argument types the page tools share (tab, pane, URL pattern lists) and their parsing."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from deskpilot.errors import InvalidArguments
from deskpilot.pages.patterns import parse_patterns

TabArg = Annotated[
    int | None,
    Field(
        description="Tab id (from open_temp_pane or an earlier result); default: the tab the "
        "user sees in the agent browser."
    ),
]
PatternList = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=2048)]] | None,
    Field(
        max_length=50,
        description="URL patterns: * matches any string (the empty one too); "
        "a pattern without * is one exact URL; e.g. https://example.com/blog/*",
    ),
]
ExcludeList = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=2048)]] | None,
    Field(max_length=50, description="URL patterns that exclude (exclude wins over include)."),
]


def patterns_of(include: list[str] | None, exclude: list[str] | None) -> tuple[Any, Any]:
    return parse_patterns(include, "include"), parse_patterns(exclude, "exclude")


PaneArg = Annotated[
    str,
    Field(
        min_length=2,
        max_length=40,
        description="The pane id open_temp_pane returned, e.g. css-1234.",
    ),
]


def parse_pane(pane: str) -> tuple[str, int | None]:
    """``css-N``/``js-N`` (the pane of tab N), or ``css``/``js`` (the current tab's)."""
    kind, _, tab = pane.strip().partition("-")
    if kind not in ("css", "js") or not (tab.isdigit() or tab == ""):
        raise InvalidArguments(
            f"pane {pane!r} is not a pane id: use the pane_id open_temp_pane returned "
            "(css-N or js-N), or css / js for the current tab's pane"
        )
    return kind, int(tab) if tab else None
