"""Element actions: click, fill and focus an element by its key, AT-SPI first.

Each action prefers AT-SPI (an action, ``EditableText``, ``GrabFocus``: no focus or pointer
needed); where an element offers none (Chromium's inputs), it falls back to raw input at the
element's on-screen position and checks the effect (the field takes the focus, shows the text).
"""

from __future__ import annotations

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.atspi_elements import shows
from deskpilot.desktop.base import ActionOutcome, WindowInfo
from deskpilot.desktop.linux_cells import LinuxCells, selects_first
from deskpilot.errors import ActionFailed


class LinuxElements(LinuxCells):
    """Actions on elements of a window's tree."""

    async def click_element(self, window: WindowInfo, key: tuple[str, str]) -> ActionOutcome:
        live = await self.a11y.inspect(key, window.pid)
        if live is not None and selects_first(live):
            return await self.click_cell(window, live)
        name = await self.a11y.activate(key)
        if name is not None:
            return ActionOutcome("atspi", f"AT-SPI action '{name}'")
        x, y = await self.element_point(window, key)
        async with self._raw_input(window) as outcome:
            self.x.click(x, y)
        return outcome.done(f"pointer click at ({x}, {y})")

    async def fill_element(
        self, window: WindowInfo, key: tuple[str, str], text: str
    ) -> ActionOutcome:
        live = await self.a11y.inspect(key, window.pid)
        if live is not None and live.role == "table-cell" and not await self._editable(key):
            return await self.fill_cell(window, live, text)  # a spreadsheet's cell
        masked = live is not None and live.role == "password-text"
        how = await self.a11y.set_text(key, text, masked=masked)
        if how is not None:
            return ActionOutcome("atspi", how)
        # no EditableText (Chromium inputs): focus it, select all, type over it
        return await self._type_over(window, key, text, masked=masked)

    async def _editable(self, key: tuple[str, str]) -> bool:
        return "EditableText" in await self.a11y.interfaces(key)

    async def _type_over(
        self, window: WindowInfo, key: tuple[str, str], text: str, *, masked: bool = False
    ) -> ActionOutcome:
        async with self._raw_input(window) as outcome:
            if not await self._focus(key):
                x, y = await self.element_point(window, key)
                self.x.click(x, y)
                if not await self._has_focus(key):
                    raise ActionFailed("the field did not take the keyboard focus")
            self.x.press_combo([self.x.keysym("Control_L"), self.x.keysym("a")])
            self.x.press_combo([self.x.keysym("BackSpace")])
            self.x.type_text(text)
            # key events are queued; the app may still be applying them: wait until the field
            # shows the text, so that the next action (focusing another field) cannot steal
            # keystrokes meant for this one
            if not await self._shows(key, text, masked):
                shown = "(hidden)" if masked else await self.a11y.read_text(key)
                raise ActionFailed(
                    f"typed {len(text)} characters but the field shows {shown!r}; re-read it"
                )
        return outcome.done("focused the field, selected all and typed")

    async def _shows(
        self, key: tuple[str, str], text: str, masked: bool = False, timeout: float = 3.0
    ) -> bool:
        async def check() -> bool:
            return shows(await self.a11y.read_text(key), text, masked)

        try:
            await async_wait_for(check, timeout=timeout, what="the typed text")
        except WaitTimeout:
            return False
        return True

    async def _focus(self, key: tuple[str, str]) -> bool:
        """GrabFocus, then wait until the element reports FOCUSED (Chromium focuses
        asynchronously: typing right away would go to the previous field)."""
        return await self.a11y.grab_focus(key) and await self._has_focus(key)

    async def _has_focus(self, key: tuple[str, str], timeout: float = 1.5) -> bool:
        async def focused() -> bool:
            live = await self.a11y.inspect(key)
            return live is not None and "focused" in live.states

        try:
            await async_wait_for(focused, timeout=timeout, what="the keyboard focus")
        except WaitTimeout:
            return False
        return True

    async def focus_element(self, window: WindowInfo, key: tuple[str, str]) -> bool:
        return await self._focus(key)
