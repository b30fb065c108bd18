"""Element actions: click, fill and focus an element by its key, AT-SPI first.

Each action prefers AT-SPI (an action, ``EditableText``, ``GrabFocus``: no focus or pointer
needed); where an element offers none (Chromium's inputs), it falls back to raw input at the
element's on-screen position and checks the effect (the field takes the focus, shows the text).
Filling is :mod:`linux_fill`; table cells are :mod:`linux_cells`.
"""

from __future__ import annotations

from deskpilot.desktop.base import ActionOutcome, WindowInfo
from deskpilot.desktop.linux_cells import selects_first
from deskpilot.desktop.linux_fill import LinuxFill


class LinuxElements(LinuxFill):
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
            await self._click(x, y)
        return outcome.done(f"pointer click at ({x}, {y})")

    async def focus_element(self, window: WindowInfo, key: tuple[str, str]) -> bool:
        return await self._focus(key)
