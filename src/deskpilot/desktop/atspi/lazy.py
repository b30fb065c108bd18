"""What a read asks live, and what a lazy read leaves unread.

After the bulk cache call, the reader asks ``GetChildren`` wherever the cache may be short of
a node's children (:func:`needs_live_children`) — or, for a virtual container (a table, a
document, a huge list: :mod:`.virtual`), reads the children it shows. A *lazy* read
(``lazy_hidden``) does not read what is not on screen: unknown nodes are first asked only for
their state, and those hidden are kept as stubs (:func:`skip_hidden`); a closed menu's items
are listed, unread (:func:`closed_menu`). A combo box is the exception to both: its popup is
hidden while its selected item shows (:func:`in_combo`).
"""

from __future__ import annotations

from typing import Any

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.consts import (
    ROOT_PATH,
    S_EXPANDED,
    S_MANAGES_DESCENDANTS,
    S_SELECTABLE,
    S_SELECTED,
    S_SHOWING,
    S_VISIBLE,
    role_name,
    state_bits,
)
from deskpilot.desktop.atspi.model import AppTree, RawNode
from deskpilot.desktop.atspi.partial import note_failure, settled

#: Children of one parent that are VISIBLE but not SHOWING asked whether they are a view's
#: panes at most (a sheet frozen at a cell has four, two of them hidden so).
MAX_PANES = 4


def needs_live_children(tree: AppTree, node: RawNode) -> bool:
    """Whether the cache may be short of this node's children (ask GetChildren)."""
    known = len(node.children) if node.children is not None else 0
    if node.path == ROOT_PATH:
        return True
    if tree.lazy_hidden and not tree.shown(node.path) and not in_combo(tree, node.path):
        return False  # its subtree is not on screen: not read
    if node.child_count < 0 or node.states & S_MANAGES_DESCENDANTS:
        # atk-bridge reports -1 for manages-descendants nodes (tree views, documents): their
        # children are never cached, and are read by what shows (:mod:`.virtual`)
        return node.displayed
    return node.child_count > known


async def skip_hidden(
    bus: AtspiBus, tree: AppTree, unknown: list[tuple[str, str]]
) -> list[tuple[str, str, list[Any]]]:
    """Keep hidden nodes as stubs (state only); return the ones to read in full."""
    calls = [bus.request(tree.bus, k, "Accessible", "GetState") for k, _p in unknown]
    await settled(calls)
    known: list[tuple[str, str, list[Any], int]] = []
    for (kid, parent), call in zip(unknown, calls, strict=True):
        if (exc := call.exception()) is not None:
            note_failure(tree, "GetState", exc)
            continue
        body = call.result()
        bits = state_bits(body[0])
        known.append((kid, parent, body, bits))
        if parent != ROOT_PATH:
            # whether the app sets SHOWING below its windows, told by these nodes too (a live
            # read starts from the frame alone: its first level decides it)
            tree.saw_showing(bits)
    full: list[tuple[str, str, list[Any]]] = []
    unsure: list[tuple[str, str, list[Any], int]] = []
    for kid, parent, body, bits in known:
        if shows_state(tree, bits) or in_combo(tree, parent) or view_item_of(tree, parent, bits):
            # a collapsed combo box's popup is hidden, but its selected item is SHOWING
            # (Chromium): read it, so that the combo can show its value
            full.append((kid, parent, body))
        elif bits & S_VISIBLE and tree.shown(parent):
            unsure.append((kid, parent, body, bits))
        else:
            tree.nodes[kid] = RawNode.hidden_stub(kid, parent, bits)
    full += await _panes(bus, tree, unsure)
    return full


async def _panes(
    bus: AtspiBus, tree: AppTree, unsure: list[tuple[str, str, list[Any], int]]
) -> list[tuple[str, str, list[Any]]]:
    """Of VISIBLE nodes that do not say SHOWING in a parent that shows, the documents: the
    panes of one view, whose content shows (LibreOffice leaves SHOWING off the documents of
    a sheet's frozen header row and column, and of a split view's other part; their tables
    say SHOWING). The others are stubs. A parent with more than MAX_PANES such children
    holds content scrolled out of view (a web page's), not a view's panes: none is asked."""
    counts: dict[str, int] = {}
    for _kid, parent, _body, _bits in unsure:
        counts[parent] = counts.get(parent, 0) + 1
    ask = [u for u in unsure if counts[u[1]] <= MAX_PANES]
    roles = [bus.request(tree.bus, k, "Accessible", "GetRole") for k, *_ in ask]
    await settled(roles)
    panes: set[str] = set()
    for (kid, *_), call in zip(ask, roles, strict=True):
        if call.exception() is None and role_name(int(call.result()[0])).startswith("document"):
            panes.add(kid)
    out: list[tuple[str, str, list[Any]]] = []
    for kid, parent, body, bits in unsure:
        if kid in panes:
            out.append((kid, parent, body))
        else:
            tree.nodes[kid] = RawNode.hidden_stub(kid, parent, bits)
    return out


def view_item_of(tree: AppTree, parent: str, bits: int) -> bool:
    """Whether a node is an item of an icon view that shows: GTK 3 lays out the items of a
    new model VISIBLE and never SHOWING (:mod:`.kinds`); whether each is on screen is told
    by its extents."""
    pane = tree.nodes.get(parent)
    return (
        pane is not None
        and pane.role_name == "layered-pane"
        and tree.shown(parent)
        and bool(bits & S_VISIBLE and bits & S_SELECTABLE)
    )


def closed_menu(tree: AppTree, path: str) -> bool:
    """Whether ``path`` is a menu that is not open (and not a combo box's popup).

    A menu in a menu bar or in another menu is its title there: closed unless expanded or
    selected. Any other menu on screen (a web page's ``role=menu``, a context menu) shows
    its items."""
    node = tree.nodes[path]
    if node.role_name != "menu" or node.states & (S_EXPANDED | S_SELECTED):
        return False
    if in_combo(tree, node.parent):
        return False
    parent = tree.nodes.get(node.parent) if node.parent else None
    titled = parent is not None and parent.role_name in ("menu-bar", "menu")
    return titled or not shows_state(tree, node.states)


def shows_state(tree: AppTree, bits: int) -> bool:
    """Whether a node with these state bits is on screen (in this app's use of SHOWING)."""
    return bool(bits & S_SHOWING or (not tree.uses_showing and bits & S_VISIBLE))


def in_combo(tree: AppTree, path: str | None) -> bool:
    """Whether ``path`` is a combo box or its popup (two levels at most)."""
    for _ in range(2):
        node = tree.nodes.get(path) if path else None
        if node is None:
            return False
        if node.role_name == "combo-box":
            return True
        path = node.parent
    return False
