"""Details for the nodes a read will show: extents, text and values, labels of unnamed fields.

The tree walk (:mod:`.tree`) reads structure, names and states; what only the shown nodes
need is fetched here, once each (marked ``text_ok``/``label_ok`` until an event says otherwise):
``Component.GetExtents``, ``Text.GetText``, ``Value.CurrentValue`` and the ``LABELLED_BY``
relation.

A nameless button with no label but a ``CONTROLLER_FOR`` relation to a menu or a popover (GTK
4's menu button holding only an icon: GTK 4.8 puts neither its icon name nor its action on the
bus) gets a hint saying so, ``opens a menu``: the read shows it as ``button (opens a menu)``,
what it does told apart from a name the app gave.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.consts import role_name
from deskpilot.desktop.atspi.model import AppTree, wants_value
from deskpilot.desktop.atspi.partial import guard, note_failure, settled
from deskpilot.desktop.toolkit_names import is_class_name

#: AtspiRelationType LABELLED_BY
RELATION_LABELLED_BY = 2
#: AtspiRelationType CONTROLLER_FOR
RELATION_CONTROLLER_FOR = 3
#: Roles of what a button opens, as its hint says it: a menu, else a popup of another kind
MENU_ROLES = frozenset({"menu", "popup-menu"})
#: Buttons that may be named by what they open
OPENER_ROLES = frozenset({"push-button", "toggle-button", "push-button-menu"})


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
                tree,
                "GetRelationSet",
                self.bus.call(tree.bus, path, "Accessible", "GetRelationSet"),
            )
            if body is None:
                return
            node = tree.nodes[path]
            node.label_ok = True
            relations = [(int(kind), targets) for kind, targets in body[0] if targets]
            labeller: tuple[str, str] | None = None
            for rel_type, targets in relations:
                if rel_type != RELATION_LABELLED_BY:
                    continue
                tbus, tpath = targets[0]
                labeller = (str(tbus), str(tpath))
                target = tree.nodes.get(str(tpath)) if tbus == tree.bus else None
                if target is not None:
                    node.label = target.name or (target.text or "")
                else:
                    got = await guard(
                        tree,
                        "label name",
                        self.bus.get_property(str(tbus), str(tpath), "Accessible", "Name"),
                    )
                    node.label = str(got or "")
                break
            told = [node.label.strip(), node.description.strip()]
            nameless = all(not t or is_class_name(t) for t in told)
            if node.role_name in OPENER_ROLES and nameless:
                opened = await self._opened(tree, relations, labeller)
                if opened is not None:
                    node.hint = await self._opener_hint(tree, opened)

        await asyncio.gather(*(one(p) for p in paths if not tree.nodes[p].label_ok))

    async def _opened(
        self,
        tree: AppTree,
        relations: list[tuple[int, list[tuple[str, str]]]],
        labeller: tuple[str, str] | None,
    ) -> tuple[str, str] | None:
        """The node a nameless button opens (``CONTROLLER_FOR``): its own, else that of the
        button labelling it (GTK 4's menu button: a shell that controls the popover, labelling
        the focusable toggle inside it, which is what the read shows)."""
        for kind, targets in relations:
            if kind == RELATION_CONTROLLER_FOR:
                return str(targets[0][0]), str(targets[0][1])
        if labeller is None or labeller[0] != tree.bus:
            return None
        shell = tree.nodes.get(labeller[1])
        if shell is None or shell.role_name not in OPENER_ROLES:
            return None
        body = await guard(
            tree,
            "GetRelationSet",
            self.bus.call(tree.bus, labeller[1], "Accessible", "GetRelationSet"),
        )
        for kind, targets in body[0] if body is not None else []:
            if int(kind) == RELATION_CONTROLLER_FOR and targets:
                return str(targets[0][0]), str(targets[0][1])
        return None

    async def _opener_hint(self, tree: AppTree, target: tuple[str, str]) -> str:
        """What a button opens, by the role of the node it controls: ``opens a menu`` (a GTK 4
        menu button's GtkPopoverMenu), else ``opens a popup`` (a GtkPopover)."""
        tbus, tpath = target
        known = tree.nodes.get(tpath) if tbus == tree.bus else None
        if known is not None:
            role = known.role_name
        else:
            got = await guard(tree, "GetRole", self.bus.call(tbus, tpath, "Accessible", "GetRole"))
            role = role_name(int(got[0])) if got is not None else ""
        return "opens a menu" if role in MENU_ROLES else "opens a popup"

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
