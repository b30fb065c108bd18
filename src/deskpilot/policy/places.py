"""Where an element sits: a window's nodes with parent links, and what its place says.

:class:`Tree` is what a judgement of effects (:mod:`deskpilot.policy.effects`) looks around
in: the nearest dialog, form or page part around an element (:meth:`Tree.place`), the words
of that place (:func:`words` — labels, headings, field names; never the text of a document
being edited), the button Enter in a field fires (:func:`default_button`) and whether a
"Reply" button submits a text box next to it (:func:`submits`).

Everything here is pure: it reads :class:`~deskpilot.desktop.base.Node` trees.
"""

from __future__ import annotations

from collections.abc import Iterator

from deskpilot.desktop.base import WRAPPER_ROLES, Node
from deskpilot.policy.vocabulary import COMMIT_SET, SEARCH_SET, VERB_SETS

#: Roles of what a click, Enter or space activates.
BUTTONS = frozenset(
    {
        "push-button",
        "toggle-button",
        "menu-item",
        "check-menu-item",
        "radio-menu-item",
        "link",
        "push-button-menu",
        "check-box",
        "radio-button",
        "list-item",
        "tab",
        "page-tab",
    }
)
#: Roles of fields where Enter submits (one line of text, unless the state says multi-line).
ONE_LINE = frozenset({"entry", "password-text", "spin-button", "combo-box", "search-box"})
#: Roles of text areas (Enter is a new line unless the state says single-line).
TEXT_AREAS = frozenset({"text", "paragraph", "document-text", "editbar"})
#: Roles of the places that say what their buttons do (a web form with a name is a landmark).
PLACES = frozenset(
    {
        "dialog",
        "alert",
        "form",
        "landmark",
        "file-chooser",
        "color-chooser",
        "notification",
    }
)
DOCUMENTS = frozenset({"document-web", "document-frame", "document-email", "embedded"})
#: Bars whose buttons act on the whole window (Save in a toolbar saves the document).
BARS = frozenset({"tool-bar", "menu-bar", "menu", "popup-menu", "status-bar"})
#: Roles whose words describe a place (labels, headings, static text, field names).
WORDY = frozenset(
    {
        "label",
        "heading",
        "static",
        "paragraph",
        "text",
        "caption",
        "section",
        "description-term",
        "entry",
        "password-text",
        "combo-box",
        "spin-button",
        "frame",
        "dialog",
        "alert",
        "form",
        "landmark",
        "document-web",
        "document-frame",
        "title-bar",
        "status-bar",
        "page-tab",
    }
)
#: How many nodes of a place are read for its words.
PLACE_NODES = 400


def quoted(node: Node) -> str:
    """An element as a person would point at it: its name in quotes, else its role."""
    label = (node.name or node.label or node.description or "").strip()
    return f'"{label[:60]}"' if label else f"the {node.role.replace('-', ' ')}"


def is_default(node: Node) -> bool:
    return "is-default" in node.states or "default" in node.states


def is_field(node: Node) -> bool:
    """A text field a person writes in (a paragraph only when it is editable)."""
    return node.editable or node.role in ONE_LINE or node.role in ("text", "editbar")


def one_line(node: Node) -> bool:
    """A field where Enter submits (an entry not marked multi-line, a single-line text)."""
    if node.role in ONE_LINE:
        return "multi-line" not in node.states
    return node.role in TEXT_AREAS and "single-line" in node.states


def is_search(node: Node) -> bool:
    return (
        node.role == "search-box" or SEARCH_SET.find(" ".join([node.name, node.label])) is not None
    )


class Tree:
    """One window's nodes with parent links (what a judgement looks around in)."""

    def __init__(self, root: Node | None, title: str = "") -> None:
        self.root = root
        self.title = title
        self._nodes = root.walk() if root is not None else []
        self._parent: dict[tuple[str, str], Node] = {}
        self._by_key: dict[tuple[str, str], Node] = {}
        for node in self._nodes:
            self._by_key[node.key] = node
            for child in node.children:
                self._parent[child.key] = node

    def find(self, key: tuple[str, str]) -> Node | None:
        return self._by_key.get(key)

    def ancestors(self, node: Node) -> Iterator[Node]:
        parent = self._parent.get(node.key)
        while parent is not None:
            yield parent
            parent = self._parent.get(parent.key)

    def at(self, x: int, y: int) -> list[Node]:
        """The deepest node whose bounds hold the point, then its ancestors up to a control
        (at most three, innermost first): what a press there reaches."""
        hits = [n for n in self._nodes if n.bounds is not None and n.bounds.contains(x, y)]
        if not hits:
            return []
        chain = [hits[-1]]  # walk() is depth first: the last hit is the deepest
        for up in self.ancestors(hits[-1]):
            if len(chain) == 3 or chain[-1].role not in WRAPPER_ROLES:
                break
            chain.append(up)
        return chain

    def focused(self) -> Node | None:
        """The deepest node with the focus (a document and its field may both say so)."""
        found = [n for n in self._nodes if "focused" in n.states]
        return found[-1] if found else None

    def place(self, node: Node) -> Node | None:
        """The nearest dialog, alert, form or named page part around ``node``, else its
        document, else None (the window)."""
        document = None
        for up in self.ancestors(node):
            if up.role in PLACES:
                return up
            if document is None and up.role in DOCUMENTS:
                document = up
        return document

    def document_of(self, node: Node) -> Node | None:
        return next((up for up in self.ancestors(node) if up.role in DOCUMENTS), None)

    def in_bar(self, node: Node) -> bool:
        """Whether ``node`` sits in a toolbar or a menu (it acts on the whole window)."""
        return any(up.role in BARS for up in self.ancestors(node))


def place_nodes(scope: Node) -> list[Node]:
    """The nodes of a place, in order, without the content of what is being edited there (a
    document's paragraphs say what the document is about, not what its buttons do)."""
    out: list[Node] = []
    stack = [scope]
    while stack and len(out) < PLACE_NODES:
        node = stack.pop()
        out.append(node)
        if node is scope or not (node.editable and node.role not in ONE_LINE):
            stack.extend(reversed(node.children))
    return out


def words(nodes: list[Node]) -> str:
    """The words of a place: its name, its fields' names, labels' and headings' text. Not
    what its buttons, links, list items and other tabs are called: they name other acts and
    places ("Change password" beside a display form's Save, a file called "security.txt")."""
    parts: list[str] = []
    for node in nodes:
        if node.role in BUTTONS and not (node.role == "page-tab" and "selected" in node.states):
            continue
        if node.role in WORDY:
            parts += [node.name, node.label, node.description]
            roles = ("label", "static", "heading", "paragraph", "caption")
            if node.role in roles and node.text and not node.editable:  # not what is typed
                parts.append(node.text[:200])
    return " · ".join(p for p in parts if p)


def default_button(field: Node, tree: Tree) -> Node | None:
    """The button Enter in ``field`` fires: going out from the field, the first group of
    buttons' default one, else its one that commits or has an effect, else its only one."""
    place = tree.place(field)
    for up in tree.ancestors(field):
        buttons = [
            n
            for n in up.walk()
            if n.role == "push-button" or (n.role in BUTTONS and n.role != "link")
        ]
        if buttons:
            default = next((b for b in buttons if is_default(b)), None)
            if default is not None:
                return default
            for button in buttons:
                label = " ".join([button.name, button.label])
                if COMMIT_SET.find(label) or any(v.find(label) for v in VERB_SETS.values()):
                    return button
            return buttons[0] if len(buttons) == 1 else None
        if up is place:
            break
    return None


def submits(button: Node, tree: Tree) -> bool:
    """Whether ``button`` submits a text box next to it: it is its form's default button, or
    the nearest part around it that holds a text field (not a search field) is smaller than the
    page or window."""
    if is_default(button):
        return True
    for up in tree.ancestors(button):
        fields = [n for n in up.walk() if is_field(n) and not is_search(n)]
        if fields:
            return up.role not in DOCUMENTS and up is not tree.root and up.role != "frame"
        if up.role in DOCUMENTS:
            return False
    return False
