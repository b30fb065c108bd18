"""An open combo box's list as a person sees it: every item, the scrolled-away ones as "more".

A drop-down's list is a popup window of its own (GTK's menu, LibreOffice's list, a browser's
``<select>``), drawn over and often beyond the window it belongs to: judged by the window's
area, its lower items looked off-screen and were dropped, and a long list showed three of
sixty. Here the popup's own rectangle is its visible area; items outside it (scrolled out of
the list) are named on one ``more`` line, so the model knows they exist and can choose one by
name (``fill`` on the combo box) or scroll the list to it.
"""

from __future__ import annotations

from deskpilot.ax.roles import is_displayed
from deskpilot.desktop.base import Node, Rect

#: Roles of a combo box's popup.
POPUP_ROLES = frozenset({"menu", "list", "list-box", "window", "tree-table", "table"})
#: Roles of its items.
ITEM_ROLES = frozenset(
    {"menu-item", "check-menu-item", "radio-menu-item", "list-item", "option", "table-cell"}
)
#: Levels under a combo box searched for its popup.
POPUP_DEPTH = 6
#: Item names listed at most on a ``more`` line.
MORE_NAMES = 40


def open_popup(combo: Node) -> tuple[Node, Rect] | None:
    """The open popup under a combo box and its rectangle on screen, if it is open: a menu or
    list child (GTK 3, LibreOffice, Chromium), or one inside the popover it holds (GTK 4:
    combo › popover › … › list), at most a few levels down.

    A rectangle that holds none of the items that show is not where the list is drawn
    (Chromium gives a ``<select>``'s list the combo box's place, 11 pixels high): the items
    that show then tell it."""
    level = list(combo.children)
    for _depth in range(POPUP_DEPTH):
        for child in level:
            b = child.bounds
            if child.role in POPUP_ROLES and is_displayed(child) and b is not None and not b.empty:
                return child, _drawn(child, b)
        level = [g for c in level if c.role not in ITEM_ROLES for g in c.children]
    return None


def _drawn(popup: Node, rect: Rect) -> Rect:
    """Where the popup is drawn: its rectangle, unless none of the items that show is in it."""
    shown = [
        n.bounds
        for n in popup.walk()[1:]
        if n.role in ITEM_ROLES
        and "showing" in n.states
        and n.bounds is not None
        and not n.bounds.empty
    ]
    if shown and not any(r.intersects(rect) for r in shown):
        return _union(shown)
    return rect


def _union(rects: list[Rect]) -> Rect:
    left, top = min(r.x for r in rects), min(r.y for r in rects)
    right = max(r.x + r.width for r in rects)
    bottom = max(r.y + r.height for r in rects)
    return Rect(left, top, right - left, bottom - top)


def scrolled_items(popup: Node, area: Rect) -> list[Node]:
    """The popup's items outside its visible rectangle (scrolled out of the list), in order;
    the items of closed submenus are not counted."""
    out: list[Node] = []
    stack = list(reversed(popup.children))
    while stack:
        node = stack.pop()
        if node.role in ITEM_ROLES:
            b = node.bounds
            away = b is None or b.empty or not b.intersects(area) or not is_displayed(node)
            if away and node.name.strip():
                out.append(node)
            continue
        if node.role == "menu" and "showing" not in node.states:
            continue  # a closed submenu ("C - D")
        stack.extend(reversed(node.children))
    return out


def more_line(items: list[Node]) -> str:
    """``… 57 more items scrolled out of the list: "Option 4", … (fill the combo box with an
    item's name to choose it)``."""
    names = ", ".join(f'"{n.name.strip()}"' for n in items[:MORE_NAMES])
    rest = f", … ({len(items) - MORE_NAMES} more)" if len(items) > MORE_NAMES else ""
    return (
        f"… {len(items)} more items scrolled out of the list: {names}{rest} (fill the combo "
        "box with an item's name to choose it, or scroll the list)"
    )
