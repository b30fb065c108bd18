"""Element actions: click and focus an element by its key, its own action first.

A click prefers the element's activating action (no focus or pointer needed); where it offers
none (Chromium's inputs, an editable area a person clicks into), it falls back to a pointer
click at the element's on-screen position (:mod:`.aiming`). A selectable table cell or tree row
is selected first and checked (:mod:`.cells`); a row without an action in a GTK 4 popover is
reached with the arrow keys (:mod:`.choosing`). Filling is :mod:`.filling`.
"""

from __future__ import annotations

from deskpilot.desktop.base import ActionOutcome, LiveElement, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.aiming import Aiming
from deskpilot.desktop.skills.cells import Cells, selects_first
from deskpilot.desktop.skills.choosing import Choosing
from deskpilot.desktop.skills.focus import take_focus
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.errors import ActionFailed

#: Fields an action focuses as a click would (their caret is their own business).
FIELDS = frozenset({"entry", "password-text", "spin-button", "combo-box", "terminal"})


class Elements:
    """Actions on elements of a window's tree."""

    def __init__(
        self, ports: Ports, raw: RawInput, aiming: Aiming, cells: Cells, choosing: Choosing
    ) -> None:
        self.a11y = ports.a11y
        self.raw = raw
        self.aiming = aiming
        self.cells = cells
        self.choosing = choosing

    async def click_element(self, window: WindowInfo, key: ElementKey) -> ActionOutcome:
        live = await self.a11y.inspect(key, window.pid)
        if live is not None and selects_first(live):
            return await self.cells.click_cell(window, live)
        # an editable area (a contenteditable, a document's paragraph): a person's click puts
        # the caret where it lands; an action would leave the focus where it was, and the next
        # keys would go there
        area = live is not None and "editable" in live.states and live.role not in FIELDS
        name = None if area else await self.a11y.activate(key)
        if name is not None:
            return ActionOutcome("atspi", f"AT-SPI action '{name}'")
        if live is not None and await self.aiming.in_popover(live):
            return await self._click_popover_row(window, live)
        x, y = await self.aiming.element_point(window, key)
        async with self.raw.session(window) as outcome:
            await self.raw.click(x, y)
        return outcome.done(f"pointer click at ({x}, {y})")

    async def _click_popover_row(self, window: WindowInfo, live: LiveElement) -> ActionOutcome:
        """A row without an action in a GTK 4 popover (a drop-down's open list): GTK reports
        its position relative to the popover, not the screen, so a pointer click would hit
        another row; it is reached with the arrow keys from the focused row and Enter."""
        rows: list[tuple[ElementKey, str, frozenset[str]]] = []
        if live.role in ("list-item", "tree-item") and live.parent_key is not None:
            parts = await self.choosing.parts_of(live.parent_key)
            rows = [(k, "", frozenset()) for k, role in parts if role == live.role]
        keyed = await self.choosing.key_to_item(window, rows, live.key) if rows else None
        if keyed is None:
            raise ActionFailed(
                "it is in a GTK 4 popup without an action of its own, and GTK does not report "
                "where the popup is on screen: a pointer click would hit something else. For a "
                "drop-down, use fill on it with the item's name; else use the arrow keys and "
                "Enter (shortcut)"
            )
        how, outcome = keyed
        return outcome.done(how)

    async def focus_element(self, window: WindowInfo, key: ElementKey) -> bool:
        return await take_focus(self.a11y, key)
