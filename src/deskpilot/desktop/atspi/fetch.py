"""Reading nodes live: every call of a batch in flight together, then one node from each set.

Where the bulk cache lacks nodes, their role, interfaces, state and properties are asked one
call each (``GetAll`` for the properties, except on Qt, where ``GetAll`` is broken and one
``Get`` per property is made); a node whose state is known and shows gets its extents in the
same round. Calls are made as futures (:meth:`AtspiBus.request`) and awaited together: a cold
read makes about a thousand of them, and a task or coroutine for each costs more than the call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import A11Y, DBUS_PROPS, AtspiCallError
from deskpilot.desktop.atspi.consts import state_bits
from deskpilot.desktop.atspi.lazy import shows_state
from deskpilot.desktop.atspi.model import AppTree, RawNode, short_ifaces
from deskpilot.desktop.atspi.partial import guard, note_failure, settled

ACCESSIBLE = A11Y + "Accessible"


class NodeFetcher:
    """Reads single nodes of an app's tree live from an :class:`AtspiBus`."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus

    async def fetch_node(
        self, tree: AppTree, path: str, parent: str | None, state: list[Any] | None = None
    ) -> RawNode | None:
        """Read one node live (its state may be known already: one call fewer)."""
        return (await self.fetch_nodes(tree, [(path, parent, state)]))[0]

    async def fetch_nodes(
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
            if state is not None and shows_state(tree, state_bits(state[0])):
                calls["extents"] = req(bus, path, "Component", "GetExtents", "u", [0])
            plans.append(calls)
        await settled(c for calls in plans for c in calls.values())
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
                note_failure(tree, "GetExtents", errors.pop("extents"))
            else:
                x, y, w, h = calls["extents"].result()[0]
                extents = (int(x), int(y), int(w), int(h))
        props: tuple[str, str, int] | None = None
        failed_all = errors.get("all")
        if isinstance(failed_all, AtspiCallError) and failed_all.unsupported:
            del errors["all"]  # no GetAll after all: one Get per property
            props = await guard(tree, "node properties", self._props_each(tree.bus, path))
            if props is None:
                return None
        if errors:
            note_failure(tree, "node properties", next(iter(errors.values())))
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
            short_ifaces(calls["ifaces"].result()[0]),
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
