"""The hybrid tree reader: one bulk ``Cache.GetItems`` per app, then targeted live repairs.

Measured in ../shared/notes/linux-desktop.md §1: the bulk call returns an app's whole cached
tree in 1–110 ms, but GTK4 fills its cache lazily, atk-bridge never caches the children of
``manages-descendants`` nodes (tree views, LibreOffice documents), LibreOffice leaves orphan
subtrees, and Qt answers with zero items. So after the bulk call we ask live (``GetChildren``)
wherever the cache is short of what a node says it has, fetch unknown children's properties
live, and re-attach orphans. Extents and text are fetched only for the nodes that will be shown.

Every call is bounded by the bus timeout; failures mark the read ``partial`` instead of raising.
The walk is here; the tree model is :mod:`atspi_model`, what a lazy read skips is
:mod:`atspi_lazy`, live node reads are :mod:`atspi_fetch`, and the details of shown nodes
(extents, text, labels) are :mod:`atspi_details`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from deskpilot.desktop.atspi_calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi_consts import (
    CACHE_PATH,
    NULL_PATH,
    ROOT_PATH,
    S_EXPANDED,
    S_MANAGES_DESCENDANTS,
    S_SELECTED,
)
from deskpilot.desktop.atspi_fetch import NodeFetcher
from deskpilot.desktop.atspi_lazy import closed_menu, needs_live_children, skip_hidden
from deskpilot.desktop.atspi_model import AppTree, Dirty, RawNode, node_from_item
from deskpilot.desktop.atspi_partial import guard

#: Children fetched live per manages-descendants node (huge tables/documents are truncated).
MAX_MANAGED_CHILDREN = 600
#: Nodes read per app at most.
MAX_NODES = 30000


class TreeReader(NodeFetcher):
    """Reads application trees from an :class:`AtspiBus`: the bulk cache, then live repairs."""

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
            node = node_from_item(item)
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
            expand = [p for p, n in tree.nodes.items() if needs_live_children(tree, n)]
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
        if tree.lazy_hidden and closed_menu(tree, path):
            # its items are hidden until it opens: listed, not read (LibreOffice's menu bar,
            # read live, has ~300 of them); opening it re-reads them (see refresh)
            for kid, parent in unknown:
                tree.nodes[kid] = RawNode.hidden_stub(kid, parent, 0)
            tree.nodes[path].closed = True
            return
        wanted: list[tuple[str, str | None, list[Any] | None]] = [(k, p, None) for k, p in unknown]
        if tree.lazy_hidden:
            wanted = list(await skip_hidden(self.bus, tree, unknown))
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
            got = await guard(tree, "GetChildAtIndex", asyncio.gather(*calls))
            if got is None:
                return None
            return [str(b[0][1]) for b in got if b[0][0] == tree.bus]
        body = await guard(
            tree, "GetChildren", self.bus.call(tree.bus, path, "Accessible", "GetChildren")
        )
        if body is None:
            return None
        # children living on another bus (embedded plugs) are not followed
        return [str(p) for b, p in body[0] if b == tree.bus and p != NULL_PATH]

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

    # -- details for the nodes that will be shown -------------------------------------------
