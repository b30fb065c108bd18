"""Reading: a window's accessibility snapshot, and live looks at single elements.

A read right after keyboard or pointer input first lets the app settle (input is processed
asynchronously); a window whose pixels changed since its last read is read in full, not from
the event cache (see :mod:`linux_pixels`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.atspi import Accessibility
from deskpilot.desktop.atspi_calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.base import LiveElement, Node, Rect, Snapshot, WindowInfo
from deskpilot.desktop.caret import LINE_SCAN, SHOWN_SELECTION, Caret, line_and_column
from deskpilot.desktop.cell_refs import Place
from deskpilot.desktop.linux_pixels import LinuxPixels
from deskpilot.desktop.x11 import X11
from deskpilot.desktop.x11_popups import popups_over

#: A read within this many seconds of keyboard/pointer input first lets the app settle.
INPUT_SETTLE_S = 1.0
#: How far (width + height, px) a popup window's size may differ from a GTK 4 popover's.
POPOVER_MISFIT = 40
#: Ancestors of a focused element asked at most to place it in a window.
MAX_FOCUS_CLIMB = 16
#: How long a settle waits at most for a window the app announced to reach the screen.
NEW_WINDOW_S = 3.0


class LinuxReading(LinuxPixels):
    """Snapshots of windows and live element checks."""

    def __init__(self, settings: Settings, x11: X11, a11y: Accessibility) -> None:
        super().__init__(settings, x11, a11y)
        self._last_input = 0.0  # monotonic time of the last keyboard/pointer input
        self._focus_checked: dict[int, tuple[str, str]] = {}  # window → focus looked for

    async def snapshot(
        self, window: WindowInfo, *, timeout: float = 5.0, fresh: bool = False
    ) -> Snapshot:
        start = time.perf_counter()
        if time.monotonic() - self._last_input < INPUT_SETTLE_S:
            # keyboard/pointer input is processed asynchronously: let the app catch up
            # (a read right after typing "12*7\n" could still show "12×7")
            await self.settle(window, self._last_input)
        fresh = await self._pixels_changed(window) or fresh
        root, partial, problems = await self.a11y.read_window(window, timeout=timeout, fresh=fresh)
        if not fresh and root is not None and await self._focus_outside(window, root):
            # the focus moved into something the tree does not have: a popup the toolkit did
            # not announce (GTK 4's drop-down list): read the window afresh, once
            root, partial, problems = await self.a11y.read_window(
                window, timeout=timeout, fresh=True
            )
        if root is not None:
            self._place_popovers(window, root)
        if window.xid in self._baselines and self._baselines[window.xid] is None:
            self._baselines[window.xid] = asyncio.ensure_future(
                asyncio.to_thread(self._checksum, self._on_screen(window))
            )
        return Snapshot(
            window=window,
            root=root,
            partial=partial,
            problems=problems,
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )

    def popover_shift(self, window: WindowInfo, believed: Rect) -> tuple[int, int]:
        """How far a GTK 4 popover really is from where its extents put it. GTK 4 reports a
        popover's extents as if it lay inside its window, but on X11 it is a popup window of
        its own, placed elsewhere (26 px lower for a drop-down's list: a click by its rows'
        extents hit the row above). The app's popup window closest in size is taken."""
        best: tuple[int, Rect] | None = None
        for _xid, rect in popups_over(self.x.d, self.x.root, window.xid):
            misfit = abs(rect.width - believed.width) + abs(rect.height - believed.height)
            if misfit <= POPOVER_MISFIT and (best is None or misfit < best[0]):
                best = (misfit, rect)
        if best is None:
            return (0, 0)
        return (best[1].x - believed.x, best[1].y - believed.y)

    def _place_popovers(self, window: WindowInfo, root: Node) -> None:
        """Move the nodes of open GTK 4 popovers to where their popup windows are."""
        for node in root.walk():
            if node.name != "GtkPopover" or node.bounds is None or node.bounds.empty:
                continue
            dx, dy = self.popover_shift(window, node.bounds)
            if (dx, dy) == (0, 0):
                continue
            for part in node.walk():
                if part.bounds is not None:
                    part.bounds = part.bounds.offset(dx, dy)

    async def _focus_outside(self, window: WindowInfo, root: Node) -> bool:
        """Whether the app's focused element lies inside this window but is missing from the
        tree just read (its ancestors, asked live, reach a node of the tree). Decided once per
        focused element."""
        focused = self.a11y.focus.of(await self.a11y.buses_for_pid(window.pid))
        if focused is None:
            return False
        known = {n.key for n in root.walk()}
        if focused in known or self._focus_checked.get(window.xid) == focused:
            return False
        self._focus_checked[window.xid] = focused
        key: tuple[str, str] | None = focused
        for _ in range(MAX_FOCUS_CLIMB):
            live = await self.a11y.inspect(key) if key is not None else None
            if live is None or live.parent_key is None:
                return False
            if live.parent_key in known:
                return True
            key = live.parent_key
        return False

    async def inspect(self, key: tuple[str, str]) -> LiveElement | None:
        live = await self.a11y.inspect(key)
        if live is None:
            return None
        bounds = await self.a11y.extents(key)
        return LiveElement(
            key=live.key,
            pid=live.pid,
            role=live.role,
            name=live.name,
            parent_key=live.parent_key,
            states=live.states,
            bounds=bounds,
        )

    async def cell_at(self, key: tuple[str, str], row: int, col: int) -> tuple[str, str] | None:
        return await self.a11y.cell_at(key, row, col)

    async def read_cells(
        self, window: WindowInfo, key: tuple[str, str], first: Place, last: Place
    ) -> tuple[Node | None, list[str]]:
        return await self.a11y.read_cells(window, key, first, last)

    async def read_text(self, key: tuple[str, str]) -> str | None:
        return await self.a11y.read_text(key)

    async def settle(self, window: WindowInfo, since: float) -> bool:
        buses = await self.a11y.buses_for_pid(window.pid)
        if not buses:
            return False
        results = await asyncio.gather(*(self.a11y.bus.settle(b, since) for b in buses))
        await self._new_window_shown(window, buses, since)
        return any(results)

    async def focused_element(self, window: WindowInfo) -> tuple[str, str] | None:
        return self.a11y.focus.of(await self.a11y.buses_for_pid(window.pid))

    async def text_caret(self, key: tuple[str, str]) -> Caret | None:
        bus = self.a11y.bus
        try:
            offset = int(await bus.get_property(*key, "Text", "CaretOffset"))
            length = int(await bus.get_property(*key, "Text", "CharacterCount"))
            count = int((await bus.call(*key, "Text", "GetNSelections"))[0])
        except (AtspiCallError, AtspiTimeout):
            return None  # no Text, or it is gone
        if offset < 0:
            return None  # a text without a caret (a label)
        line = column = None
        with contextlib.suppress(AtspiCallError, AtspiTimeout):
            if offset <= LINE_SCAN:
                before = (await bus.call(*key, "Text", "GetText", "ii", [0, offset]))[0]
                line, column = line_and_column(str(before))
        selections: list[tuple[int, int, str]] = []
        for i in range(min(count, 4)):
            with contextlib.suppress(AtspiCallError, AtspiTimeout):
                start, end = (
                    int(v) for v in await bus.call(*key, "Text", "GetSelection", "i", [i])
                )
                if end > start:
                    stop = min(end, start + SHOWN_SELECTION + 1)
                    text = (await bus.call(*key, "Text", "GetText", "ii", [start, stop]))[0]
                    selections.append((start, end, str(text).replace("\ufffc", "")))
        return Caret(key, offset, line, column, length, selections)

    async def _new_window_shown(self, window: WindowInfo, buses: list[str], since: float) -> None:
        """When the app announced another window since ``since`` (a dialog it opened), wait
        until the window manager has it: the app says so before X maps it, and an action's
        result must report the dialog it opened."""
        where = self.a11y.cache.located.get(window.xid)
        frame = where.frame if where is not None else None
        announced = [
            seen for b in buses
            if (seen := self.a11y.bus.last_window.get(b)) is not None
            and seen[0] > since and seen[1] != frame
        ]  # fmt: skip
        if not announced:
            return
        before = self.x.client_ids()

        async def shown() -> bool:
            now = self.x.client_ids()
            return self.x.active_xid() != window.xid or len(now) != len(before)

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(shown, timeout=NEW_WINDOW_S, what="the new window", interval=0.05)

    async def element_at(self, x: int, y: int) -> LiveElement | None:
        window = await self.window_at(x, y)
        if window is None:
            return None
        return await self.a11y.element_at(window, x, y)
