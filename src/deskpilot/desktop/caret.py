"""Where the caret is in a text, and what is selected there: what a task editing text needs.

Read from the focused element's ``Text`` interface (``CaretOffset``, ``GetSelection``): the
caret as a line and column (a multi-line view: mousepad, a text area) or an offset (one
paragraph of a Writer document), and the selected text, cut to a length a model can read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Characters of a selection shown at most; characters read before the caret at most (to
#: count lines).
SHOWN_SELECTION = 200
LINE_SCAN = 200_000


@dataclass(frozen=True)
class Caret:
    """The caret in one element's text, and its selections."""

    key: tuple[str, str]
    offset: int
    line: int | None = None  # 1-based; None when the text before it was too long to scan
    column: int | None = None  # 1-based
    length: int = 0  # characters in the element's text
    selections: list[tuple[int, int, str]] = field(default_factory=list)  # start, end, text


def line_and_column(before: str) -> tuple[int, int]:
    """The 1-based line and column of a caret placed after ``before``."""
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def describe_caret(caret: Caret, element_id: str | None) -> list[str]:
    """Header lines of a read: ``Caret: …`` and ``Selected: …``."""
    where = f" in @{element_id}" if element_id else ""
    if caret.line is not None and caret.column is not None and caret.line > 1:
        at = f"line {caret.line}, column {caret.column}"
    elif caret.column is not None:
        at = f"column {caret.column}" if caret.length else "an empty text"
    else:
        at = f"character {caret.offset + 1}"
    lines = [f"Caret: {at}{where} (offset {caret.offset} of {caret.length})"]
    for start, end, text in caret.selections:
        cut = text if len(text) <= SHOWN_SELECTION else text[:SHOWN_SELECTION] + "…"
        lines.append(f"Selected{where}: {cut!r} (offsets {start}–{end}, {end - start} characters)")
    return lines
