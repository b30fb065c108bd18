"""Live checks and actions on one element by its key (bus name, object path), no focus needed.

``inspect`` asks an element's role, name, states and parent now (None once it is gone);
``activate`` runs its activating action (``DoAction``), ``set_text`` replaces its text through
``EditableText`` and checks it by reading back, ``grab_focus`` focuses it. Nothing here moves
the pointer or types: raw input is the skills' (:mod:`deskpilot.desktop.skills.raw_input`).
"""

from __future__ import annotations

import asyncio
import time

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi.consts import NULL_PATH, S_DEFUNCT, role_name, state_bits, state_names
from deskpilot.desktop.atspi.tab_names import plain_name
from deskpilot.desktop.base import LiveElement, Rect
from deskpilot.desktop.ports.accessibility import shows
from deskpilot.errors import ActionCutOff, ActionFailed, AppGone

#: How long after its activation a GTK button emits its click (GtkButton's ACTIVATE_TIMEOUT,
#: 250 ms, in GTK 3 and 4), and the roles of the widgets built on it.
GTK_ACTIVATE_S = 0.25
GTK_BUTTONS = frozenset({"push-button", "toggle-button", "check-box", "radio-button"})

#: Action names that activate an element, most preferred first ("" = a toolkit's nameless).
ACTIVATE_ACTIONS = ("click", "press", "activate", "toggle", "jump", "open", "select", "")
#: Default actions that do not operate the element itself (Chromium's "doDefault" on an element
#: without a handler of its own).
NOT_OWN_ACTIONS = frozenset({"dodefault", "showcontextmenu"})
#: Roles of an editable area's children that sit on lines of their own (not inline spans).
BLOCKS = frozenset({"paragraph", "section", "heading", "list", "list-item", "block-quote",
                    "table", "form", "article"})  # fmt: skip


class ElementActions:
    """Element checks and actions over an :class:`AtspiBus`."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus
        self._last_use: dict[tuple[str, str], float] = {}

    async def inspect(self, key: tuple[str, str], pid: int | None = None) -> LiveElement | None:
        bus_name, path = key
        try:
            role, name, state, parent = await asyncio.gather(
                self.bus.call(bus_name, path, "Accessible", "GetRole"),
                self.bus.get_property(bus_name, path, "Accessible", "Name"),
                self.bus.call(bus_name, path, "Accessible", "GetState"),
                self.bus.get_property(bus_name, path, "Accessible", "Parent"),
            )
        except AtspiCallError as exc:
            if exc.app_gone:
                raise AppGone(f"the app on {bus_name} left the accessibility bus") from exc
            if exc.gone or exc.unsupported:
                return None
            raise
        bits = state_bits(state[0])
        if bits & S_DEFUNCT:
            return None
        real_pid = pid if pid is not None else (await self.bus.pid_of(bus_name) or 0)
        pbus, ppath = parent
        kind = role_name(int(role[0]))
        return LiveElement(
            key=key,
            pid=real_pid,
            role=kind,
            name=plain_name(kind, str(name)),
            parent_key=(str(pbus), str(ppath)) if pbus else None,
            states=state_names(bits),
            bounds=None,
        )

    async def extents(self, key: tuple[str, str]) -> Rect | None:
        try:
            body = await self.bus.call(key[0], key[1], "Component", "GetExtents", "u", [0])
        except AtspiCallError:
            return None
        x, y, w, h = (int(v) for v in body[0])
        return Rect(x, y, w, h)

    async def cell_at(self, key: tuple[str, str], row: int, col: int) -> tuple[str, str] | None:
        """The key of a table's cell (any cell, on screen or not), or None."""
        bus_name, path = key
        try:
            body = await self.bus.call(bus_name, path, "Table", "GetAccessibleAt", "ii", [row, col])
        except AtspiCallError as exc:
            if exc.gone or exc.unsupported:
                return None
            raise
        cbus, cpath = body[0]
        return (str(cbus), str(cpath)) if cbus and cpath != NULL_PATH else None

    async def editable_parts(self, key: tuple[str, str], limit: int = 24) -> list[tuple[str, str]]:
        """The descendants with editable text of an element that has none itself (a slide's
        placeholder shape around its paragraph), walked live, at most ``limit`` nodes."""
        found: list[tuple[str, str]] = []
        queue, seen = [key], 0
        while queue and seen < limit:
            bus_name, path = queue.pop(0)
            seen += 1
            try:
                body = await self.bus.call(bus_name, path, "Accessible", "GetChildren")
            except (AtspiCallError, AtspiTimeout):
                continue
            for cbus, cpath in body[0][:limit]:
                child = (str(cbus), str(cpath))
                try:
                    ifaces = await self.interfaces(child)
                except (AtspiCallError, AtspiTimeout):
                    continue
                (found if "EditableText" in ifaces else queue).append(child)
        return found

    async def interfaces(self, key: tuple[str, str]) -> frozenset[str]:
        body = await self.bus.call(key[0], key[1], "Accessible", "GetInterfaces")
        return frozenset(str(n).rsplit(".", 1)[-1] for n in body[0])

    async def action_names(self, key: tuple[str, str]) -> list[str]:
        """The element's action names, lower-cased (Chromium's GetActions leaves them empty:
        they are asked one by one)."""
        bus_name, path = key
        try:
            body = await self.bus.call(bus_name, path, "Action", "GetActions")
        except AtspiCallError as exc:
            if exc.unsupported:
                return []
            raise
        names = [str(a[0]).lower() for a in body[0]]
        if names and not any(names):
            replies = await asyncio.gather(
                *(
                    self.bus.call(bus_name, path, "Action", "GetName", "i", [i])
                    for i in range(len(names))
                )
            )
            names = [str(r[0]).lower() for r in replies]
        return names

    async def activate(self, key: tuple[str, str]) -> str | None:
        """Run the element's activating action; the action's name, or None if it has none of
        its own (Chromium's "doDefault" on an element without a listener would click it, not
        the link inside it that a person clicks: the caller uses the pointer instead)."""
        names = await self.action_names(key)
        if not names:
            return None
        index = next(
            (names.index(n) for n in ACTIVATE_ACTIONS if n in names),
            0,
        )
        if names[index] in NOT_OWN_ACTIONS:
            return None
        await self._pace(key)
        ok = await self._do_action(key, index)
        if not ok:
            # GTK ignores an activation while the previous one is still "pressed": retry once
            await asyncio.sleep(0.3)
            if not await self._do_action(key, index):
                raise ActionFailed(f"the app refused the action {names[index]!r}")
        if await self._clicks_later(key):
            self.bus.effect_due[key[0]] = time.monotonic() + GTK_ACTIVATE_S
        return names[index] or "default"

    async def _clicks_later(self, key: tuple[str, str]) -> bool:
        """Whether the element is a GTK button, whose activation shows it pressed and emits
        its click GTK_ACTIVATE_S later (measured on gnome-calculator: the display changed
        252–314 ms after DoAction): the settle after it must not end before that."""
        if not (await self.bus.toolkit(key[0])).casefold().startswith(("gtk", "gail")):
            return False
        try:
            role = role_name(int((await self.bus.call(*key, "Accessible", "GetRole"))[0]))
        except (AtspiCallError, AtspiTimeout):
            return False
        return role in GTK_BUTTONS

    async def _do_action(self, key: tuple[str, str], index: int) -> bool:
        """DoAction; an app that leaves the bus before answering it is :class:`ActionCutOff`
        (an app that closes its window because of an action answers first: GTK and Qt run
        the action after the reply)."""
        try:
            ok = await self.bus.call(key[0], key[1], "Action", "DoAction", "i", [index])
        except AtspiCallError as exc:
            if exc.app_gone:
                raise ActionCutOff(f"the app on {key[0]} left before answering") from exc
            raise
        return bool(ok[0])

    async def text_box(self, key: tuple[str, str]) -> Rect | None:
        """Where the element's own text is on screen (None when it has none): a wide list
        item or tab is clicked on its text, where a person clicks."""
        try:
            text = str((await self.bus.call(key[0], key[1], "Text", "GetText", "ii", [0, -1]))[0])
        except AtspiCallError:
            return None
        if not text.replace("\ufffc", "").strip():
            return None
        try:
            body = await self.bus.call(
                key[0], key[1], "Text", "GetRangeExtents", "iiu", [0, len(text), 0]
            )
        except AtspiCallError:
            return None
        x, y, w, h = (int(v) for v in body[:4])  # four out-arguments, not a struct
        return Rect(x, y, w, h) if w > 0 and h > 0 else None

    async def scroll_into_view(self, key: tuple[str, str]) -> bool:
        """Ask the app to scroll the element into view (Component.ScrollTo, anywhere)."""
        try:
            body = await self.bus.call(key[0], key[1], "Component", "ScrollTo", "u", [6])
        except AtspiCallError:
            return False
        return bool(body[0])

    async def _pace(self, key: tuple[str, str]) -> None:
        """GTK swallows a second activation of the same widget within ~250 ms: space them."""
        last = self._last_use.get(key)
        now = time.monotonic()
        if last is not None and now - last < 0.3:
            await asyncio.sleep(0.3 - (now - last))
        self._last_use[key] = time.monotonic()

    async def set_text(
        self, key: tuple[str, str], text: str, *, masked: bool = False
    ) -> str | None:
        """Replace the element's text through EditableText; how it was done, or None.

        Delete + insert first (it emits the same signals as typing, so dialogs that enable
        their buttons on input notice it), then SetTextContents; each checked by reading back.
        """
        bus_name, path = key
        try:
            count = await self.bus.get_property(bus_name, path, "Text", "CharacterCount")
            await self.bus.call(bus_name, path, "EditableText", "DeleteText", "ii", [0, int(count)])
            if text:
                await self.bus.call(
                    bus_name,
                    path,
                    "EditableText",
                    "InsertText",
                    "isi",
                    [0, text, len(text.encode())],
                )
            if shows(await self.read_text(key), text, masked):
                return "EditableText delete+insert"
        except AtspiCallError as exc:
            if exc.gone:
                raise
        try:
            body = await self.bus.call(
                bus_name, path, "EditableText", "SetTextContents", "s", [text]
            )
        except AtspiCallError as exc:
            if exc.unsupported:
                return None
            raise
        if body[0] and shows(await self.read_text(key), text, masked):
            return "EditableText.SetTextContents"
        return None

    async def read_text(self, key: tuple[str, str]) -> str | None:
        try:
            return await self.bus.whole_text(key[0], key[1])
        except AtspiCallError:
            return None

    async def deep_text(self, key: tuple[str, str], limit: int = 200) -> str | None:
        """The element's text with each embedded child (U+FFFC) replaced by that child's own
        deep text: what a web editable area shows across its paragraphs and spans. At most
        ``limit`` nodes are asked; None when the element has no text."""
        budget = [limit]

        async def walk(node: tuple[str, str]) -> str | None:
            budget[0] -= 1
            text = await self.read_text(node)
            if text is None or "\ufffc" not in text or budget[0] <= 0:
                return text
            try:
                body = await self.bus.call(node[0], node[1], "Accessible", "GetChildren")
            except (AtspiCallError, AtspiTimeout):
                return text.replace("\ufffc", "")
            children = [(str(b), str(p)) for b, p in body[0]]
            pieces, i = [], 0
            for ch in text:
                if ch != "\ufffc":
                    pieces.append(ch)
                    continue
                child = children[i] if i < len(children) else None
                i += 1
                inner = await walk(child) if child is not None else None
                if inner and child is not None and await self._is_block(child):
                    inner = f"\n{inner}\n"  # a paragraph: on lines of its own
                pieces.append(inner or "")
            return "".join(pieces)

        text = await walk(key)
        if text is None:
            return None
        return "\n".join(line.strip() for line in text.splitlines() if line.strip())

    async def _is_block(self, key: tuple[str, str]) -> bool:
        try:
            role = await self.bus.call(key[0], key[1], "Accessible", "GetRole")
        except (AtspiCallError, AtspiTimeout):
            return False
        return role_name(int(role[0])) in BLOCKS

    async def grab_focus(self, key: tuple[str, str]) -> bool:
        try:
            body = await self.bus.call(key[0], key[1], "Component", "GrabFocus")
        except AtspiCallError:
            return False
        return bool(body[0])
