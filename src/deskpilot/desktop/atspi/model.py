"""The tree model of one application, as read from AT-SPI, and the changes that make it stale.

:class:`RawNode` is one accessible object as the bus describes it (path, role, states,
interfaces, and what a read fetched of its extents, text and label); :class:`AppTree` holds an
app's nodes keyed by object path, with what went wrong while reading them, and a :class:`Span`
for each virtual container (a table or list read by what it shows). :class:`Dirty` is
what AT-SPI events said changed in an app since its tree was last brought up to date: the
reader (:mod:`.tree`) applies it, the event cache (:mod:`.cache`) collects it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from deskpilot.desktop.atspi.consts import NULL_PATH, S_SHOWING, S_VISIBLE, role_name, state_bits

_TOPLEVEL_ROLES = {"application", "frame", "window", "dialog", "alert", "file-chooser"}


@dataclass(slots=True)
class RawNode:
    path: str
    parent: str | None
    index: int
    child_count: int
    interfaces: frozenset[str]
    name: str
    role: int
    description: str
    states: int
    children: list[str] | None = None  # ordered child paths, None until known
    extents: tuple[int, int, int, int] | None = None
    text: str | None = None
    value: str | None = None
    label: str = ""  # name of the element that labels it (LABELLED_BY), for unnamed fields
    text_ok: bool = False  # text/value fetched (and still current)
    label_ok: bool = False  # label looked up
    stub: bool = False  # only its state is known (a hidden node read lazily)
    closed: bool = False  # a closed menu: its items are listed as stubs, unread
    actions: tuple[str, ...] | None = None  # action names, once asked (:mod:`.actions`)
    hint: str = ""  # tag and class of a nameless actionable node (:mod:`.actions`)

    @classmethod
    def hidden_stub(cls, path: str, parent: str, states: int) -> RawNode:
        """A hidden node known only by its place (and its state, when asked); not read."""
        return cls(path, parent, -1, 0, frozenset(), "", 0, "", states, children=[], stub=True)

    @property
    def role_name(self) -> str:
        return role_name(self.role)

    @property
    def displayed(self) -> bool:
        """SHOWING or VISIBLE (GTK 4.8 sets SHOWING only on the frame: use VISIBLE there)."""
        return bool(self.states & (S_SHOWING | S_VISIBLE))

    def has(self, iface: str) -> bool:
        return iface in self.interfaces


@dataclass(slots=True)
class Span:
    """What a read took of a virtual container: its size, and the part read."""

    rows: int  # rows of a table, children of a list
    columns: int = 0  # 0 for a list
    first_row: int = 0  # the range read, inclusive (-1 when nothing was read)
    last_row: int = -1
    first_column: int = 0
    last_column: int = -1
    cells: dict[str, tuple[int, int]] = field(default_factory=dict)  # path → (row, column)
    headers: dict[int, str] = field(default_factory=dict)  # column → its header's name
    #: column → its header's node (read as a child of the table: a header sorts on a click)
    header_paths: dict[int, str] = field(default_factory=dict)
    addressed: bool = False  # cells are named by address ("B7"): a spreadsheet

    @property
    def table(self) -> bool:
        return self.columns > 0

    @property
    def whole(self) -> bool:
        """Whether every child was read (nothing is left to scroll to)."""
        cols = max(1, self.columns)
        return (
            self.first_row == 0
            and self.last_row == self.rows - 1
            and (not self.table or (self.first_column == 0 and self.last_column == cols - 1))
        )


@dataclass
class AppTree:
    """One application's accessibility tree, keyed by object path."""

    bus: str
    #: read lazily: subtrees that do not show are not read (kept for the tree's refreshes)
    lazy_hidden: bool = False
    nodes: dict[str, RawNode] = field(default_factory=dict)
    #: frames whose subtrees were read (a read covers one window, never the whole app)
    frames: set[str] = field(default_factory=set)
    #: what was read of each virtual container (see :mod:`.virtual`)
    virtual: dict[str, Span] = field(default_factory=dict)
    partial: bool = False
    problems: list[str] = field(default_factory=list)
    cached_items: int = 0
    live_fetched: int = 0
    elapsed_ms: float = 0.0
    _uses_showing: bool | None = field(default=None, repr=False)

    def note(self, problem: str) -> None:
        self.partial = True
        if len(self.problems) < 8 and problem not in self.problems:
            self.problems.append(problem)

    @property
    def uses_showing(self) -> bool:
        """Whether the app sets SHOWING below its windows (GTK 4.8 sets it only on frames).

        Undecided while the tree holds nothing below its windows (a live read of an app whose
        cache is not asked starts from the root and the frame alone): "no" is kept only once
        a node below a window is known, or every VISIBLE node of that read would count as
        shown (LibreOffice's ~830 closed menu items were read in full on each cold read)."""
        if self._uses_showing is None:
            inner = False
            for n in self.nodes.values():
                if n.role_name in _TOPLEVEL_ROLES:
                    continue
                inner = True
                if n.states & S_SHOWING:
                    self._uses_showing = True
                    return True
            if inner:
                self._uses_showing = False
            return False
        return self._uses_showing

    def saw_showing(self, bits: int) -> None:
        """A node below a window (not in the tree yet) has SHOWING: the app uses it."""
        if bits & S_SHOWING:
            self._uses_showing = True

    def shown(self, path: str) -> bool:
        """Whether a node is on screen as far as its states tell (SHOWING; VISIBLE for apps
        that never set SHOWING on widgets)."""
        node = self.nodes[path]
        if self.uses_showing:
            return bool(node.states & S_SHOWING)
        return node.displayed

    def children_of(self, path: str) -> list[str]:
        node = self.nodes.get(path)
        if node is None or node.children is None:
            return []
        return [c for c in node.children if c in self.nodes]

    def under(self, path: str, roots: set[str]) -> bool:
        """Whether ``path`` is one of ``roots`` or below one (by parent pointers)."""
        seen: set[str] = set()
        current: str | None = path
        while current is not None and current not in seen:
            if current in roots:
                return True
            seen.add(current)
            node = self.nodes.get(current)
            current = node.parent if node is not None else None
        return False

    def subtree(self, root: str) -> list[str]:
        """Paths of ``root`` and its descendants, depth-first, each once."""
        out: list[str] = []
        seen: set[str] = set()
        stack = [root]
        while stack:
            path = stack.pop()
            if path in seen or path not in self.nodes:
                continue
            seen.add(path)
            out.append(path)
            stack.extend(reversed(self.children_of(path)))
        return out


#: Roles whose Value interface says nothing a read shows (LibreOffice puts one on its
#: buttons, toggles, menus, separators and panels: 79 calls per cold read of Writer).
_VALUELESS_ROLES = frozenset(
    {
        "push-button",
        "toggle-button",
        "check-box",
        "radio-button",
        "menu",
        "menu-item",
        "menu-bar",
        "separator",
        "panel",
        "filler",
        "tool-bar",
        "page-tab",
        "table-cell",  # a spreadsheet cell's text is its value (Calc: one call fewer a cell)
    }
)


def wants_value(node: RawNode) -> bool:
    """Whether a node's Value (Value.CurrentValue) is worth a call."""
    return node.has("Value") and node.role_name not in _VALUELESS_ROLES


def short_ifaces(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n.rsplit(".", 1)[-1] for n in names)


def node_from_item(item: list[Any] | tuple[Any, ...]) -> RawNode | None:
    """Decode one GetItems entry, new signature ``((so)(so)(so)iiassusau)`` or Qt's old one
    ``((so)(so)(so)a(so)assusau)`` (children list instead of index and child count)."""
    try:
        (_bus, path), _app, (pbus, ppath) = item[0], item[1], item[2]
        if isinstance(item[3], list):  # old signature
            kids = [p for _b, p in item[3]]
            ifaces, name, role, desc, states = item[4:9]
            parent = ppath if pbus and ppath != NULL_PATH else None
            return RawNode(
                str(path),
                parent,
                -1,
                len(kids),
                short_ifaces(ifaces),
                str(name),
                int(role),
                str(desc),
                state_bits(states),
                children=list(kids),
            )
        index, count, ifaces, name, role, desc, states = item[3:10]
    except (ValueError, TypeError, IndexError):
        return None
    parent = ppath if pbus and ppath != NULL_PATH else None
    return RawNode(
        str(path),
        parent,
        int(index),
        int(count),
        short_ifaces(ifaces),
        str(name),
        int(role),
        str(desc),
        state_bits(states),
    )


@dataclass
class Dirty:
    """What changed in one app since its tree was last brought up to date."""

    children: set[str] = field(default_factory=set)
    props: set[str] = field(default_factory=set)
    text: set[str] = field(default_factory=set)
    extents: set[str] = field(default_factory=set)
    #: containers whose selection, active descendant or rows changed (read again if virtual)
    containers: set[str] = field(default_factory=set)
    #: nodes whose sensitivity changed: GTK 3 changes their descendants' without an event of
    #: their own (a toolbar's tool item made sensitive: its button says nothing)
    sensitivity: set[str] = field(default_factory=set)
    all_extents: bool = False
    frames: bool = False  # windows appeared, closed, moved or changed state
    full: bool = False  # too much, or something we cannot follow: read everything again
    events: int = 0

    def size(self) -> int:
        return len(self.children) + len(self.props) + len(self.text) + len(self.extents)
