"""What changed between two reads of a window: new (+), gone (-), changed (~) and moved (↕)
lines.

Lines are matched by element identity (the element ID of the node behind each line, also for
lines shown without an ``@ID``), so a renamed or re-valued element shows as changed, not as
one line gone and another new. A line whose place among the others changed (a sorted list, a
dragged item) is moved — also when the app made a new element for it (the same text gone in
one place and new in another).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

_ID_SUFFIX = re.compile(r" @\S+$")


@dataclass
class Diff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)  # (old, new)
    changed_keys: list[str] = field(default_factory=list)  # the element of each change
    moved: list[tuple[str, str]] = field(default_factory=list)  # (line, the line now before it)
    ticking: int = 0  # ticking texts left out (see deskpilot.ax.ticking)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.moved)

    def lines(self) -> list[str]:
        out = [f"+ {line}" for line in self.added]
        out += [f"- {line}" for line in self.removed]
        out += [f"~ {new}  (was: {_ID_SUFFIX.sub('', old)})" for old, new in self.changed]
        out += [f"↕ {line}  ({_where(after)})" for line, after in self.moved]
        return out

    def summary(self, limit: int = 3, width: int = 320) -> str:
        """One line for an action's result: the first few changes and how many more."""
        if self.empty:
            return "No visible effect: nothing in the window changed." + (
                f" ({self.ticking} ticking text{'s' if self.ticking > 1 else ''} left out)"
                if self.ticking
                else ""
            )
        items = [
            f"~ {_ID_SUFFIX.sub('', new).strip()}{_id_of(new)} (was: {_brief(old, new)})"
            for old, new in self.changed
        ]
        items += [f"↕ {line.strip()} ({_where(after)})" for line, after in self.moved]
        items += [f"+ {line.strip()}" for line in self.added]
        items += [f"- {_ID_SUFFIX.sub('', line).strip()}" for line in self.removed]
        shown = items[:limit]
        more = len(items) - len(shown)
        text = "Changes: " + "; ".join(shown)
        if more:
            text += f"; and {more} more (read_screen_ax to see them)"
        if self.ticking:
            text += f" ({self.ticking} ticking text{'s' if self.ticking > 1 else ''} left out)"
        if len(text) > width:
            text = text[: width - 1] + "…"
        return text


def _where(after: str) -> str:
    """Where a moved line is now: after which line."""
    if not after:
        return "moved: now first"
    plain = _ID_SUFFIX.sub("", after).strip()
    return f"moved: now after {plain if len(plain) <= 60 else plain[:59] + '…'}"


def _id_of(line: str) -> str:
    m = _ID_SUFFIX.search(line)
    return m.group(0) if m else ""


_VALUE = re.compile(r' = ("(?:[^"\\]|\\.)*")')
_STATES = re.compile(r" \[([^\]]*)\](?: @\S+)?$")


def _brief(old: str, new: str) -> str:
    """What ``old`` was, in the part that differs from ``new``: its value, else its states."""
    ov, nv = _VALUE.search(old), _VALUE.search(new)
    if (ov and ov.group(1)) != (nv and nv.group(1)):
        return ov.group(1) if ov else "no value"
    os_, ns = _STATES.search(old), _STATES.search(new)
    if (os_ and os_.group(1)) != (ns and ns.group(1)):
        return f"[{os_.group(1)}]" if os_ else "no states"
    plain = _ID_SUFFIX.sub("", old).strip()
    return plain if len(plain) <= 80 else plain[:79] + "…"


def diff(before: dict[str, str], after: dict[str, str]) -> Diff:
    """Compare two reads given as {element id: line}, in reading order."""
    d = Diff()
    for key, line in after.items():
        if key not in before:
            d.added.append(line)
        elif before[key] != line:
            d.changed.append((before[key], line))
            d.changed_keys.append(key)
    d.removed = [line for key, line in before.items() if key not in after]
    # an element made anew (new ID, same text) where the same text is gone: the same line,
    # not one gone and one new; it counts as moved only if its place among the others changed
    gone: dict[str, str] = {}
    for key in before:
        if key not in after:
            gone.setdefault(_plain(before[key]), key)
    same: dict[str, str] = {}  # a new key → the old key of the same text
    for key, line in after.items():
        if key not in before and (old := gone.pop(_plain(line), None)) is not None:
            same[key] = old
            d.added.remove(line)
            d.removed.remove(before[old])
    # the same element in another place among the others
    was = [k for k in before if k in after or k in same.values()]
    now = [same.get(k, k) for k in after if k in before or k in same]
    if was != now:
        matcher = difflib.SequenceMatcher(None, was, now, autojunk=False)
        stayed = {k for a, _b, size in matcher.get_matching_blocks() for k in was[a : a + size]}
        order = list(after)
        back = {v: k for k, v in same.items()}
        for old in now:
            if old not in stayed:
                key = back.get(old, old)
                d.moved.append((after[key], _before_it(order, after, key)))
    return d


def _plain(line: str) -> str:
    return _ID_SUFFIX.sub("", line).strip()


def _before_it(order: list[str], lines: dict[str, str], key: str) -> str:
    at = order.index(key)
    return lines[order[at - 1]] if at > 0 else ""
