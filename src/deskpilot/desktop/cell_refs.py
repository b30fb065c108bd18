"""Names of table cells: spreadsheet addresses ("B7") and row/column references ("R7C2").

A spreadsheet names its cells by address (Calc's cell objects are named "A1", "B7"…); any
table's cell can be named by its row and column, 1-based, as ``R7C2``. Both forms name cells
after a table's element ID in the tools (``@<tableID>:B7``) and ranges (``A1:F20``).
"""

from __future__ import annotations

import re

Place = tuple[int, int]  # (row, column), 0-based

_A1 = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]{1,7})$")
_R1C1 = re.compile(r"^[Rr]([0-9]{1,7})[Cc]([0-9]{1,5})$")


def column_letters(col: int) -> str:
    """Spreadsheet column letters: 0 → A, 25 → Z, 26 → AA."""
    out = ""
    col += 1
    while col:
        col, rest = divmod(col - 1, 26)
        out = chr(65 + rest) + out
    return out


def address(row: int, col: int) -> str:
    """A spreadsheet address: (0, 0) → "A1"."""
    return f"{column_letters(col)}{row + 1}"


def parse_cell(text: str) -> Place | None:
    """(row, column) of "B7", "$B$7" or "R7C2"; None if it is none of them."""
    text = text.strip()
    if m := _R1C1.match(text):
        row, col = int(m.group(1)) - 1, int(m.group(2)) - 1
        return (row, col) if row >= 0 and col >= 0 else None
    if m := _A1.match(text):
        col = 0
        for ch in m.group(1).upper():
            col = col * 26 + ord(ch) - 64
        row = int(m.group(2)) - 1
        return (row, col - 1) if row >= 0 else None
    return None


def parse_range(text: str) -> tuple[Place, Place] | None:
    """The top-left and bottom-right corners of "A1:F20", "R1C1:R20C6" or of one cell."""
    first, sep, last = text.partition(":")
    a = parse_cell(first)
    b = parse_cell(last) if sep else a
    if a is None or b is None:
        return None
    return (min(a[0], b[0]), min(a[1], b[1])), (max(a[0], b[0]), max(a[1], b[1]))
