"""Bars that hide until the pointer moves: found in a snapshot, and where a hover shows them.

A media player's transport bar (Parole's, Celluloid's: a GTK 3 ``GtkRevealer``) slides away
when the pointer rests and comes back when it moves over the window. Hidden, it is a showing
container folded to a line (one pixel high or wide) whose content is still *visible* but not
*showing*, off screen: the read left its controls out, and the model had no way to know they
existed. :func:`hidden_bars` finds such folds; :func:`hover_point` is where a person's pointer
would move to bring the bar back (on its line, inside the window and its parent's area); a read
that does not bring it back lists its controls marked ``hidden`` (:func:`hidden_controls`): they
exist and act by ID (their AT-SPI actions), though not on screen.
"""

from __future__ import annotations

from deskpilot.ax.roles import INTERACTIVE, clean_name
from deskpilot.desktop.base import Node, Rect

#: A folded bar is at most this thick (px) ...
FOLDED = 2
#: ... and at least this long.
BAR_LENGTH = 40


def is_folded_bar(node: Node) -> bool:
    """Whether ``node`` is a bar folded away with a named control hidden inside."""
    return _folded(node) and any(_hidden_controls(c) for c in node.children)


def hidden_controls(bar: Node) -> list[Node]:
    """The named controls a folded bar holds, in order (what a read lists as ``[hidden]``)."""
    return [
        n
        for n in bar.walk()[1:]
        if n.role in INTERACTIVE and clean_name(n.name or n.description) and "visible" in n.states
    ]


def hidden_bars(root: Node) -> list[tuple[Node, Node]]:
    """(bar, its parent) for each folded container whose hidden content holds a named control."""
    found: list[tuple[Node, Node]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            if is_folded_bar(child):
                found.append((child, node))
            else:
                stack.append(child)
    return found


def _folded(node: Node) -> bool:
    b = node.bounds
    if "showing" not in node.states or b is None:
        return False
    return (b.height <= FOLDED and b.width >= BAR_LENGTH) or (
        b.width <= FOLDED and b.height >= BAR_LENGTH
    )


def _hidden_controls(node: Node) -> bool:
    """Whether ``node`` is visible but not showing and holds a named control."""
    if "visible" not in node.states or "showing" in node.states:
        return False
    return any(
        n.role in INTERACTIVE and clean_name(n.name or n.description) and "visible" in n.states
        for n in node.walk()
    )


def hover_point(bar: Node, parent: Node, window: Rect) -> tuple[int, int] | None:
    """The point on a folded bar's line that lies inside the window and its parent's area (a
    bar folded at a window's bottom edge lies one pixel below it), else None."""
    b = bar.bounds
    if b is None:
        return None
    area = window
    if parent.bounds is not None and not parent.bounds.empty:
        area = _overlap(area, parent.bounds) or area
    x = min(max(b.x + b.width // 2, area.x + 1), area.x + area.width - 2)
    y = min(max(b.y + b.height // 2, area.y + 1), area.y + area.height - 2)
    return (x, y) if area.contains(x, y) else None


def _overlap(a: Rect, b: Rect) -> Rect | None:
    x0, y0 = max(a.x, b.x), max(a.y, b.y)
    x1, y1 = min(a.x + a.width, b.x + b.width), min(a.y + a.height, b.y + b.height)
    return Rect(x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None
