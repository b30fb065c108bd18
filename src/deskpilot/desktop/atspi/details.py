"""Details for the nodes a read will show: extents, text and values, labels of unnamed fields.

The tree walk (:mod:`.tree`) reads structure, names and states; what only the shown nodes
need is fetched here, once each (marked ``text_ok``/``label_ok`` until an event says otherwise):
``Component.GetExtents``, ``Text.GetText``, ``Value.CurrentValue`` and the ``LABELLED_BY``
relation.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.model import AppTree, wants_value
from deskpilot.desktop.atspi.partial import guard, note_failure, settled

#: AtspiRelationType LABELLED_BY
RELATION_LABELLED_BY = 2


class DetailReader:
    """Fills in the details of shown nodes from an :class:`AtspiBus`."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus

    def _late(self, tree: AppTree, deadline: float | None) -> bool:
        """Whether the read is past its deadline or the app stopped answering (noted)."""
        if deadline is not None and time.monotonic() > deadline:
            tree.note("read stopped at its time limit")
            return True
        if self.bus.stalled(tree.bus):
            tree.note("the app stopped answering (it may be busy or hung)")
            return True
        return False

    async def fill_extents(
        self, tree: AppTree, paths: Iterable[str], *, deadline: float | None = None
    ) -> None:
        if self._late(tree, deadline):
            return
        wanted = [
            p for p in paths if tree.nodes[p].has("Component") and tree.nodes[p].extents is None
        ]

        calls = [self.bus.request(tree.bus, p, "Component", "GetExtents", "u", [0]) for p in wanted]
        await settled(calls)
        for path, call in zip(wanted, calls, strict=True):
            if (exc := call.exception()) is not None:
                note_failure(tree, "GetExtents", exc)
                continue
            x, y, w, h = call.result()[0]
            tree.nodes[path].extents = (int(x), int(y), int(w), int(h))

    async def fill_labels(
        self, tree: AppTree, paths: Iterable[str], *, deadline: float | None = None
    ) -> None:
        """For unnamed fields, the name of the element that labels them (LABELLED_BY)."""
        if self._late(tree, deadline):
            return

        async def one(path: str) -> None:
            body = await guard(
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
                    got = await guard(
                        tree, "label name",
                        self.bus.get_property(str(tbus), str(tpath), "Accessible", "Name"),
                    )  # fmt: skip
                    tree.nodes[path].label = str(got or "")
                    tree.nodes[path].label_ok = True
                return

        await asyncio.gather(*(one(p) for p in paths if not tree.nodes[p].label_ok))

    async def fill_text(
        self, tree: AppTree, paths: Iterable[str], *, deadline: float | None = None
    ) -> None:
        """Fetch text content (Text.GetText) and range values (Value.CurrentValue)."""
        if self._late(tree, deadline):
            return

        async def text(path: str) -> None:
            got = await guard(tree, "GetText", self.bus.whole_text(tree.bus, path))
            if got is not None:
                tree.nodes[path].text = got.replace("\ufffc", "")

        async def value(path: str) -> None:
            got = await guard(
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
