"""Actionable means addressable: the nodes a person can operate that their role does not tell.

A web page makes plain content operable with listeners, ``tabindex`` and ``overflow``; Chromium
says so with actions and states (see :mod:`deskpilot.desktop.atspi.actions`):

* **clickable** — the element has an action of its own (``click``: its own click or mouse
  listener; ``press``, ``jump``…);
* **focusable** — it takes the keyboard focus (``tabindex``), whatever its role;
* **scrollable** — it offers scroll actions (an ``overflow: auto`` area);
* **through an ancestor** — ``clickAncestor``: a plain part of a clickable element. Inside a
  small clickable element such parts fold into its line; inside a large one (a list whose
  items share one delegated listener) each block-level part is an item a person clicks.

A clickable or focusable element whose content is only text is *folded*: one line named by
that text, acting on the element. Nameless ones with nothing to read are named by their
description, else by a hint of what they are in the page (``span.retweet``).
"""

from __future__ import annotations

from deskpilot.ax.roles import (
    INTERACTIVE,
    STRUCTURAL,
    TEXTUAL,
    clean_name,
    is_displayed,
    is_widget,
    states_shown,
    view_item,
)
from deskpilot.desktop.base import Node
from deskpilot.desktop.toolkit_names import OWN_ACTIONS, PLACEHOLDER_NAMES

#: Roles that are focusable without being something to operate (the page itself).
NOT_CONTROLS = frozenset(
    {"document-web", "document-frame", "frame", "window", "application", "embedded", "filler"}
)
#: Generic roles: an operable one reads as what it does (clickable, focusable, scrollable).
GENERIC = frozenset(
    {"section", "panel", "unknown", "static", "text", "label", "grouping", "filler",
     "landmark", "form", "article", "footer", "header", "mark", "definition",
     "description-term", "description-value", "content-insertion", "superscript",
     "subscript", "block-quote"}
)  # fmt: skip
#: Roles of separate blocks (a person clicks one of them), as opposed to inline text.
BLOCKS = frozenset(
    {"section", "paragraph", "heading", "image", "icon", "list-item", "table-cell",
     "article", "grouping", "description-value", "label", "canvas"}
)  # fmt: skip
#: Widgets that may wrap the one part carrying their action (act on that part).
WRAPPERS = frozenset(
    {"table-cell", "page-tab", "tree-item", "list-item", "menu-item", "check-menu-item",
     "radio-menu-item"}
)  # fmt: skip
#: A clickable element folds its content into one line when that content is this small.
FOLD_PIECES = 8
FOLD_CHARS = 160
#: Elements whose listeners are the page's own (on the body): their parts are not items to
#: click one by one.
PAGE_TAGS = frozenset({"body", "html"})


#: List markers Chromium reads as text.
BULLETS = frozenset({"•", "◦", "▪", "‣", "-"})


def clickable(node: Node) -> bool:
    return node.primary_action in OWN_ACTIONS


def scrollable(node: Node) -> bool:
    return any(a.lower().startswith("scroll") for a in node.actions)


def focusable(node: Node) -> bool:
    return "focusable" in node.states and node.role not in NOT_CONTROLS


def via_ancestor(node: Node) -> bool:
    return node.primary_action == "clickancestor"


def kind(node: Node) -> str | None:
    """What makes a node that is not a widget by role operable: "scroll", "click", "focus"."""
    if is_widget(node):
        return None
    if node.role == "separator" and node.value is None:
        # a rule between a toolbar's groups (LibreOffice's take the focus): nothing to act
        # on, and an ID invites a click that does nothing; a splitter has a value
        return None
    if scrollable(node):
        return "scroll"
    if clickable(node):
        return "click"
    if focusable(node):
        return "focus"
    return None


_WORDS = {"scroll": "scrollable", "click": "clickable", "focus": "focusable"}


def role_word(node: Node, how: str) -> str:
    """How an operable node reads: its own role where it has one, else what it does (a pane
    of an icon view's items is a list)."""
    if any(view_item(c) for c in node.children[:8]):
        return "list"
    if node.role in GENERIC:
        return _WORDS[how]
    return TEXTUAL.get(node.role) or STRUCTURAL.get(node.role) or node.role


def own_name(node: Node) -> str:
    name = clean_name(node.name)
    if name in PLACEHOLDER_NAMES:
        name = ""
    return name or clean_name(node.description)


def operable(node: Node) -> bool:
    """A widget by role, or operable by what it offers."""
    return is_widget(node) or kind(node) is not None


def folded_text(node: Node) -> str | None:
    """The text of a node's shown content, when it is only text (no widget or operable part,
    not too long); None when the node has more than text inside."""
    pieces: list[str] = []
    stack = list(reversed(node.children))
    while stack:
        d = stack.pop()
        if not is_displayed(d) or d.role == "invalid":
            continue  # "invalid": an object the app replaced since the tree was read
        if operable(d) or d.role in ("list", "table", "tree", "tree-table"):
            return None
        if d.role in ("image", "icon") and own_name(d):
            pass  # an icon (an SVG with its shapes inside): by its name
        elif d.children:
            stack.extend(reversed(d.children))
            continue
        text = own_name(d) or clean_name(d.text or "")
        if text and text not in pieces:
            pieces.append(text)
        if len(pieces) > FOLD_PIECES:
            return None
    if blocks_inside(node) > 1:
        return None  # items side by side (a list behind one delegated listener)
    joined = " ".join(p for p in pieces if p not in BULLETS)
    return joined if len(joined) <= FOLD_CHARS else None


def page_level(node: Node) -> bool:
    """Whether a clickable element is the page itself (a listener on the body)."""
    return node.hint.split(".", 1)[0].split("#", 1)[0] in PAGE_TAGS


def blocks_inside(node: Node) -> int:
    """How many of a node's children are separate blocks with something to read."""
    return sum(
        1
        for c in node.children
        if is_displayed(c) and c.role in BLOCKS and (own_name(c) or c.text or c.children)
    )


def wrapped_target(node: Node) -> Node | None:
    """The one operable part a labelled widget wraps (a cell over its link, a tab over its
    link, a tree item over its inner span), when it adds nothing but the action: act on it.
    A nameless wrapper whose only content is one named part is that part too."""
    name = own_name(node)
    parts = [d for d in node.walk()[1:] if is_displayed(d) and operable(d)]
    if len(parts) != 1:
        return None
    part = parts[0]
    inner = own_name(part) or folded_text(part) or ""
    if not name:
        # a nameless wrapper around one named part and nothing else (a flow box's child
        # around a colour swatch): one line, named by the part, acting on it — not two
        return part if inner and not _text_beside(node, part) else None
    if not inner and part.role in SUB_CONTROLS and (_text_beside(node, part) or tab_named(node)):
        # a nameless button beside the wrapper's own text (a tab's close button, a row's
        # remove button) is a control of its own, not what the wrapper does: acting on the
        # tab must not close it (a GTK 3 tab's name is its own, its label not a child)
        return None
    return part if inner in ("", name) or name.startswith(inner) else None


def tab_named(node: Node) -> bool:
    """A tab with a name of its own: what it does is to be selected, whatever it holds."""
    return node.role == "page-tab" and bool(own_name(node))


def row_over_part(wrapper: Node, part: Node) -> bool:
    """Whether a wrapper's one line is the wrapper's own, though named by its part: a
    nameless list item (a GTK 4 list view's row) around a part whose only actions expand
    and collapse it (its tree expander). Acting on the line means choosing the row, which
    those actions cannot do: a click by the part's ID ran 'listitem.toggle-expand' on a row
    with nothing to expand and selected nothing."""
    return (
        wrapper.role == "list-item"
        and not own_name(wrapper)
        and bool(part.actions)
        and all("expand" in a.lower() or "collapse" in a.lower() for a in part.actions)
        and kind(part) == "focus"
    )


def sole_control(node: Node) -> Node | None:
    """The one nameless button a named toolbar holds and nothing else: the button the
    toolbar names (LibreOffice's sidebar: a toolbar "Styles" around a nameless toggle that
    opens that deck). One line, the button named by its toolbar; it read as a toolbar line
    over a nameless toggle, two IDs."""
    if node.role != "tool-bar" or not own_name(node):
        return None
    parts = [d for d in node.walk()[1:] if is_displayed(d) and operable(d)]
    if len(parts) != 1 or parts[0].role not in SUB_CONTROLS:
        return None
    part = parts[0]
    if own_name(part) or folded_text(part):
        return None
    beside = any(
        is_displayed(d) and (clean_name(d.name) or (d.text or "").strip())
        for d in node.walk()[1:]
        if d is not part
    )
    return None if beside else part


def shell_target(node: Node) -> Node | None:
    """The button a button-shaped shell holds (GTK 4's menu button: a button that cannot
    take the focus around the focusable toggle that acts, neither named): one control, read
    once, as the part that acts (the menu it holds open listed under it). It was two
    nameless lines, each with an ID."""
    if node.role not in SUB_CONTROLS or "focusable" in node.states or own_name(node):
        return None
    inside = _outside_menus(node)
    parts = [d for d in inside if is_displayed(d) and operable(d)]
    if len(parts) != 1 or parts[0].role not in SUB_CONTROLS or "focusable" not in parts[0].states:
        return None
    own = {id(d) for d in parts[0].walk()}
    beside = any(
        id(d) not in own and is_displayed(d) and (clean_name(d.name) or (d.text or "").strip())
        for d in inside
    )
    return None if beside else parts[0]


#: Roles of what a button opens: its menu is listed under it, not a part of the button.
MENU_ROLES = frozenset({"menu", "popup-menu", "window", "dialog"})


def _outside_menus(node: Node) -> list[Node]:
    """``node``'s descendants, without the menus it holds open and what they hold."""
    out: list[Node] = []
    stack = list(reversed(node.children))
    while stack:
        d = stack.pop()
        if d.role in MENU_ROLES:
            continue
        out.append(d)
        stack.extend(reversed(d.children))
    return out


#: Roles of the small controls a wrapper may hold beside its text (close, remove, expand).
SUB_CONTROLS = frozenset({"push-button", "toggle-button", "push-button-menu"})


def _text_beside(node: Node, part: Node) -> bool:
    """Whether ``node`` shows text of its own outside ``part``."""
    inside = {id(d) for d in part.walk()}
    return any(
        id(d) not in inside and is_displayed(d) and (clean_name(d.name) or (d.text or "").strip())
        for d in node.walk()[1:]
    )


#: States a wrapper's line keeps from the wrapper itself (it is the one selected or open).
_WRAPPER_STATES = frozenset(
    {"selected", "active", "expanded", "collapsed", "focused", "checked", "unchecked", "disabled"}
)
_CHECKS = frozenset({"checked", "unchecked"})


def wrapped_line(wrapper: Node, part: Node, states: list[str], role: str) -> tuple[list[str], str]:
    """The states and role of a wrapper's line that acts on its one operable part: what the
    act meets is the part, so its states count (a list item around a disabled "Continue"
    button reads disabled); a list item around a control reads as that control (a button in
    a list of buttons), a tab or a row stays what it is."""
    own = [s for s in states if s in _WRAPPER_STATES]
    skip = set(own) | (_CHECKS if _CHECKS & set(own) else set())
    merged = own + [s for s in states_shown(part) if s not in skip]
    if wrapper.role == "list-item" and part.role in INTERACTIVE:
        role = INTERACTIVE[part.role]
    return merged, role
