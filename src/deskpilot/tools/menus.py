"""The menu an action opened, named in its result with its items and their IDs.

A context menu (``right_click`` on a text area, a field, a file) and a menu bar's menu open in
the app's own popup; the read shows it (:mod:`deskpilot.desktop.skills.reading` reads the
app's popups over the window), and the action's result says it opened — with its items — so a
model that believed "Right-clicked textbox" alone would not type into a menu it never saw.
A menu is taken as opened by the action when the keyboard focus moved into it (toolkits give
an open menu the focus: GTK, Qt, LibreOffice), or — after a right click — when a menu with
items shows that the last read did not have (a web page's own context menu takes no focus).
"""

from __future__ import annotations

from deskpilot.ax.roles import clean_name
from deskpilot.desktop.base import Node, WindowInfo
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.errors import DeskpilotError
from deskpilot.tools.context import ToolContext
from deskpilot.tools.screen import read_window

#: Roles of a menu, and of the items listed from it.
MENU_ROLES = frozenset({"menu", "popup-menu"})
ITEM_ROLES = frozenset({"menu-item", "check-menu-item", "radio-menu-item", "menu"})
#: Items named in the result at most (the rest are in the read).
MAX_ITEMS = 24


async def menu_opened(
    ctx: ToolContext, window: WindowInfo, focus: ElementKey | None, *, appeared: bool = False
) -> str:
    """`` A menu opened: "Undo" @2.90, …`` when the keyboard focus moved (from ``focus``)
    into an open menu of the window — or, with ``appeared`` (after a right click), when a
    menu with items shows that the model's last read did not have (a web page's own context
    menu, which takes no focus); else empty."""
    try:
        now = await ctx.desktop.focused_element(window)
        moved = now is not None and now != focus
        if moved and not appeared and now is not None:
            live = await ctx.desktop.inspect(now)  # one call, not a read, for most actions
            moved = live is not None and live.role in MENU_ROLES | ITEM_ROLES
        if not moved and not appeared:
            return ""
        read = await read_window(ctx, window, baseline=False)
    except DeskpilotError:
        return ""  # the window closed or does not answer: other parts of the result say so
    if read.snap.root is None:
        return ""
    ids = {node.key: eid for eid, node in read.ids.items()}
    menu = _menu_holding(read.snap.root, now) if moved and now is not None else None
    if menu is None and appeared and read.previous is not None:
        before = read.previous
        menu = next((n for n in read.snap.root.walk() if _new_menu(n, ids, before)), None)
    if menu is None:
        return ""
    items = [n for n in _items(menu) if n.key in ids]
    if not items:
        return ""
    named = [_item(n, ids[n.key]) for n in items[:MAX_ITEMS]]
    more = f", and {len(items) - MAX_ITEMS} more" if len(items) > MAX_ITEMS else ""
    title = f' "{clean_name(menu.name)}"' if clean_name(menu.name) else ""
    where = f" @{ids[menu.key]}" if menu.key in ids else ""
    return (
        f" A menu{title}{where} opened: {', '.join(named)}{more}. Click an item by its ID "
        "(read_screen_ax lists them too); the shortcut Escape closes it."
    )


def _menu_holding(root: Node, key: ElementKey) -> Node | None:
    """The innermost menu with shown items that is, or holds, the element ``key``."""
    found: Node | None = None

    def walk(node: Node, menu: Node | None) -> bool:
        nonlocal found
        if _is_open_menu(node):
            menu = node
        if node.key == key:
            found = menu
            return True
        return any(walk(child, menu) for child in node.children)

    walk(root, None)
    return found


def _new_menu(node: Node, ids: dict[ElementKey, str], before: dict[str, str]) -> bool:
    """An open menu whose items (those with IDs) were none in the last read."""
    if not _is_open_menu(node):
        return False
    items = [ids[i.key] for i in _items(node) if i.key in ids]
    return bool(items) and not any(eid in before for eid in items)


def _is_open_menu(node: Node) -> bool:
    """A menu showing its items (a menu bar's closed menus are read without them)."""
    return node.role in MENU_ROLES and bool(_items(node))


def _items(menu: Node) -> list[Node]:
    """A menu's items in order (looking through the boxes some toolkits put between)."""
    out: list[Node] = []
    for child in menu.children:
        if child.role in ITEM_ROLES:
            out.append(child)
        elif child.role not in MENU_ROLES:
            out.extend(_items(child))
    return out


def _item(node: Node, eid: str) -> str:
    marks = "" if "enabled" in node.states or "sensitive" in node.states else " [disabled]"
    if node.role == "menu":
        marks += " (submenu)"
    return f'"{clean_name(node.name)}"{marks} @{eid}'
