"""Element actions: click, fill and focus an element by its key, AT-SPI first.

Each action prefers AT-SPI (an action, ``EditableText``, ``GrabFocus``: no focus or pointer
needed); where an element offers none (Chromium's inputs), it falls back to raw input at the
element's on-screen position and checks the effect (the field takes the focus, shows the text).
Filling is :mod:`linux_fill`; table cells are :mod:`linux_cells`.
"""

from __future__ import annotations

from deskpilot.desktop.base import ActionOutcome, LiveElement, WindowInfo
from deskpilot.desktop.linux_cells import selects_first
from deskpilot.desktop.linux_fill import LinuxFill
from deskpilot.errors import ActionFailed

#: Fields an AT-SPI action focuses as a click would (their caret is their own business).
FIELDS = frozenset({"entry", "password-text", "spin-button", "combo-box", "terminal"})


class LinuxElements(LinuxFill):
    """Actions on elements of a window's tree."""

    async def click_element(self, window: WindowInfo, key: tuple[str, str]) -> ActionOutcome:
        live = await self.a11y.inspect(key, window.pid)
        if live is not None and selects_first(live):
            return await self.click_cell(window, live)
        # an editable area (a contenteditable, a document's paragraph): a person's click puts
        # the caret where it lands; an action would leave the focus where it was, and the next
        # keys would go there
        area = live is not None and "editable" in live.states and live.role not in FIELDS
        name = None if area else await self.a11y.activate(key)
        if name is not None:
            return ActionOutcome("atspi", f"AT-SPI action '{name}'")
        if live is not None and await self.in_popover(live):
            return await self._click_popover_row(window, live)
        x, y = await self.element_point(window, key)
        async with self._raw_input(window) as outcome:
            await self._click(x, y)
        return outcome.done(f"pointer click at ({x}, {y})")

    async def _click_popover_row(self, window: WindowInfo, live: LiveElement) -> ActionOutcome:
        """A row without an action in a GTK 4 popover (a drop-down's open list): GTK reports
        its position relative to the popover, not the screen, so a pointer click would hit
        another row; it is reached with the arrow keys from the focused row and Enter."""
        rows: list[tuple[tuple[str, str], str, frozenset[str]]] = []
        if live.role in ("list-item", "tree-item") and live.parent_key is not None:
            rows = [(k, "", frozenset()) for k, role in await self._parts_of(live.parent_key)
                    if role == live.role]  # fmt: skip
        how = await self._key_to_item(window, rows, live.key) if rows else None
        if how is None or self._keyed is None:
            raise ActionFailed(
                "it is in a GTK 4 popup without an action of its own, and GTK does not report "
                "where the popup is on screen: a pointer click would hit something else. For a "
                "drop-down, use fill on it with the item's name; else use the arrow keys and "
                "Enter (shortcut)"
            )
        return self._keyed.done(how)

    async def focus_element(self, window: WindowInfo, key: tuple[str, str]) -> bool:
        return await self._focus(key)
