"""``fill`` on a combo box without text of its own: choose the item named, and check it.

A drop-down (GTK's combo box, LibreOffice's list boxes, a web page's ``<select>``) has no text
to replace: typing at it either goes nowhere or jumps to the first item starting with a key.
So ``fill`` finds the item whose name is the text among the combo's items (its popup's menu
items or list items, also nested ones — read live, bounded: the popup may be closed), runs that
item's action (no pointer, the popup need not be open), and then checks what the combo shows.
An unknown text is refused with the items there are; nothing is chosen.
"""

from __future__ import annotations

import contextlib

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.atspi_calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi_consts import role_name, state_bits, state_names
from deskpilot.desktop.base import ActionOutcome, LiveElement
from deskpilot.desktop.linux_cells import LinuxCells
from deskpilot.errors import ActionFailed

#: Roles of a combo box's choices.
ITEM_ROLES = frozenset(
    {"menu-item", "check-menu-item", "radio-menu-item", "list-item", "option", "table-cell"}
)
#: Nodes walked at most under a combo box, and children listed at most per node (a font list
#: has hundreds of items; a node reporting more than this many children is not listed).
MAX_WALK = 3000
MAX_CHILDREN = 2000

Key = tuple[str, str]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


class LinuxChoosing(LinuxCells):
    """Choosing a combo box's item by its name."""

    async def combo_items(self, key: Key) -> list[tuple[Key, str, frozenset[str]]]:
        """(key, name, states) of the items under a combo box, in order, walked live."""
        bus = self.a11y.bus
        found: list[tuple[Key, str, frozenset[str]]] = []
        queue, seen = [key], 0
        while queue and seen < MAX_WALK:
            node = queue.pop(0)
            seen += 1
            try:
                count = int(await bus.get_property(*node, "Accessible", "ChildCount"))
                if count <= 0 or count > MAX_CHILDREN:
                    continue
                body = await bus.call(*node, "Accessible", "GetChildren")
            except (AtspiCallError, AtspiTimeout):
                continue
            for cbus, cpath in body[0]:
                child = (str(cbus), str(cpath))
                try:
                    role = role_name(int((await bus.call(*child, "Accessible", "GetRole"))[0]))
                    name = str(await bus.get_property(*child, "Accessible", "Name"))
                    state = await bus.call(*child, "Accessible", "GetState")
                except (AtspiCallError, AtspiTimeout):
                    continue
                states = state_names(state_bits(state[0]))
                if role in ITEM_ROLES and name.strip():
                    found.append((child, name, states))
                if role not in ITEM_ROLES or role == "menu-item":
                    queue.append(child)  # a submenu ("A - B") holds items of its own
        return found

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
            body = await self.a11y.bus.call(*key, "Selection", "GetSelectedChild", "i", [0])
        except (AtspiCallError, AtspiTimeout):
            return None
        bus_name, path = body[0]
        return (str(bus_name), str(path)) if bus_name else None

    async def choose_item(self, live: LiveElement, text: str) -> ActionOutcome:
        items = await self.combo_items(live.key)
        wanted = _norm(text)
        match = [i for i in items if _norm(i[1]) == wanted]
        if not match:
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
        how = await self.a11y.activate(item)
        if how is None:
            raise ActionFailed(
                f"its item {name!r} has no action to choose it: click the drop-down to open "
                "it, then click the item"
            )

        async def chosen() -> bool:
            if _norm(await self.shown_choice(live)) == _norm(name):
                return True
            if await self.selected_choice(live.key) == item:
                return True  # GTK names an icon combo by its icon ("edit-clear")
            now = await self.a11y.inspect(item)
            return now is not None and bool({"selected", "checked"} & now.states)

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(chosen, timeout=3.0, what="the choice")
        shown = await self.shown_choice(live)
        if not await chosen():
            raise ActionFailed(
                f"its item {name!r} was activated but the drop-down shows {shown!r} "
                f"(before: {before!r}); re-read it"
            )
        return ActionOutcome(
            "atspi", f"its item {name!r} (AT-SPI action '{how}'): it shows {shown!r}"
        )
