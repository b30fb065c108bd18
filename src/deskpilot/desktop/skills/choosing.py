"""``fill`` on a combo box without text of its own: choose the item named, and check it.

A drop-down (GTK's combo box, LibreOffice's list boxes, a web page's ``<select>``) has no text
to replace: typing at it either goes nowhere or jumps to the first item starting with a key.
So ``fill`` finds the item whose name is the text among the combo's items (its popup's menu
items or list items, also nested ones — read live, bounded: the popup may be closed), runs that
item's action (no pointer, the popup need not be open), and then checks what the combo shows.
A GTK 4 drop-down has its list only while open and rows without actions: it is opened by its
action, the row reached with the arrow keys from the focused one and Enter pressed, and a list
it opened is closed again. An unknown text is refused with the items there are; nothing is
chosen.
"""

from __future__ import annotations

import contextlib

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, LiveElement, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.raw_input import Outcome, RawInput
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

#: Roles of a combo box's choices.
ITEM_ROLES = frozenset(
    {"menu-item", "check-menu-item", "radio-menu-item", "list-item", "option", "table-cell"}
)
#: Nodes walked at most under a combo box, and children listed at most per node (a font list
#: has hundreds of items; a node reporting more than this many children is not listed).
MAX_WALK = 3000
MAX_CHILDREN = 2000

Key = ElementKey
#: What refusing or not answering a question about an element raises.
REFUSED = (ElementCallFailed, NotAnswering)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


class Choosing:
    """Choosing a combo box's item by its name."""

    def __init__(self, ports: Ports, raw: RawInput) -> None:
        self.a11y = ports.a11y
        self.input = ports.input
        self.raw = raw

    async def combo_items(self, key: Key) -> list[tuple[Key, str, frozenset[str]]]:
        """(key, name, states) of the items under a combo box, in order, walked live."""
        a11y = self.a11y
        found: list[tuple[Key, str, frozenset[str]]] = []
        queue, seen = [key], 0
        while queue and seen < MAX_WALK:
            node = queue.pop(0)
            seen += 1
            try:
                count = await a11y.child_count(node)
                if count <= 0 or count > MAX_CHILDREN:
                    continue
                children = await a11y.children(node)
            except REFUSED:
                continue
            for child in children:
                try:
                    role = await a11y.role(child)
                    name = await a11y.name(child)
                    states = await a11y.states(child)
                except REFUSED:
                    continue
                if role in ITEM_ROLES and not name.strip():
                    name = await self._label_of(child)  # GTK 4: the item's label is a child
                if role in ITEM_ROLES and name.strip():
                    found.append((child, name, states))
                if role not in ITEM_ROLES or role == "menu-item":
                    queue.append(child)  # a submenu ("A - B") holds items of its own
        return found

    async def _has_size(self, key: Key) -> bool:
        box = await self.a11y.extents(key)
        return box is not None and not box.empty

    async def parts_of(self, key: Key) -> list[tuple[Key, str]]:
        """(key, role) of an element's children, live."""
        out: list[tuple[Key, str]] = []
        try:
            for child in (await self.a11y.children(key))[:MAX_CHILDREN]:
                out.append((child, await self.a11y.role(child)))
        except REFUSED:
            pass
        return out

    async def _label_of(self, key: Key, depth: int = 3, *, shown: bool = False) -> str:
        """The first name among an unnamed item's descendants (its label), a few levels;
        with ``shown``, only of a label with a size (GTK 4 keeps an empty "(None)" one)."""
        level = [key]
        for _ in range(depth):
            nxt: list[Key] = []
            for node in level:
                try:
                    children = await self.a11y.children(node)
                except REFUSED:
                    continue
                for child in children[:8]:
                    try:
                        name = await self.a11y.name(child)
                    except REFUSED:
                        continue
                    named = name.strip() and not name.startswith("Gtk")  # not a class name
                    if named and (not shown or await self._has_size(child)):
                        return name
                    nxt.append(child)
            level = nxt
        return ""

    async def _opened_items(
        self, live: LiveElement
    ) -> tuple[Key | None, list[tuple[Key, str, frozenset[str]]]]:
        """A drop-down whose list exists only while open (GTK 4): open it by its action (or
        its button's); what opened it, and its items."""
        opener: Key = live.key
        if await self.a11y.activate(opener) is None:
            buttons = await self.a11y.children(live.key)
            if not buttons or await self.a11y.activate(buttons[0]) is None:
                return None, []
            opener = buttons[0]
        found: list[tuple[Key, str, frozenset[str]]] = []

        async def listed() -> bool:
            found[:] = await self.combo_items(live.key)
            return bool(found)

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(listed, timeout=3.0, what="the drop-down's list")
        return opener, found

    async def key_to_item(
        self, window: WindowInfo, items: list[tuple[Key, str, frozenset[str]]], item: Key
    ) -> tuple[str, Outcome] | None:
        """An item without an action of its own (GTK 4's list rows) in the open list: moved
        to with the arrow keys from the focused item, then Enter, as a person chooses with
        the keyboard (the list's Selection does not choose it; a pointer click would need
        the popover's positions, which GTK 4 reports before it has placed it). How, and
        what the keys did to the windows."""
        keys = [k for k, _n, _s in items]
        fresh = [await self.a11y.inspect(k) for k in keys]
        at = next((i for i, f in enumerate(fresh) if f is not None and "focused" in f.states), None)
        if at is None or item not in keys:
            return None
        steps = keys.index(item) - at
        arrow = "Down" if steps > 0 else "Up"
        async with self.raw.session(window) as outcome:
            for _ in range(abs(steps)):
                await self.input.press_combo([arrow])
            await self.input.press_combo(["Return"])
        return f"{abs(steps)} arrow key(s) from the focused item, then Enter", outcome

    async def shown_choice(self, live: LiveElement) -> str:
        """What a combo box shows: its text, else the item it reports selected, else its
        name (GTK names a combo by its choice; a web page's by its label)."""
        text = (await self.a11y.read_text(live.key) or "").replace("\ufffc", "").strip()
        if text:
            return text
        chosen = await self.selected_choice(live.key)
        item = await self.a11y.inspect(chosen) if chosen is not None else None
        if item is not None and item.role in ITEM_ROLES:  # not a submenu ("C - D")
            return item.name.strip()
        for part in await self.parts_of(live.key):
            if part[1] == "push-button" and (label := await self._label_of(part[0], 6, shown=True)):
                return label.strip()  # GTK 4: the choice is the label on its button
        if live.role == "combo-box" and live.name.strip():  # a web page's: named by its label
            marked = [
                n for _k, n, states in await self.combo_items(live.key) if "selected" in states
            ]
            if marked:
                return marked[0].strip()
        now = await self.a11y.inspect(live.key)
        return (now.name if now is not None else live.name).strip()

    async def selected_choice(self, key: Key) -> Key | None:
        """The item a combo box reports selected through its Selection interface, if any."""
        try:
            return await self.a11y.selected_child(key)
        except REFUSED:
            return None

    async def choose_item(self, window: WindowInfo, live: LiveElement, text: str) -> ActionOutcome:
        items = await self.combo_items(live.key)
        opener: Key | None = None
        if not items:
            opener, items = await self._opened_items(live)
        wanted = _norm(text)
        match = [i for i in items if _norm(i[1]) == wanted]
        if not match:
            if opener is not None:
                await self._close_list(window, opener)
            names = [name for _k, name, _s in items]
            shown = ", ".join(repr(n) for n in names[:30])
            more = f" … ({len(names)} in all)" if len(names) > 30 else ""
            if not names:
                raise ActionFailed(
                    "it is a drop-down without items deskpilot can read; click it to open "
                    "its list, read it, and click the item"
                )
            raise ActionFailed(
                f"it has no item named {text!r}: nothing was chosen. Its items: {shown}{more}"
            )
        item, name, _states = next((m for m in match if "enabled" in m[2]), match[0])
        before = await self.shown_choice(live)
        keyed: Outcome | None = None
        how = await self.a11y.activate(item)
        if how is None and (by_keys := await self.key_to_item(window, items, item)):
            how, keyed = by_keys
        if how is None:
            raise ActionFailed(
                f"its item {name!r} has no action to choose it: click the drop-down to open "
                "it, then click the item"
            )

        async def chosen() -> bool:
            if _norm(await self.shown_choice(live)) == _norm(name):
                return True
            return await self.selected_choice(live.key) == item  # an icon combo: "edit-clear"

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(chosen, timeout=3.0, what="the choice")
        shown = await self.shown_choice(live)
        if not await chosen():
            raise ActionFailed(
                f"its item {name!r} was activated but the drop-down shows {shown!r} "
                f"(before: {before!r}); re-read it"
            )
        if opener is not None:
            await self._close_list(window, opener)  # as it found it
        what = how if " " in how else f"AT-SPI action '{how}'"
        detail = f"its item {name!r} ({what}): it shows {shown!r}"
        return keyed.done(detail) if keyed else ActionOutcome("atspi", detail)

    async def _close_list(self, window: WindowInfo, opener: Key) -> None:
        """Close the list a choice opened, if it is still open (the drop-down expanded, or its
        button pressed): Escape, as a person does (GTK 4 keeps its popover open when the
        button is activated again)."""
        keys = [opener] + [k for k, role in await self.parts_of(opener) if role == "push-button"]
        for key in keys:
            now = await self.a11y.inspect(key)
            if now is not None and {"pressed", "checked", "expanded"} & now.states:
                async with self.raw.session(window):
                    await self.input.press_combo(["Escape"])
                return
