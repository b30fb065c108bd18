"""The hybrid tree reader: one bulk ``Cache.GetItems`` per app, then targeted live repairs.

Measured on GTK 3 and 4, Qt and LibreOffice apps: the bulk call returns an app's whole cached
tree in 1–110 ms, but GTK4 fills its cache lazily, atk-bridge never caches the children of
``manages-descendants`` nodes (tree views, LibreOffice documents), LibreOffice leaves orphan
subtrees, and Qt answers with zero items. So after the bulk call we ask live (``GetChildren``)
wherever the cache is short of what a node says it has, fetch unknown children's properties
live, and re-attach orphans. Extents and text are fetched only for the nodes that will be shown.

LibreOffice is never asked GetItems: atk-bridge answers it by taking a reference on every
object in its cache, and LibreOffice leaves freed objects there after dialogs and menus come
and go — soffice aborts in ``g_object_ref`` (seen 2 times in 10 runs of 60 reads with a menu
and a dialog). Its windows are read live.

The live calls go to the app's own connection where it has one (:mod:`.peers`: atk-bridge
apps), opened while the cache is asked.

A read covers one window (its frame's subtree), never the whole app, and is bounded: by a
deadline, by MAX_CALLS calls, by MAX_NODES nodes, and on the app's side by never listing the
children of a virtual container (a spreadsheet reports 2^31 - 1 of them: see
:mod:`.virtual`). Every call is bounded by the bus timeout, and an app that stops
answering stops the read (the bus fails further calls to it at once); failures mark the read
``partial`` instead of raising.

The walk is here; the tree model is :mod:`.model`, what a lazy read skips is
:mod:`.lazy`, virtual containers are :mod:`.virtual`, live node reads are
:mod:`.fetch`, and the details of shown nodes (extents, text, labels) are
:mod:`.details`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi.consts import (
    CACHE_PATH,
    NULL_PATH,
    ROOT_PATH,
    S_EXPANDED,
    S_SELECTED,
    state_bits,
)
from deskpilot.desktop.atspi.fetch import NodeFetcher
from deskpilot.desktop.atspi.lazy import (
    closed_menu,
    needs_live_children,
    shows_state,
    skip_hidden,
)
from deskpilot.desktop.atspi.model import AppTree, Dirty, RawNode, node_from_item
from deskpilot.desktop.atspi.partial import guard
from deskpilot.desktop.atspi.table import TableReader
from deskpilot.desktop.atspi.virtual import VirtualReader, is_virtual
from deskpilot.errors import DesktopError

#: Nodes read per app at most.
MAX_NODES = 30000
#: Live calls one read (or refresh) makes at most.
MAX_CALLS = 8000
#: Nodes under one whose sensitivity changed whose states a refresh reads again at most.
MAX_SENSITIVE_BELOW = 200
#: How long a cold read waits for the app's own connection (:mod:`.peers`) before it reads
#: through the bus (the calls after it is open go there).
PEER_WAIT_S = 0.5


class TreeReader:
    """Reads application trees from an :class:`AtspiBus`: the bulk cache, then live repairs
    (single nodes by :class:`.fetch.NodeFetcher`, virtual containers by
    :class:`.virtual.VirtualReader` and its :class:`.table.TableReader`)."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus
        self.fetcher = NodeFetcher(bus)
        self.tables = TableReader(bus, self.fetcher)
        self.virtual = VirtualReader(bus, self.tables)

    async def read_app(
        self,
        bus_name: str,
        *,
        frame: str | None = None,
        deadline: float | None = None,
        lazy_hidden: bool = False,
    ) -> AppTree:
        """One application's tree: the bulk cache, then live repairs — of one window's
        subtree when ``frame`` is given (a read of a dialog does not touch the main window),
        else of every window.

        With ``lazy_hidden``, nodes the cache does not have are first asked only for their
        state; those not SHOWING are kept as stubs and their subtrees are not read (Chromium
        keeps off-screen page content out of its cache: reading it all costs ~5 calls a node).
        """
        start = time.perf_counter()
        tree = AppTree(bus_name, lazy_hidden=lazy_hidden)
        # the app's own connection, opened while the cache is asked: the live calls go there
        items, _ = await asyncio.gather(
            self._get_items(tree), self.bus.peers.open(self.bus, bus_name, wait=PEER_WAIT_S)
        )
        for item in items or ():
            node = node_from_item(item)
            if node is not None and node.path not in tree.nodes:
                tree.nodes[node.path] = node
        tree.cached_items = len(tree.nodes)
        self._link_cached_children(tree)
        if frame is None:
            await self._repair(tree, deadline)
        else:
            await self.read_frame(tree, frame, deadline=deadline)
        tree.elapsed_ms = (time.perf_counter() - start) * 1000
        return tree

    async def read_frame(self, tree: AppTree, frame: str, *, deadline: float | None = None) -> None:
        """Repair one window's subtree of a tree (read live what the cache lacks there)."""
        tree.frames.add(frame)
        if frame not in tree.nodes:
            node = await self.fetcher.fetch_node(tree, frame, ROOT_PATH)
            if node is None:
                return
            tree.nodes[frame] = node
        expand = [p for p in tree.subtree(frame) if needs_live_children(tree, tree.nodes[p])]
        if frame not in expand and tree.nodes[frame].children is None:
            expand.append(frame)
        await self._repair(tree, deadline, expand)

    async def read_whole(self, tree: AppTree, path: str, *, deadline: float | None = None) -> None:
        """Read ``path``'s subtree in full, what is off screen too (a zoomed read of a scroll
        area lists every row): the stubs a lazy read left there are read, and hidden nodes'
        children listed. A closed menu's items stay unread."""
        lazy, tree.lazy_hidden = tree.lazy_hidden, False
        try:
            expand: list[str] = []
            for p in tree.subtree(path):
                node = tree.nodes[p]
                parent = tree.nodes.get(node.parent) if node.parent else None
                if node.stub and p != path and parent is not None and not parent.closed:
                    del tree.nodes[p]  # listed again and read by its parent's expansion
                    if parent.path not in expand:
                        expand.append(parent.path)
                elif not node.stub and not node.closed and needs_live_children(tree, node):
                    expand.append(p)
            if expand:
                await self._repair(tree, deadline, expand)
        finally:
            tree.lazy_hidden = lazy

    async def _get_items(self, tree: AppTree) -> list[Any] | None:
        if not await self.bus.cache_is_safe(tree.bus):
            return None  # the live walk below reads the window
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

    async def _repair(
        self, tree: AppTree, deadline: float | None, expand: list[str] | None = None
    ) -> None:
        """Ask live for children the cache lacks. Each node is expanded as soon as it is
        known (no level-by-level barrier), so the calls stay pipelined down deep trees."""
        if ROOT_PATH not in tree.nodes:
            root = await self.fetcher.fetch_node(tree, ROOT_PATH, None)
            if root is None:
                return
            tree.nodes[ROOT_PATH] = root
        if expand is None:
            expand = [p for p, n in tree.nodes.items() if needs_live_children(tree, n)]
            tree.frames.update(
                p for p in self._children_or_empty(tree, ROOT_PATH) if p in tree.nodes
            )
        expanded: set[str] = set()
        budget = self.bus.sent + MAX_CALLS
        await asyncio.gather(*(self._expand(tree, p, deadline, expanded, budget) for p in expand))

    @staticmethod
    def _children_or_empty(tree: AppTree, path: str) -> list[str]:
        node = tree.nodes.get(path)
        return list(node.children or []) if node is not None else []

    def _stop(self, tree: AppTree, deadline: float | None, budget: int) -> bool:
        """Whether the read must stop here (time, calls, or an app that stopped answering)."""
        if deadline is not None and time.monotonic() > deadline:
            tree.note("read stopped at its time limit")
            return True
        if self.bus.sent > budget:
            tree.note(f"read stopped after {MAX_CALLS} calls")
            return True
        if self.bus.stalled(tree.bus):
            tree.note("the app stopped answering (it may be busy or hung)")
            return True
        return False

    async def _expand(
        self, tree: AppTree, path: str, deadline: float | None, expanded: set[str], budget: int
    ) -> None:
        if path in expanded:
            return
        expanded.add(path)
        if self._stop(tree, deadline, budget):
            return
        kids = await self._live_children(tree, path)
        if kids is None or path not in tree.nodes:
            return
        tree.nodes[path].children = kids
        # cached nodes now linked here (orphans the cache had without their parent) may lack
        # children of their own
        known = [
            k
            for k in kids
            if k in tree.nodes and k not in expanded and needs_live_children(tree, tree.nodes[k])
        ]
        unknown = [(k, path) for k in kids if k not in tree.nodes]
        if len(tree.nodes) + len(unknown) > MAX_NODES:
            tree.note(f"tree larger than {MAX_NODES} nodes: truncated")
            unknown = unknown[: max(0, MAX_NODES - len(tree.nodes))]
        if tree.lazy_hidden and closed_menu(tree, path) and not await self._shows(tree, unknown):
            # its items are hidden until it opens: listed, not read (LibreOffice's menu bar,
            # read live, has ~300 of them); opening it re-reads them (see refresh)
            for kid, parent in unknown:
                tree.nodes[kid] = RawNode.hidden_stub(kid, parent, 0)
            tree.nodes[path].closed = True
            return
        wanted: list[tuple[str, str | None, list[Any] | None]] = [(k, p, None) for k, p in unknown]
        if tree.lazy_hidden:
            wanted = list(await skip_hidden(self.bus, tree, unknown))
        fetched = await self.fetcher.fetch_nodes(tree, wanted)
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
        await asyncio.gather(
            *(self._expand(tree, p, deadline, expanded, budget) for p in [*known, *deeper])
        )

    async def _shows(self, tree: AppTree, kids: list[tuple[str, str]]) -> bool:
        """Whether the first of a menu's items is on screen: a menu that shows its items is
        open whatever its own states say (a web page's menu inside its menu bar)."""
        if not kids:
            return False
        kid = kids[0][0]
        try:
            body = await self.bus.call(tree.bus, kid, "Accessible", "GetState")
        except DesktopError:
            return False  # the shortcut stands: the items are read when the menu opens
        return shows_state(tree, state_bits(body[0]))

    async def _live_children(self, tree: AppTree, path: str) -> list[str] | None:
        node = tree.nodes[path]
        if is_virtual(node):  # never listed: read by what it shows
            return await self.virtual.virtual_children(tree, path)
        body = await guard(
            tree, "GetChildren", self.bus.call(tree.bus, path, "Accessible", "GetChildren")
        )
        if body is None:
            return None
        # children living on another bus (embedded plugs) are not followed
        return [str(p) for b, p in body[0] if b == tree.bus and p != NULL_PATH]

    async def refresh(
        self,
        tree: AppTree,
        dirty: Dirty,
        *,
        frame: str | None = None,
        deadline: float | None = None,
    ) -> Dirty:
        """Bring a cached tree up to date with the changes events announced — under one
        window's frame when ``frame`` is given. Returns what is left for other windows."""
        start = time.perf_counter()
        tree.partial, tree.problems = False, []
        tree._uses_showing = None
        rest = Dirty()
        for path in dirty.sensitivity:  # what it holds changed with it, unannounced (GTK 3)
            below = tree.subtree(path) if path in tree.nodes else []
            if len(below) <= MAX_SENSITIVE_BELOW:  # a tool item, a row of controls
                dirty.props.update(p for p in below if not tree.nodes[p].stub)
        if frame is not None:
            tree.frames.add(frame)
            mine = {frame}
            rest.props = {p for p in dirty.props if p in tree.nodes and not tree.under(p, mine)}
            rest.children = {
                p for p in dirty.children if p in tree.nodes and not tree.under(p, mine)
            }
            rest.containers = {
                p for p in dirty.containers if p in tree.nodes and not tree.under(p, mine)
            }
            dirty.props -= rest.props
            dirty.children -= rest.children
            dirty.containers -= rest.containers
        self._virtual_changes(tree, dirty, frame)
        props = [p for p in dirty.props if p in tree.nodes]
        fetched = await self.fetcher.fetch_nodes(
            tree, [(p, tree.nodes[p].parent, None) for p in props]
        )
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
            old.actions = None  # listeners come and go with states: ask again
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
        return rest

    @staticmethod
    def _virtual_changes(tree: AppTree, dirty: Dirty, frame: str | None) -> None:
        """A virtual container shows another range after scrolling, and its cells change
        without telling: re-read it when anything in or around it changed."""
        touched = dirty.props | dirty.children | dirty.extents | dirty.text | dirty.containers
        parents = {tree.nodes[p].parent for p in touched if p in tree.nodes}
        for path in list(tree.virtual):
            if path not in tree.nodes:
                del tree.virtual[path]
                continue
            if frame is not None and not tree.under(path, {frame}):
                continue
            if dirty.all_extents or path in touched or path in parents:
                dirty.children.add(path)
                for cell in tree.nodes[path].children or []:
                    if cell in tree.nodes:
                        tree.nodes[cell].text_ok = False

    # -- details for the nodes that will be shown -------------------------------------------
