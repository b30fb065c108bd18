"""Whether an area's picture shows its content moved: scrolled, as a person would see it.

A scroll moves what an area shows by some rows (or columns): the rows of the picture before are
found again in the picture after, all at one offset. A change in place — a ticking clock, a
blinking caret, a spinner — redraws a few rows where they are and moves none, so it is not a
move. Only rows that occur once in each picture vote (blank rows match anywhere); the offset
with most votes wins when it has enough of them and more than "not moved".
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

#: Distinct rows that must agree on an offset for the content to count as moved.
MIN_VOTES = 6


def content_offset(before: Image.Image, after: Image.Image, *, vertical: bool = True) -> int:
    """By how many pixels the pictures' content moved (rows for ``vertical``, else columns):
    > 0 down or right, 0 when it did not move (or the pictures cannot be compared)."""
    if before.size != after.size or min(before.size) <= 0:
        return 0
    if not vertical:
        from PIL import Image as PILImage

        before = before.transpose(PILImage.Transpose.TRANSPOSE)
        after = after.transpose(PILImage.Transpose.TRANSPOSE)
    old, new = _unique_rows(before), _unique_rows(after)
    votes = Counter(new[row] - i for row, i in old.items() if row in new)
    if not votes:
        return 0
    offset, count = votes.most_common(1)[0]
    if offset == 0 or count < MIN_VOTES or count <= votes.get(0, 0):
        return 0
    return offset


def _unique_rows(img: Image.Image) -> dict[bytes, int]:
    """Each row that occurs once in the picture, with its index."""
    rgb = img.convert("RGB")
    width = rgb.size[0] * 3
    data = rgb.tobytes()
    seen: dict[bytes, int] = {}
    repeated: set[bytes] = set()
    for i in range(rgb.size[1]):
        row = data[i * width : (i + 1) * width]
        if row in seen:
            repeated.add(row)
        else:
            seen[row] = i
    return {row: i for row, i in seen.items() if row not in repeated}
