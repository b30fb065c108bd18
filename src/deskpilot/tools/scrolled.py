"""What a scroll brought into view: the lines of the read after it that the read before it
did not have (by their text, as IDs of lines that only moved stay the same)."""

from __future__ import annotations

import re

#: Lines listed at most as come into view.
SHOWN_LINES = 15
_ID = re.compile(r" @\S+$")
#: Lines that change with every scroll and are not content (a scroll bar's value).
MOVING = ("scrollbar ", "scroll-bar ")


def _text(line: str) -> str:
    return _ID.sub("", line.strip())


def came_into_view(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The lines of ``after`` (element ID → line) whose text no line of ``before`` had, in
    reading order; a last line says how many more there are."""
    seen = {_text(line) for line in before.values()}
    new = [
        line.strip()
        for line in after.values()
        if _text(line) not in seen and not line.strip().startswith(MOVING)
    ]
    if len(new) > SHOWN_LINES:
        return [*new[:SHOWN_LINES], f"… {len(new) - SHOWN_LINES} more (read the window)"]
    return new
