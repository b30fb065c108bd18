"""The accessibility port over AT-SPI: :class:`AtspiAccessibility`.

It opens the accessibility bus as libatspi finds it, registers for the events the cache and
the settle need, and answers the port's questions by composing :class:`.frames.WindowTrees`
(windows' frames and trees), :class:`.elements.ElementActions` (checks and actions on one
element) and one-call primitives over :class:`.bus.AtspiBus`. Keys are (bus name, object
path). Shared by every backend whose apps speak AT-SPI (X11 and the Wayland compositors).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from dbus_fast import Variant

from deskpilot.config import Settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import A11Y, DBUS_PROPS, AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi.consts import NULL_PATH, role_name, state_bits, state_names
from deskpilot.desktop.atspi.details import RELATION_LABELLED_BY
from deskpilot.desktop.atspi.elements import ElementActions
from deskpilot.desktop.atspi.frames import EVENTS_INCOMPLETE, WindowTrees
from deskpilot.desktop.base import LiveElement, Node, Rect, WindowInfo
from deskpilot.desktop.caret import LINE_SCAN, SHOWN_SELECTION, Caret, line_and_column
from deskpilot.desktop.cell_refs import Place
from deskpilot.desktop.ports.accessibility import Settled, TreeRead
from deskpilot.desktop.ports.identity import ElementKey, WindowHandle
from deskpilot.desktop.toolkits import diagnose
from deskpilot.errors import AccessibilityUnavailable


async def connect_a11y(settings: Settings) -> AtspiBus:
    """The accessibility bus, found as libatspi finds it: the address named in the settings
    (AT_SPI_BUS_ADDRESS, or the root window's AT_SPI_BUS found by discovery), else through
    org.a11y.Bus on the session bus."""
    if settings.a11y_bus:
        try:
            return await AtspiBus.connect(settings.session_bus, a11y_address=settings.a11y_bus)
        except AccessibilityUnavailable:
            if not settings.session_bus:
                raise  # a stale AT_SPI_BUS and nothing else to ask
    return await AtspiBus.connect(settings.session_bus)


#: How long the first registry call may take (it may start the registry).
REGISTRY_START_S = 20.0


class AtspiAccessibility:
    """Apps' trees and elements on one AT-SPI bus (see the module docstring)."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus
        self.elements = ElementActions(bus)
        self.trees = WindowTrees(bus, self.elements)
        #: (app, window) whose read was looked through for the focus the app never reported
        self._looked: set[tuple[str, WindowHandle]] = set()

    @classmethod
    async def open(cls, settings: Settings) -> AtspiAccessibility:
        bus = await connect_a11y(settings)
        try:
            # the first call starts the registry (D-Bus activation): on a new sandbox on a
            # loaded machine (six sessions starting at once) that took longer than a call's 2 s
            await bus.register_events(timeout=REGISTRY_START_S)
            await bus.listen()
        except BaseException:
            await bus.close()
            raise
        return cls(bus)

    # -- windows' trees ---------------------------------------------------------------------

    async def unreadable(self, pids: Sequence[int]) -> str | None:
        for pid in pids:
            if await self.trees.buses_for_pid(pid):
                return None
        verdict = diagnose(pids)  # the toolkit the process loaded, and its bridge
        return verdict.text() if verdict.final else None

    async def read_window(
        self,
        window: WindowInfo,
        *,
        timeout: float = 5.0,
        fresh: bool = False,
        whole: ElementKey | None = None,
        popups: Sequence[Rect] = (),
    ) -> TreeRead:
        read = TreeRead(
            *await self.trees.read_window(
                window, timeout=timeout, fresh=fresh, whole=whole, popups=popups
            )
        )
        if read.root is not None:
            self._learn_focus(window, read.root)
        return read

    def _learn_focus(self, window: WindowInfo, root: Node) -> None:
        """Tell the focus tracker where the focus is in an app that has not reported it (it
        took the focus before this process listened): the focused element the read found.
        Looked for once per window (a walk of a large page's tree costs milliseconds)."""
        tracker = self.trees.focus
        bus = root.key[0]
        if bus in tracker.heard or bus in tracker.focused or (bus, window.handle) in self._looked:
            return
        self._looked.add((bus, window.handle))
        stack = [root]
        while stack:
            node = stack.pop()
            if "focused" in node.states:
                tracker.learn(node.key[0], node.key[1])
                return
            stack.extend(node.children)

    async def read_cells(
        self, window: WindowInfo, key: ElementKey, first: Place, last: Place
    ) -> tuple[Node | None, list[str]]:
        return await self.trees.read_cells(window, key, first, last)

    async def element_at(self, window: WindowInfo, x: int, y: int) -> LiveElement | None:
        return await self.trees.element_at(window, x, y)

    async def origin(self, window: WindowInfo, *, fresh: bool = False) -> tuple[int, int] | None:
        if fresh:
            located = await self.trees.locate(window)
            return located[2] if located is not None else None
        where = self.trees.cache.located.get(window.handle)
        return where.offset if where is not None else None

    async def web_engine(self, window: WindowInfo) -> bool | None:
        where = self.trees.cache.located.get(window.handle)
        if where is None:
            return None
        return (await self.bus.toolkit(where.bus)).casefold() in EVENTS_INCOMPLETE

    async def focused(self, window: WindowInfo) -> ElementKey | None:
        return self.trees.focus.of(await self.trees.buses_for_pid(window.pid))

    async def settle(self, window: WindowInfo, since: float) -> Settled:
        buses = await self.trees.buses_for_pid(window.pid)
        if not buses:
            return Settled(reacted=False)
        focus = self.trees.focus.focused  # kept current by the events

        async def flush() -> float | None:  # a web engine's changes held back (frames.flush)
            return await self.trees.flush(window)

        results = await asyncio.gather(
            *(self.bus.settle(b, since, focus=focus, flush=flush) for b in buses)
        )
        # a window the app announced since then (a dialog it opened), other than this one
        where = self.trees.cache.located.get(window.handle)
        frame = where.frame if where is not None else None
        announced = [
            seen
            for b in buses
            if (seen := self.bus.last_window.get(b)) is not None
            and seen[0] > since
            and seen[1] != frame
        ]
        return Settled(reacted=any(results), new_window=bool(announced))

    def events_seen(self) -> int:
        return self.bus.events_seen

    async def next_event(self, seen: int, timeout: float) -> int:
        return await self.bus.next_event(seen, timeout)

    # -- element checks and actions ---------------------------------------------------------

    async def inspect(self, key: ElementKey, pid: int | None = None) -> LiveElement | None:
        return await self.elements.inspect(key, pid)

    async def extents(self, key: ElementKey) -> Rect | None:
        return await self.elements.extents(key)

    async def text_extents(self, key: ElementKey) -> Rect | None:
        return await self.elements.text_box(key)

    async def read_text(self, key: ElementKey) -> str | None:
        return await self.elements.read_text(key)

    async def deep_text(self, key: ElementKey, limit: int = 200) -> str | None:
        return await self.elements.deep_text(key, limit)

    async def caret(self, key: ElementKey) -> Caret | None:
        bus = self.bus
        try:
            offset = int(await bus.get_property(*key, "Text", "CaretOffset"))
            length = int(await bus.get_property(*key, "Text", "CharacterCount"))
            count = int((await bus.call(*key, "Text", "GetNSelections"))[0])
        except (AtspiCallError, AtspiTimeout):
            return None  # no Text, or it is gone
        if offset < 0:
            return None  # a text without a caret (a label)
        line = column = None
        with contextlib.suppress(AtspiCallError, AtspiTimeout):
            if offset <= LINE_SCAN:
                before = (await bus.call(*key, "Text", "GetText", "ii", [0, offset]))[0]
                line, column = line_and_column(str(before))
        selections: list[tuple[int, int, str]] = []
        for i in range(min(count, 4)):
            with contextlib.suppress(AtspiCallError, AtspiTimeout):
                start, end = (
                    int(v) for v in await bus.call(*key, "Text", "GetSelection", "i", [i])
                )
                if end > start:
                    stop = min(end, start + SHOWN_SELECTION + 1)
                    text = (await bus.call(*key, "Text", "GetText", "ii", [start, stop]))[0]
                    selections.append((start, end, str(text).replace("\ufffc", "")))
        return Caret(key, offset, line, column, length, selections)

    async def select_text(self, key: ElementKey, start: int, end: int) -> bool:
        bus = self.bus
        try:
            count = int((await bus.call(*key, "Text", "GetNSelections"))[0])
            if count > 0:
                done = await bus.call(*key, "Text", "SetSelection", "iii", [0, start, end])
            else:
                done = await bus.call(*key, "Text", "AddSelection", "ii", [start, end])
        except (AtspiCallError, AtspiTimeout):
            return False  # no Text, or it is gone
        return bool(done[0])

    async def action_names(self, key: ElementKey) -> list[str]:
        return await self.elements.action_names(key)

    async def activate(self, key: ElementKey) -> str | None:
        return await self.elements.activate(key)

    async def set_text(self, key: ElementKey, text: str, *, masked: bool = False) -> str | None:
        return await self.elements.set_text(key, text, masked=masked)

    async def editable_parts(self, key: ElementKey, limit: int = 24) -> list[ElementKey]:
        return await self.elements.editable_parts(key, limit)

    async def grab_focus(self, key: ElementKey) -> bool:
        return await self.elements.grab_focus(key)

    async def scroll_into_view(self, key: ElementKey) -> bool:
        return await self.elements.scroll_into_view(key)

    async def cell_at(self, key: ElementKey, row: int, col: int) -> ElementKey | None:
        return await self.elements.cell_at(key, row, col)

    async def cell_place(self, table: ElementKey, cell: ElementKey) -> Place | None:
        bus = self.bus
        try:
            index = int((await bus.call(*cell, "Accessible", "GetIndexInParent"))[0])
            if index >= 0:
                row = int((await bus.call(*table, "Table", "GetRowAtIndex", "i", [index]))[0])
                col = int((await bus.call(*table, "Table", "GetColumnAtIndex", "i", [index]))[0])
                if row >= 0 and col >= 0:
                    return (row, col)
        except (AtspiCallError, AtspiTimeout):
            pass
        return None

    # -- element primitives -----------------------------------------------------------------

    async def children(self, key: ElementKey) -> list[ElementKey]:
        body = await self.bus.call(*key, "Accessible", "GetChildren")
        return [(str(b), str(p)) for b, p in body[0]]

    async def child_count(self, key: ElementKey) -> int:
        return int(await self.bus.get_property(*key, "Accessible", "ChildCount"))

    async def child_at(self, key: ElementKey, index: int) -> ElementKey:
        body = await self.bus.call(*key, "Accessible", "GetChildAtIndex", "i", [index])
        return (str(body[0][0]), str(body[0][1]))

    async def parent(self, key: ElementKey) -> ElementKey | None:
        pbus, ppath = await self.bus.get_property(*key, "Accessible", "Parent")
        if not pbus or ppath == NULL_PATH:
            return None
        return (str(pbus), str(ppath))

    async def role(self, key: ElementKey) -> str:
        return role_name(int((await self.bus.call(*key, "Accessible", "GetRole"))[0]))

    async def name(self, key: ElementKey) -> str:
        return str(await self.bus.get_property(*key, "Accessible", "Name"))

    async def states(self, key: ElementKey) -> frozenset[str]:
        body = await self.bus.call(*key, "Accessible", "GetState")
        return state_names(state_bits(body[0]))

    async def attributes(self, key: ElementKey) -> dict[str, str]:
        body = await self.bus.call(*key, "Accessible", "GetAttributes")
        return {str(k): str(v) for k, v in dict(body[0]).items()}

    async def labels(self, key: ElementKey) -> list[ElementKey]:
        body = await self.bus.call(*key, "Accessible", "GetRelationSet")
        return [
            (str(b), str(p))
            for kind, targets in body[0]
            if int(kind) == RELATION_LABELLED_BY
            for b, p in targets
        ]

    async def interfaces(self, key: ElementKey) -> frozenset[str]:
        return await self.elements.interfaces(key)

    async def value(self, key: ElementKey) -> float:
        return float(await self.bus.get_property(*key, "Value", "CurrentValue"))

    async def set_value(self, key: ElementKey, value: float) -> None:
        await self.bus.call(
            *key, DBUS_PROPS, "Set", "ssv", [A11Y + "Value", "CurrentValue", Variant("d", value)]
        )

    async def selected_child(self, key: ElementKey) -> ElementKey | None:
        body = await self.bus.call(*key, "Selection", "GetSelectedChild", "i", [0])
        bus_name, path = body[0]
        return (str(bus_name), str(path)) if bus_name else None

    async def do_action(self, key: ElementKey, index: int) -> bool:
        return bool((await self.bus.call(*key, "Action", "DoAction", "i", [index]))[0])

    # -- the connection ---------------------------------------------------------------------

    def lost(self) -> str | None:
        if not self.bus.bus.connected:
            return "the accessibility bus closed its connection"
        return None

    async def close(self) -> None:
        await self.bus.close()
