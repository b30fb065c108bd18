"""Dropping lines that add nothing to a read, once the lines are chosen.

A text line that only repeats the name of the field next to it (its label) goes; a named group
whose first element is an unnamed widget gives the widget its name and goes; structure lines
with nothing left under them go, except a named container with nothing inside at all: that is a
display, and its name (a calculator's "84") reads as text.
"""

from __future__ import annotations

from dataclasses import dataclass

from deskpilot.ax.roles import ALWAYS_STRUCTURAL, STRUCTURAL
from deskpilot.desktop.base import Node

#: Container roles that toolkits also give to a widget showing a value (Qt's QFrame-based
#: displays read as "frame", others as "panel" or "section"): named, with nothing inside, the
#: name is the value shown. Lists, tables, menus and toolbars are left out: empty, they are
#: empty.
CARRIERS = frozenset(
    {"frame", "panel", "grouping", "section", "internal-frame", "window", "landmark", "form"}
)


@dataclass
class Line:
    depth: int
    node: Node
    role: str
    name: str
    value: str | None
    states: list[str]
    has_id: bool
    fixed: bool = False  # never pruned (the browser line, a sentence)
    #: a line written as is (a table's rows: ax/table.py); "{id}" in it is the ID of ``ref``
    raw: str = ""
    ref: Node | None = None


def prune(lines: list[Line]) -> list[Line]:
    """Drop lines that add nothing: a text line that only repeats the name of the field next
    to it (its label), and structure lines with nothing under them."""
    keep = [True] * len(lines)
    for i, ln in enumerate(lines):
        if ln.has_id or ln.role not in ("text", "caption") or ln.value:
            continue
        for j in (i - 1, i + 1):
            if 0 <= j < len(lines):
                other = lines[j]
                if other.has_id and other.depth == ln.depth and other.name == ln.name:
                    keep[i] = False
    for i, ln in enumerate(lines):
        # a named group whose first element is an unnamed widget: the widget takes the name
        # (toolbar "Styles" > toggle becomes toggle "Styles"); the group line goes
        if ln.has_id or ln.fixed or ln.node.role not in STRUCTURAL:
            continue
        if ln.node.role in ALWAYS_STRUCTURAL:
            continue
        end = _subtree_end(lines, i)
        if i + 1 < end and lines[i + 1].has_id and not lines[i + 1].name and ln.name:
            lines[i + 1].name = ln.name
            keep[i] = False
            for j in range(i + 1, end):
                lines[j].depth -= 1
    for i in range(len(lines) - 1, -1, -1):
        ln = lines[i]
        if not keep[i] or ln.has_id or ln.fixed or ln.node.role not in STRUCTURAL:
            continue
        if ln.node.role in ALWAYS_STRUCTURAL:
            continue
        has_child = any(
            keep[j] and lines[j].depth > ln.depth for j in range(i + 1, _subtree_end(lines, i))
        )
        if not has_child and ln.name and not ln.node.children and ln.node.role in CARRIERS:
            # a named container with nothing inside is a display: its name is what it shows
            # (a Qt calculator's display is a frame named "84")
            ln.role, ln.fixed = "text", True
        elif not has_child:
            keep[i] = False
    return [ln for ln, k in zip(lines, keep, strict=True) if k]


def _subtree_end(lines: list[Line], i: int) -> int:
    depth = lines[i].depth
    j = i + 1
    while j < len(lines) and lines[j].depth > depth:
        j += 1
    return j
