"""Texts that tick (a clock, a countdown) are not news in every diff.

A line without an ID whose change, from one read to the next, is only in its digits
(``00:00:05.7`` → ``00:00:09.1``, ``12 s left`` → ``9 s left``) *ticks*. The first time it
ticks it shows in the diff as any change; when it ticks again in the next diff of the same
window, it is left out (and counted), so a timer does not fill every action's result.
"""

from __future__ import annotations

import re

from deskpilot.ax.diff import Diff

_DIGITS = re.compile(r"\d")
_HAS_ID = re.compile(r" @\S+$")


def ticks(old: str, new: str) -> bool:
    """Whether a line changed only in its digits (and is no element with an ID)."""
    if _HAS_ID.search(old) or _HAS_ID.search(new):
        return False
    return old != new and _DIGITS.sub("0", old) == _DIGITS.sub("0", new)


def quiet(d: Diff, ticked_before: set[str]) -> tuple[Diff, set[str]]:
    """``d`` without the lines that ticked in this diff and the one before; and the lines that
    ticked in this one (for the next)."""
    now = {k for k, (old, new) in zip(d.changed_keys, d.changed, strict=True) if ticks(old, new)}
    left_out = now & ticked_before
    if left_out:
        kept = [(k, c) for k, c in zip(d.changed_keys, d.changed, strict=True) if k not in left_out]
        d.changed = [c for _k, c in kept]
        d.changed_keys = [k for k, _c in kept]
        d.ticking = len(left_out)
    return d, now
