"""Cells of tables as targets: select the cell named, then act; check it was that cell.

A tree view's cell activated without being selected acts on the row selected before (GTK's
file chooser answers with the file selected, not the one activated: the wrong file, silently).
So a click on a selectable cell first moves the table's cursor to it (``GrabFocus``: the row
becomes selected) and checks that the cell now reports it is selected or focused. It is not
activated: a person's click selects a row, activating it is a double-click (in a file
chooser, activating a file confirms the chooser) — selecting never confirms.

A spreadsheet cell has no editable text: ``fill`` moves the cursor to it, types the text and
Enter (typing replaces a cell's content; nothing else in the sheet is touched, no select-all),
then reads the cell back through the table (Calc makes a new cell object on each ask) and
reports what it shows — and the formula it holds, when the text was one.
"""

from __future__ import annotations

import contextlib

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, LiveElement, WindowInfo
from deskpilot.desktop.cell_refs import Place, address, parse_cell
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.focus import has_focus
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

#: Roles of the cells a click selects first (rows of tree views and tables).
SELECT_FIRST = frozenset({"table-cell", "tree-item"})


def selects_first(live: LiveElement) -> bool:
    """Whether clicking this element must select it before activating it."""
    return live.role in SELECT_FIRST and "selectable" in live.states


class Cells:
    """Clicking and filling table cells."""

    def __init__(self, ports: Ports, raw: RawInput) -> None:
        self.a11y = ports.a11y
        self.input = ports.input
        self.raw = raw

    async def cell_place(self, live: LiveElement) -> tuple[ElementKey, Place] | None:
        """The cell's table and its (row, column) there."""
        if live.parent_key is None:
            return None
        table = live.parent_key
        place = await self.a11y.cell_place(table, live.key)
        if place is None:
            place = parse_cell(live.name)  # a spreadsheet's cell, past the index's 2^31
        return (table, place) if place is not None else None

    async def _checklist(self, live: LiveElement, scan: int = 64) -> bool:
        """Whether the cell's table has check boxes in its rows (a checklist): the cell or
        one of the first ``scan`` cells beside it can be checked (or toggled)."""
        if "checkable" in live.states or live.role in ("check-box", "check box"):
            return True
        if live.parent_key is None:
            return False
        try:
            cells = (await self.a11y.children(live.parent_key))[:scan]
        except (ElementCallFailed, NotAnswering):
            return False
        for cell in cells:
            now = await self.a11y.inspect(cell)
            if now is None:
                continue
            if "checkable" in now.states or "checked" in now.states or now.role == "check-box":
                return True
            try:  # GTK 3's toggle cells say it by their action alone
                if "toggle" in await self.a11y.action_names(cell):
                    return True
            except (ElementCallFailed, NotAnswering):
                continue
        return False

    async def _selected(self, key: ElementKey, timeout: float = 2.0) -> bool:
        async def chosen() -> bool:
            now = await self.a11y.inspect(key)
            return now is not None and bool({"selected", "focused"} & now.states)

        try:
            await async_wait_for(chosen, timeout=timeout, what="the cell to be selected")
        except WaitTimeout:
            return False
        return True

    async def click_cell(self, window: WindowInfo, live: LiveElement) -> ActionOutcome:
        """Select the cell (its row) and check it; never activate it (a click selects)."""
        if not await self.a11y.grab_focus(live.key) or not await self._selected(live.key):
            raise ActionFailed(
                f"the {live.role} {live.name!r} could not be selected, so nothing was "
                "activated (activating it would act on the row selected before)"
            )
        # a person's click selects a row; activating it is a double-click (a file chooser
        # would open the file and close): selecting never confirms. In a list whose rows
        # have check boxes (a checklist) the click is for the box: it toggles, as before
        if await self._checklist(live):
            name = await self.a11y.activate(live.key)
            if name is not None:
                return ActionOutcome(
                    "atspi",
                    f"GrabFocus (the cell is selected), then AT-SPI action '{name}': its "
                    "row's check box toggled (a list with check boxes)",
                )
        return ActionOutcome(
            "atspi",
            "GrabFocus: the cell is selected (not activated: double_click it to open it)",
        )

    async def fill_cell(self, window: WindowInfo, live: LiveElement, text: str) -> ActionOutcome:
        """Put the cursor on the cell, type the text and Enter, read the cell back."""
        found = await self.cell_place(live)
        if found is None:
            raise ActionFailed(f"the cell {live.name!r} does not say where it is in its table")
        table, (row, col) = found
        if not await self.a11y.grab_focus(live.key) or not await has_focus(
            self.a11y, live.key, 2.0
        ):
            raise ActionFailed(f"the cell {live.name!r} did not take the cursor; nothing typed")
        async with self.raw.session(window) as outcome:
            await self.input.type_text(text.replace("\n", " ") + "\n")
            shown, formula = await self._cell_shows(table, (row, col), text)
        where = address(row, col)
        if text.startswith("=") and formula:
            detail = f"typed into {where} and Enter; it holds {formula} and shows {shown!r}"
        else:
            detail = f"typed into {where} and Enter; it shows {shown!r}"
        if shown != text and not (text.startswith("=") and formula):
            detail += f" (not {text!r}: the app formats or converts what is typed)"
        return outcome.done(detail)

    async def _cell_shows(
        self, table: ElementKey, place: Place, text: str, timeout: float = 3.0
    ) -> tuple[str, str]:
        """What the cell shows once the app took the typing in, and its formula (if any)."""
        last: dict[str, str] = {"shown": "", "formula": ""}

        async def entered() -> bool:
            key = await self.a11y.cell_at(table, *place)
            if key is None:
                return False
            last["shown"] = await self.a11y.read_text(key) or ""
            last["formula"] = await self._formula(key)
            want = text.strip()
            return last["shown"] == want or bool(want.startswith("=") and last["formula"])

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(entered, timeout=timeout, what="the cell's new content")
        return last["shown"], last["formula"]

    async def _formula(self, key: ElementKey) -> str:
        """The cell's formula attribute (Calc's cells), "" when it has none."""
        try:
            return (await self.a11y.attributes(key)).get("Formula", "")
        except ElementCallFailed:
            return ""
