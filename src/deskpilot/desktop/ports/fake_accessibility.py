"""The accessibility port of the in-memory fake desktop (:mod:`.fake`): trees and elements.

Reads are copies of the fake apps' trees with their texts filled in; activating a calculator's
button presses it, setting an editable text replaces the app's text; element primitives answer
from the tree and raise :class:`~deskpilot.errors.ElementCallFailed` for an element that is not
there, as a real backend does for one that is gone. Its events are the world's changes: the
count of events seen moves whenever what a read would show changed (an app's own events, on a
real desktop), however the world was changed.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence

from deskpilot.desktop.base import LiveElement, Node, Rect, WindowInfo
from deskpilot.desktop.caret import Caret
from deskpilot.desktop.cell_refs import Place
from deskpilot.desktop.ports.accessibility import Settled, TreeRead
from deskpilot.desktop.ports.fake_world import FakeWorld
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.errors import ElementCallFailed


class FakeAccessibility:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world
        self._events = 0
        self._shown: int | None = None  # what a read showed when last looked at

    # -- windows' trees ---------------------------------------------------------------------
    async def unreadable(self, pids: Sequence[int]) -> str | None:
        return None  # every fake app is readable

    async def read_window(
        self,
        window: WindowInfo,
        *,
        timeout: float = 5.0,
        fresh: bool = False,
        whole: ElementKey | None = None,
        popups: Sequence[Rect] = (),
    ) -> TreeRead:
        w = self.world.of(window.handle)
        if w is None:
            return TreeRead(None, True, ["no accessible frame found"])
        root = copy.deepcopy(w.root)
        for node in root.walk():
            node.text = self.world.text_of(w, node)
        return TreeRead(root, False, [])

    async def read_cells(
        self, window: WindowInfo, key: ElementKey, first: Place, last: Place
    ) -> tuple[Node | None, list[str]]:
        return None, ["the fake apps have no tables"]

    async def element_at(self, window: WindowInfo, x: int, y: int) -> LiveElement | None:
        hit = self.world.hit(x, y)
        return None if hit is None else await self.inspect(hit[1].key)

    async def origin(self, window: WindowInfo, *, fresh: bool = False) -> tuple[int, int] | None:
        return (0, 0) if self.world.of(window.handle) is not None else None

    async def web_engine(self, window: WindowInfo) -> bool | None:
        return False

    async def focused(self, window: WindowInfo) -> ElementKey | None:
        return self.world.focus

    async def settle(self, window: WindowInfo, since: float) -> Settled:
        return Settled(reacted=True)

    def events_seen(self) -> int:
        shown = self._digest()
        if shown != self._shown:
            self._shown = shown
            self._events += 1
        return self._events

    def _digest(self) -> int:
        """What reads of the world would show, as one number."""
        world = self.world
        return hash(
            (
                world.active,
                world.focus,
                tuple(
                    (
                        w.info.handle,
                        w.info.title,
                        w.info.geometry,
                        w.info.hidden,
                        tuple(
                            (
                                n.key,
                                n.role,
                                n.name,
                                n.states,
                                n.bounds,
                                n.value,
                                len(n.children),
                                world.text_of(w, n),
                            )
                            for n in w.root.walk()
                        ),
                    )
                    for w in world.windows
                ),
            )
        )

    async def next_event(self, seen: int, timeout: float) -> int:
        await asyncio.sleep(min(timeout, 0.001))  # the world changes only when acted on
        return self.events_seen()

    # -- element checks and actions ---------------------------------------------------------
    async def inspect(self, key: ElementKey, pid: int | None = None) -> LiveElement | None:
        found = self.world.find(key)
        if found is None:
            return None
        w, n = found
        states = n.states | ({"focused"} if self.world.focus == key else set())
        return LiveElement(key, w.info.pid, n.role, n.name, n.parent_key, states, None)

    async def extents(self, key: ElementKey) -> Rect | None:
        found = self.world.find(key)
        return None if found is None else found[1].bounds

    async def text_extents(self, key: ElementKey) -> Rect | None:
        return None

    async def read_text(self, key: ElementKey) -> str | None:
        found = self.world.find(key)
        return None if found is None else self.world.text_of(*found)

    async def deep_text(self, key: ElementKey, limit: int = 200) -> str | None:
        return await self.read_text(key)

    async def caret(self, key: ElementKey) -> Caret | None:
        return None

    async def select_text(self, key: ElementKey, start: int, end: int) -> bool:
        return False  # the fake apps' texts have no selection

    async def action_names(self, key: ElementKey) -> list[str]:
        found = self.world.find(key)
        return ["click"] if found is not None and "Action" in found[1].interfaces else []

    async def activate(self, key: ElementKey) -> str | None:
        found = self.world.find(key)
        if found is None or "Action" not in found[1].interfaces:
            return None
        self.world.press(found[0], found[1].name)
        return "click"

    async def set_text(self, key: ElementKey, text: str, *, masked: bool = False) -> str | None:
        found = self.world.find(key)
        if found is None or "EditableText" not in found[1].interfaces:
            return None
        found[0].display = text
        self.world.log.append(f"set_text {text!r}")
        return "EditableText.SetTextContents"

    async def editable_parts(self, key: ElementKey, limit: int = 24) -> list[ElementKey]:
        return []

    async def grab_focus(self, key: ElementKey) -> bool:
        found = self.world.find(key)
        if found is None or not ({"editable", "focusable"} & found[1].states):
            return False
        self.world.focus = key
        return True

    async def scroll_into_view(self, key: ElementKey) -> bool:
        return False

    async def cell_at(self, key: ElementKey, row: int, col: int) -> ElementKey | None:
        return None

    async def cell_place(self, table: ElementKey, cell: ElementKey) -> Place | None:
        return None

    # -- element primitives -----------------------------------------------------------------
    async def children(self, key: ElementKey) -> list[ElementKey]:
        return [c.key for c in self.world.node(key).children]

    async def child_count(self, key: ElementKey) -> int:
        return len(self.world.node(key).children)

    async def child_at(self, key: ElementKey, index: int) -> ElementKey:
        kids = self.world.node(key).children
        if not 0 <= index < len(kids):
            raise ElementCallFailed(f"no child {index}")
        return kids[index].key

    async def parent(self, key: ElementKey) -> ElementKey | None:
        return self.world.node(key).parent_key

    async def role(self, key: ElementKey) -> str:
        return self.world.node(key).role

    async def name(self, key: ElementKey) -> str:
        return self.world.node(key).name

    async def states(self, key: ElementKey) -> frozenset[str]:
        return self.world.node(key).states

    async def attributes(self, key: ElementKey) -> dict[str, str]:
        self.world.node(key)
        return {}

    async def labels(self, key: ElementKey) -> list[ElementKey]:
        self.world.node(key)
        return []  # fake apps label their fields by name

    async def interfaces(self, key: ElementKey) -> frozenset[str]:
        return self.world.node(key).interfaces

    async def value(self, key: ElementKey) -> float:
        self.world.node(key)
        raise ElementCallFailed("the fake apps' elements have no value")

    async def set_value(self, key: ElementKey, value: float) -> None:
        self.world.node(key)
        raise ElementCallFailed("the fake apps' elements have no value")

    async def selected_child(self, key: ElementKey) -> ElementKey | None:
        self.world.node(key)
        return None

    async def do_action(self, key: ElementKey, index: int) -> bool:
        return await self.activate(key) is not None

    def lost(self) -> str | None:
        return None

    async def close(self) -> None:
        pass
