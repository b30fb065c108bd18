"""GTK 4 popovers moved from their anchor's place to their own surface (desktop/skills/popovers)."""

from __future__ import annotations

from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.skills.popovers import place_popovers, shift_to


def node(role: str, bounds: Rect | None, *children: Node) -> Node:
    return Node(
        key=("bus", f"/{role}/{id(children)}"), role=role, bounds=bounds, children=list(children)
    )


def menu_tree() -> tuple[Node, Node, Node]:
    """A window, a menu button at its bottom, and the button's menu as GTK 4.8 reports it:
    at the button's origin, with its surface's size, an item 30 px down inside it."""
    item = node("menu-item", Rect(393, 242, 46, 30))
    menu = node("menu", Rect(373, 234, 88, 210), item)
    button = node("push-button", Rect(373, 234, 36, 34), menu)
    return node("frame", Rect(1, 20, 420, 260), button), menu, item


def test_a_popover_at_its_anchor_moves_to_the_popup_window_of_its_size() -> None:
    root, menu, item = menu_tree()
    moved = place_popovers(root, [Rect(600, 0, 20, 20), Rect(347, 28, 88, 210)])
    assert moved == 1
    assert menu.bounds == Rect(347, 28, 88, 210)
    assert item.bounds == Rect(367, 36, 46, 30)  # the same place inside it


def test_nothing_moves_without_a_popup_of_its_size_or_when_it_is_already_there() -> None:
    root, menu, item = menu_tree()
    assert place_popovers(root, []) == 0
    assert place_popovers(root, [Rect(347, 28, 300, 210)]) == 0  # another size
    assert place_popovers(root, [Rect(373, 234, 88, 210)]) == 0  # already where it shows
    assert menu.bounds == Rect(373, 234, 88, 210) and item.bounds == Rect(393, 242, 46, 30)


def test_a_node_away_from_its_parents_origin_is_not_taken_for_a_popover() -> None:
    item = node("menu-item", Rect(393, 242, 46, 30))
    panel = node("panel", Rect(380, 240, 88, 210), item)  # its own place, not its anchor's
    root = node("frame", Rect(1, 20, 420, 260), node("push-button", Rect(373, 234, 36, 34), panel))
    assert place_popovers(root, [Rect(347, 28, 88, 210)]) == 0
    assert panel.bounds == Rect(380, 240, 88, 210)


def test_two_popups_of_the_same_size_leave_it_where_it_is() -> None:
    root, menu, _item = menu_tree()
    assert place_popovers(root, [Rect(347, 28, 88, 210), Rect(10, 10, 88, 210)]) == 0
    assert menu.bounds == Rect(373, 234, 88, 210)


def test_a_gtk_popover_moves_to_the_popup_window_closest_in_size() -> None:
    # a drop-down's list (GtkPopover) believed 26 px above where its surface shows, its size a
    # few pixels off the surface's: moved with its rows, by the same rule the pointer aims by
    row = node("list-item", Rect(310, 130, 80, 20))
    popover = Node(
        key=("bus", "/popover"),
        role="panel",
        name="GtkPopover",
        bounds=Rect(300, 120, 100, 60),
        children=[row],
    )
    root = node("frame", Rect(0, 0, 640, 480), node("combo-box", Rect(300, 90, 100, 30), popover))
    popups = [Rect(298, 146, 104, 62), Rect(0, 0, 300, 300)]
    assert shift_to(popover.bounds, popups) == (-2, 26)
    assert place_popovers(root, popups) == 1
    assert popover.bounds == Rect(298, 146, 100, 60) and row.bounds == Rect(308, 156, 80, 20)
    assert shift_to(Rect(0, 0, 500, 500), popups) == (0, 0)  # nothing near its size
