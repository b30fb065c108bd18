"""GTK 4 popovers put where their own surface is on screen.

A GTK 4 popover (a menu button's menu, a popover of any widget) is a surface of its own (an
override-redirect X window), but GTK 4.8 reports its extents, and its contents', from its
anchor's origin: "Screen coordinates not supported, reported positions will be wrong". The
popover node sits at its anchor's place with its surface's size, and each item at the anchor's
origin plus where it lies in the popover. A menu opening above a button at a window's bottom
then lies below the window: its lower items were judged off screen and dropped from the read,
and an item the popover scrolls away could be judged visible.

The surfaces' true places are known apart from AT-SPI (the popup windows over the window, from
the window system). A node is taken for a misplaced popover only by that signature: it has the
size of a popup window showing elsewhere (within :data:`SLACK` pixels), and its origin is its
parent's (its anchor's). Its subtree's extents are then moved by the difference.
"""

from __future__ import annotations

from collections.abc import Sequence

from deskpilot.desktop.base import Node, Rect

#: How far (px) a popover's size may differ from its surface's and its origin from its anchor's.
SLACK = 2
#: Roles GTK 4 gives popovers: GtkPopoverMenu is a ``menu``, GtkPopover a ``filler`` or panel.
POPOVER_ROLES = frozenset({"menu", "popup-menu", "filler", "panel", "window", "dialog"})


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
            dx, dy = rect.x - b.x, rect.y - b.y
            for n in child.walk():
                if n.bounds is not None:
                    n.bounds = n.bounds.offset(dx, dy)
            free.remove(rect)
            moved += 1
    return moved


def _surface(node: Node, parent: Node, popups: Sequence[Rect]) -> Rect | None:
    """The popup window ``node`` is drawn in, when it is a popover placed at its anchor."""
    b, anchor = node.bounds, parent.bounds
    if node.role not in POPOVER_ROLES or b is None or b.empty or anchor is None:
        return None
    if not (_near(b.x, anchor.x) and _near(b.y, anchor.y)):
        return None
    same = [
        r for r in popups
        if _near(r.width, b.width) and _near(r.height, b.height)
        and not (_near(r.x, b.x) and _near(r.y, b.y))
    ]  # fmt: skip
    return same[0] if len(same) == 1 else None
