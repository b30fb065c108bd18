"""The hybrid tree reader: one bulk ``Cache.GetItems`` per app, then targeted live repairs.

Measured in ../shared/notes/linux-desktop.md §1: the bulk call returns an app's whole cached
tree in 1–110 ms, but GTK4 fills its cache lazily, atk-bridge never caches the children of
``manages-descendants`` nodes (tree views, LibreOffice documents), LibreOffice leaves orphan
subtrees, and Qt answers with zero items. So after the bulk call we ask live (``GetChildren``)
wherever the cache is short of what a node says it has, fetch unknown children's properties
live, and re-attach orphans. Extents and text are fetched only for the nodes that will be shown.

Every call is bounded by the bus timeout; failures mark the read ``partial`` instead of raising.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from deskpilot.desktop.atspi_bus import A11Y, DBUS_PROPS, AtspiBus, AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi_consts import (
    CACHE_PATH,
    NULL_PATH,
    ROOT_PATH,
    S_EXPANDED,
    S_MANAGES_DESCENDANTS,
    S_SELECTED,
    S_SHOWING,
    S_VISIBLE,
    role_name,
    state_bits,
)
from deskpilot.errors import DesktopError

if TYPE_CHECKING:
    from deskpilot.desktop.atspi_cache import Dirty

T = TypeVar("T")

#: Children fetched live per manages-descendants node (huge tables/documents are truncated).
MAX_MANAGED_CHILDREN = 600
#: Nodes read per app at most.
MAX_NODES = 30000
ACCESSIBLE = A11Y + "Accessible"
#: AtspiRelationType LABELLED_BY
RELATION_LABELLED_BY = 2
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


@dataclass
class AppTree:
    """One application's accessibility tree, keyed by object path."""

    bus: str
    #: read lazily: subtrees that do not show are not read (kept for the tree's refreshes)
    lazy_hidden: bool = False
    nodes: dict[str, RawNode] = field(default_factory=dict)
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
        """Whether the app sets SHOWING below its windows (GTK 4.8 sets it only on frames)."""
        if self._uses_showing is None:
            self._uses_showing = any(
                n.states & S_SHOWING and n.role_name not in _TOPLEVEL_ROLES
                for n in self.nodes.values()
            )
        return self._uses_showing

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
    }
)


def wants_value(node: RawNode) -> bool:
    """Whether a node's Value (Value.CurrentValue) is worth a call."""
    return node.has("Value") and node.role_name not in _VALUELESS_ROLES


def _short_ifaces(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n.rsplit(".", 1)[-1] for n in names)


def _node_from_item(item: list[Any] | tuple[Any, ...]) -> RawNode | None:
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
                _short_ifaces(ifaces),
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
        _short_ifaces(ifaces),
        str(name),
        int(role),
        str(desc),
        state_bits(states),
    )


def _failed(tree: AppTree, what: str, exc: BaseException) -> None:
    """Note a failed call on the tree (a partial read); re-raise what is not a desktop error."""
    if isinstance(exc, AtspiTimeout):
        tree.note(f"{what}: no reply in time (the app may be busy or hung)")
    elif isinstance(exc, AtspiCallError):
        # gone: the node went away; unsupported: it lacks that interface. Neither makes the
        # read incomplete.
        if not exc.gone and not exc.unsupported:
            tree.note(f"{what}: {exc.error_name}")
    elif isinstance(exc, DesktopError):
        tree.note(f"{what}: {exc}")
    else:
        raise exc


async def _settled(calls: Iterable[asyncio.Future[Any]]) -> None:
    """Wait until every call has its reply (or error); the errors are read by the caller."""
    await asyncio.gather(*calls, return_exceptions=True)


class TreeReader:
    """Reads application trees from an :class:`AtspiBus`.

    Calls are made as futures (:meth:`AtspiBus.request`) and awaited together: a cold read
    makes about a thousand of them, and a task or coroutine for each costs more than the call.
    """

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus

    async def _guard(self, tree: AppTree, what: str, call: Awaitable[T]) -> T | None:
        try:
            return await call
        except DesktopError as exc:
            _failed(tree, what, exc)
        return None

    async def read_app(
        self, bus_name: str, *, deadline: float | None = None, lazy_hidden: bool = False
    ) -> AppTree:
        """The whole tree of one application (cache + repairs).

        With ``lazy_hidden``, nodes the cache does not have are first asked only for their
        state; those not SHOWING are kept as stubs and their subtrees are not read (Chromium
        keeps off-screen page content out of its cache: reading it all costs ~5 calls a node).
        """
        start = time.perf_counter()
        tree = AppTree(bus_name, lazy_hidden=lazy_hidden)
        items = await self._get_items(tree)
        for item in items or ():
            node = _node_from_item(item)
            if node is not None and node.path not in tree.nodes:
                tree.nodes[node.path] = node
        tree.cached_items = len(tree.nodes)
        self._link_cached_children(tree)
        await self._repair(tree, deadline)
        tree.elapsed_ms = (time.perf_counter() - start) * 1000
        return tree

    async def _get_items(self, tree: AppTree) -> list[Any] | None:
        try:
            body = await self.bus.call(tree.bus, CACHE_PATH, "Cache", "GetItems")
            return list(body[0])
        except AtspiCallError as exc:
            if exc.gone:
                tree.note("the application has gone away")
                return None
            if exc.unsupported and "object:children-changed" not in self.bus._registered:
                await self.bus.register_events()
                try:
                    body = await self.bus.call(tree.bus, CACHE_PATH, "Cache", "GetItems")
                    return list(body[0])
                except (AtspiCallError, AtspiTimeout):
                    return None
            return None  # no cache: the live walk below reads everything
        except AtspiTimeout:
            tree.note("Cache.GetItems: no reply in time (the app may be busy or hung)")
            return None

    @staticmethod
    def _link_cached_children(tree: AppTree) -> None:
        """Build child lists from the parent pointers of cached items (ordered by index)."""
        groups: dict[str, list[RawNode]] = {}
        for node in tree.nodes.values():
            if node.parent is not None and node.parent != node.path:
                groups.setdefault(node.parent, []).append(node)
        for parent, kids in groups.items():
            pnode = tree.nodes.get(parent)
            if pnode is None or pnode.children is not None:
                continue
            if any(k.index >= 0 for k in kids):
                kids.sort(key=lambda k: (k.index < 0, k.index))
            pnode.children = [k.path for k in kids]

    def _needs_live_children(self, tree: AppTree, node: RawNode) -> bool:
        """Whether the cache may be short of this node's children (ask GetChildren)."""
        known = len(node.children) if node.children is not None else 0
        if node.path == ROOT_PATH:
            return True
        if tree.lazy_hidden and not tree.shown(node.path) and not self._in_combo(tree, node.path):
            return False  # its subtree is not on screen: not read
        if node.child_count < 0:
            # atk-bridge reports -1 for manages-descendants nodes (tree views, documents)
            return node.displayed
        if node.states & S_MANAGES_DESCENDANTS:
            return node.displayed and node.child_count > 0
        return node.child_count > known

    async def _repair(
        self, tree: AppTree, deadline: float | None, expand: list[str] | None = None
    ) -> None:
        """Ask live for children the cache lacks. Each node is expanded as soon as it is
        known (no level-by-level barrier), so the calls stay pipelined down deep trees."""
        if ROOT_PATH not in tree.nodes:
            root = await self._fetch_node(tree, ROOT_PATH, None)
            if root is None:
                return
            tree.nodes[ROOT_PATH] = root
        if expand is None:
            expand = [p for p, n in tree.nodes.items() if self._needs_live_children(tree, n)]
        expanded: set[str] = set()
        await asyncio.gather(*(self._expand(tree, p, deadline, expanded) for p in expand))

    async def _expand(
        self, tree: AppTree, path: str, deadline: float | None, expanded: set[str]
    ) -> None:
        if path in expanded:
            return
        expanded.add(path)
        if deadline is not None and time.monotonic() > deadline:
            tree.note("read stopped at its time limit")
            return
        kids = await self._live_children(tree, path)
        if kids is None or path not in tree.nodes:
            return
        tree.nodes[path].children = kids
        unknown = [(k, path) for k in kids if k not in tree.nodes]
        if len(tree.nodes) + len(unknown) > MAX_NODES:
            tree.note(f"tree larger than {MAX_NODES} nodes: truncated")
            unknown = unknown[: max(0, MAX_NODES - len(tree.nodes))]
        if tree.lazy_hidden and self._closed_menu(tree, path):
            # its items are hidden until it opens: listed, not read (LibreOffice's menu bar,
            # read live, has ~300 of them); opening it re-reads them (see refresh)
            for kid, parent in unknown:
                tree.nodes[kid] = RawNode.hidden_stub(kid, parent, 0)
            tree.nodes[path].closed = True
            return
        wanted: list[tuple[str, str | None, list[Any] | None]] = [(k, p, None) for k, p in unknown]
        if tree.lazy_hidden:
            wanted = list(await self._skip_hidden(tree, unknown))
        fetched = await self._fetch_nodes(tree, wanted)
        deeper = []
        for node in fetched:
            if node is None or node.path in tree.nodes:
                continue
            tree.nodes[node.path] = node
            tree.live_fetched += 1
            if node.child_count > 0 or (node.child_count < 0 and node.displayed):
                deeper.append(node.path)
            else:
                node.children = []
        await asyncio.gather(*(self._expand(tree, p, deadline, expanded) for p in deeper))

    async def _skip_hidden(
        self, tree: AppTree, unknown: list[tuple[str, str]]
    ) -> list[tuple[str, str, list[Any]]]:
        """Keep hidden nodes as stubs (state only); return the ones to read in full."""
        calls = [self.bus.request(tree.bus, k, "Accessible", "GetState") for k, _p in unknown]
        await _settled(calls)
        full: list[tuple[str, str, list[Any]]] = []
        for (kid, parent), call in zip(unknown, calls, strict=True):
            if (exc := call.exception()) is not None:
                _failed(tree, "GetState", exc)
                continue
            body = call.result()
            bits = state_bits(body[0])
            if self._shows(tree, bits) or self._in_combo(tree, parent):
                # a collapsed combo box's popup is hidden, but its selected item is SHOWING
                # (Chromium): read it, so that the combo can show its value
                full.append((kid, parent, body))
            else:
                tree.nodes[kid] = RawNode.hidden_stub(kid, parent, bits)
        return full

    @classmethod
    def _closed_menu(cls, tree: AppTree, path: str) -> bool:
        node = tree.nodes[path]
        return (
            node.role_name == "menu"
            and not node.states & (S_EXPANDED | S_SELECTED)
            and not cls._in_combo(tree, node.parent)
        )

    @staticmethod
    def _shows(tree: AppTree, bits: int) -> bool:
        return bool(bits & S_SHOWING or (not tree.uses_showing and bits & S_VISIBLE))

    @staticmethod
    def _in_combo(tree: AppTree, path: str | None) -> bool:
        """Whether ``path`` is a combo box or its popup (two levels at most)."""
        for _ in range(2):
            node = tree.nodes.get(path) if path else None
            if node is None:
                return False
            if node.role_name == "combo-box":
                return True
            path = node.parent
        return False

    async def _live_children(self, tree: AppTree, path: str) -> list[str] | None:
        node = tree.nodes[path]
        if node.states & S_MANAGES_DESCENDANTS and node.child_count > MAX_MANAGED_CHILDREN:
            tree.note(
                f"{node.role_name} with {node.child_count} items: first {MAX_MANAGED_CHILDREN} read"
            )
            calls = [
                self.bus.call(tree.bus, path, "Accessible", "GetChildAtIndex", "i", [i])
                for i in range(MAX_MANAGED_CHILDREN)
            ]
            got = await self._guard(tree, "GetChildAtIndex", asyncio.gather(*calls))
            if got is None:
                return None
            return [str(b[0][1]) for b in got if b[0][0] == tree.bus]
        body = await self._guard(
            tree, "GetChildren", self.bus.call(tree.bus, path, "Accessible", "GetChildren")
        )
        if body is None:
            return None
        # children living on another bus (embedded plugs) are not followed
        return [str(p) for b, p in body[0] if b == tree.bus and p != NULL_PATH]

    async def _fetch_node(
        self, tree: AppTree, path: str, parent: str | None, state: list[Any] | None = None
    ) -> RawNode | None:
        """Read one node live (its state may be known already: one call fewer)."""
        return (await self._fetch_nodes(tree, [(path, parent, state)]))[0]

    async def _fetch_nodes(
        self, tree: AppTree, wanted: list[tuple[str, str | None, list[Any] | None]]
    ) -> list[RawNode | None]:
        """Read nodes live, all calls in flight together. A node whose state is given and
        shows gets its extents in the same round (they would be asked for right after)."""
        bus = tree.bus
        # Qt has no working GetAll: on Qt 5 (KeePassXC) it even crashes the app
        qt = (await self.bus.toolkit(bus)).lower().startswith("qt")
        req = self.bus.request
        plans: list[dict[str, asyncio.Future[list[Any]]]] = []
        for path, _parent, state in wanted:
            calls = {
                "role": req(bus, path, "Accessible", "GetRole"),
                "ifaces": req(bus, path, "Accessible", "GetInterfaces"),
            }
            if state is None:
                calls["state"] = req(bus, path, "Accessible", "GetState")
            if qt:
                for prop in ("Name", "Description", "ChildCount"):
                    calls[prop] = req(bus, path, DBUS_PROPS, "Get", "ss", [ACCESSIBLE, prop])
            else:
                calls["all"] = req(bus, path, DBUS_PROPS, "GetAll", "s", [ACCESSIBLE])
            if state is not None and self._shows(tree, state_bits(state[0])):
                calls["extents"] = req(bus, path, "Component", "GetExtents", "u", [0])
            plans.append(calls)
        await _settled(c for calls in plans for c in calls.values())
        out = []
        for (path, parent, state), calls in zip(wanted, plans, strict=True):
            out.append(await self._node_from(tree, path, parent, state, calls))
        return out

    async def _node_from(
        self,
        tree: AppTree,
        path: str,
        parent: str | None,
        state: list[Any] | None,
        calls: dict[str, asyncio.Future[list[Any]]],
    ) -> RawNode | None:
        errors = {k: e for k, c in calls.items() if (e := c.exception()) is not None}
        extents = None
        if "extents" in calls:
            if "extents" in errors:
                _failed(tree, "GetExtents", errors.pop("extents"))
            else:
                x, y, w, h = calls["extents"].result()[0]
                extents = (int(x), int(y), int(w), int(h))
        props: tuple[str, str, int] | None = None
        failed_all = errors.get("all")
        if isinstance(failed_all, AtspiCallError) and failed_all.unsupported:
            del errors["all"]  # no GetAll after all: one Get per property
            props = await self._guard(tree, "node properties", self._props_each(tree.bus, path))
            if props is None:
                return None
        if errors:
            _failed(tree, "node properties", next(iter(errors.values())))
            return None
        if props is None and "all" in calls:
            values = calls["all"].result()[0]
            props = (
                str(values["Name"].value) if "Name" in values else "",
                str(values["Description"].value) if "Description" in values else "",
                int(values["ChildCount"].value) if "ChildCount" in values else 0,
            )
        elif props is None:
            props = (
                str(calls["Name"].result()[0].value),
                str(calls["Description"].result()[0].value),
                int(calls["ChildCount"].result()[0].value),
            )
        name, desc, count = props
        state = state if state is not None else calls["state"].result()
        return RawNode(
            path,
            parent,
            -1,
            count,
            _short_ifaces(calls["ifaces"].result()[0]),
            name,
            int(calls["role"].result()[0]),
            desc,
            state_bits(state[0]),
            extents=extents,
        )

    async def _props_each(self, bus: str, path: str) -> tuple[str, str, int]:
        name, desc, count = await asyncio.gather(
            self.bus.get_property(bus, path, "Accessible", "Name"),
            self.bus.get_property(bus, path, "Accessible", "Description"),
            self.bus.get_property(bus, path, "Accessible", "ChildCount"),
        )
        return str(name), str(desc), int(count)

    async def refresh(self, tree: AppTree, dirty: Dirty, *, deadline: float | None = None) -> None:
        """Bring a cached tree up to date with the changes events announced."""
        start = time.perf_counter()
        tree.partial, tree.problems = False, []
        tree._uses_showing = None
        props = [p for p in dirty.props if p in tree.nodes]
        fetched = await self._fetch_nodes(tree, [(p, tree.nodes[p].parent, None) for p in props])
        opened: list[str] = []
        for path, node in zip(props, fetched, strict=True):
            old = tree.nodes[path]
            if node is None:
                continue
            if old.stub:  # a hidden node read lazily: now read it in full
                node.children = None
                tree.nodes[path] = node
                if node.child_count > 0:
                    dirty.children.add(path)
                continue
            old.name, old.description, old.role = node.name, node.description, node.role
            old.states, old.interfaces = node.states, node.interfaces
            if old.closed and node.states & (S_EXPANDED | S_SELECTED):
                opened.append(path)
            if node.child_count != old.child_count:
                old.child_count = node.child_count
                dirty.children.add(path)
            old.label_ok = old.label_ok and bool(old.name)
        for path in opened:
            # a menu read closed has opened: read its items now (those not re-read above are
            # still stubs without a state)
            for kid in tree.nodes[path].children or []:
                if kid in tree.nodes and tree.nodes[kid].stub:
                    del tree.nodes[kid]
            tree.nodes[path].closed = False
            dirty.children.add(path)
        for path in dirty.text:
            if path in tree.nodes:
                tree.nodes[path].text_ok = False
        if dirty.all_extents:
            for node in tree.nodes.values():
                node.extents = None
        for path in dirty.extents | dirty.children:
            if path in tree.nodes:
                tree.nodes[path].extents = None
        expand = [p for p in dirty.children if p in tree.nodes]
        if expand:
            await self._repair(tree, deadline, expand)
            for path in expand:  # the subtree may have moved: re-measure it
                for sub in tree.subtree(path):
                    tree.nodes[sub].extents = None
        tree.elapsed_ms = (time.perf_counter() - start) * 1000

    # -- details for the nodes that will be shown -------------------------------------------

    async def fill_extents(self, tree: AppTree, paths: Iterable[str]) -> None:
        wanted = [
            p for p in paths if tree.nodes[p].has("Component") and tree.nodes[p].extents is None
        ]

        calls = [self.bus.request(tree.bus, p, "Component", "GetExtents", "u", [0]) for p in wanted]
        await _settled(calls)
        for path, call in zip(wanted, calls, strict=True):
            if (exc := call.exception()) is not None:
                _failed(tree, "GetExtents", exc)
                continue
            x, y, w, h = call.result()[0]
            tree.nodes[path].extents = (int(x), int(y), int(w), int(h))

    async def fill_labels(self, tree: AppTree, paths: Iterable[str]) -> None:
        """For unnamed fields, the name of the element that labels them (LABELLED_BY)."""

        async def one(path: str) -> None:
            body = await self._guard(
                tree, "GetRelationSet",
                self.bus.call(tree.bus, path, "Accessible", "GetRelationSet"),
            )  # fmt: skip
            if body is None:
                return
            tree.nodes[path].label_ok = True
            for rel_type, targets in body[0]:
                if int(rel_type) != RELATION_LABELLED_BY or not targets:
                    continue
                tbus, tpath = targets[0]
                target = tree.nodes.get(str(tpath)) if tbus == tree.bus else None
                if target is not None:
                    tree.nodes[path].label = target.name or (target.text or "")
                    tree.nodes[path].label_ok = True
                else:
                    got = await self._guard(
                        tree, "label name",
                        self.bus.get_property(str(tbus), str(tpath), "Accessible", "Name"),
                    )  # fmt: skip
                    tree.nodes[path].label = str(got or "")
                    tree.nodes[path].label_ok = True
                return

        await asyncio.gather(*(one(p) for p in paths if not tree.nodes[p].label_ok))

    async def fill_text(self, tree: AppTree, paths: Iterable[str], *, limit: int = 2000) -> None:
        """Fetch text content (Text.GetText) and range values (Value.CurrentValue)."""

        async def text(path: str) -> None:
            body = await self._guard(
                tree,
                "GetText",
                self.bus.call(tree.bus, path, "Text", "GetText", "ii", [0, -1]),
            )
            if body is not None:
                tree.nodes[path].text = str(body[0]).replace("\ufffc", "")

        async def value(path: str) -> None:
            got = await self._guard(
                tree,
                "CurrentValue",
                self.bus.get_property(tree.bus, path, "Value", "CurrentValue"),
            )
            if got is not None:
                number = float(got)
                tree.nodes[path].value = f"{number:g}"

        jobs = []
        todo = [p for p in paths if not tree.nodes[p].text_ok]
        for path in todo:
            node = tree.nodes[path]
            if node.has("Text"):
                jobs.append(text(path))
            if wants_value(node):
                jobs.append(value(path))
        before = len(tree.problems)
        await asyncio.gather(*jobs)
        if len(tree.problems) == before:  # all answered: current until a text/value event
            for path in todo:
                tree.nodes[path].text_ok = True
