"""GTK 4 popovers put where their own surface is on screen: one place for reads and for aim.

A GTK 4 popover (a menu button's menu, a popover of any widget) is a surface of its own (an
override-redirect X window), but GTK 4.8 reports its extents, and its contents', from its
anchor's origin or as if it lay inside its window: "Screen coordinates not supported, reported
positions will be wrong". A menu opening above a button at a window's bottom then lay below the
window: its lower items were judged off screen and dropped from the read; a drop-down's list
lay 26 px above where it shows, and a click by its rows' extents hit the row above.

The surfaces' true places are known apart from AT-SPI (the popup windows over the window, from
the window system). A node is taken for a misplaced popover by one of two signatures, and its
subtree's extents are moved by the difference:

* **at its anchor** — a popover role at its parent's origin (within :data:`SLACK` pixels) with
  the size of exactly one popup window showing elsewhere: moved to that window;
* **named GtkPopover** (GTK 4 names its plain popovers so) — moved to the popup window closest
  to it in size, within :data:`MISFIT` (:func:`shift_to`; the pointer aims at a popover's items
  by the same rule, :mod:`.aiming`).
"""

from __future__ import annotations

from collections.abc import Sequence

from deskpilot.desktop.base import Node, Rect

#: How far (px) a popover's size may differ from its surface's and its origin from its anchor's.
SLACK = 2
#: How far (width + height, px) a popup window's size may differ from a GtkPopover's.
MISFIT = 40
#: Roles GTK 4 gives popovers: GtkPopoverMenu is a ``menu``, GtkPopover a ``filler`` or panel.
POPOVER_ROLES = frozenset({"menu", "popup-menu", "filler", "panel", "window", "dialog"})
#: The name GTK 4 gives its plain popovers' nodes.
POPOVER_NAME = "GtkPopover"


def _near(a: int, b: int) -> bool:
    return abs(a - b) <= SLACK


def place_popovers(root: Node, popups: Sequence[Rect]) -> int:
    """Move the extents of each misplaced popover's subtree under ``root`` to the popup window
    it is drawn in (screen rectangles); returns how many were moved."""
    if not popups:
        return 0
    free = list(popups)
    moved = 0
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            rect = _surface(child, node, free)
            if rect is None:
                stack.append(child)
                continue
            b = child.bounds
            assert b is not None  # _surface matched its size
            _move(child, rect.x - b.x, rect.y - b.y)
            free.remove(rect)
            moved += 1
    for node in root.walk():
        if node.name != POPOVER_NAME or node.bounds is None or node.bounds.empty:
            continue
        dx, dy = shift_to(node.bounds, popups)
        if (dx, dy) != (0, 0):
            _move(node, dx, dy)
            moved += 1
    return moved


def shift_to(believed: Rect, popups: Sequence[Rect]) -> tuple[int, int]:
    """How far a GtkPopover believed at ``believed`` really is from there: to the popup window
    closest to it in size (within :data:`MISFIT`); (0, 0) when none is."""
    best: tuple[int, Rect] | None = None
    for rect in popups:
        misfit = abs(rect.width - believed.width) + abs(rect.height - believed.height)
        if misfit <= MISFIT and (best is None or misfit < best[0]):
            best = (misfit, rect)
    if best is None:
        return (0, 0)
    return (best[1].x - believed.x, best[1].y - believed.y)


def _move(node: Node, dx: int, dy: int) -> None:
    for n in node.walk():
        if n.bounds is not None:
            n.bounds = n.bounds.offset(dx, dy)


def _surface(node: Node, parent: Node, popups: Sequence[Rect]) -> Rect | None:
    """The popup window ``node`` is drawn in, when it is a popover placed at its anchor."""
    b, anchor = node.bounds, parent.bounds
    if node.role not in POPOVER_ROLES or b is None or b.empty or anchor is None:
        return None
    if not (_near(b.x, anchor.x) and _near(b.y, anchor.y)):
        return None
    same = [
        r
        for r in popups
        if _near(r.width, b.width)
        and _near(r.height, b.height)
        and not (_near(r.x, b.x) and _near(r.y, b.y))
    ]
    return same[0] if len(same) == 1 else None
