"""Reading: a window's accessibility snapshot, and live looks at single elements.

A read right after keyboard or pointer input first lets the app settle (input is processed
asynchronously); a window whose pixels changed since its last read is read in full, not from
the event cache (see :mod:`.pixels`). A read whose app's focused element lies outside the tree
just read (a popup the toolkit did not announce) is read again in full, once. GTK 4 popovers,
which report extents as if they lay inside their window, are moved to where their popup
surfaces really are (:mod:`.popovers`). The app's popups over the window (a context menu,
outside every window's tree) are read with it. A read of a window nothing could have changed
since its last read (no event, no input, same pixels, place and popups) is that read again
(:mod:`.read_memo`), once the app has answered one call.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import NOT_ANSWERING, LiveElement, Node, Rect, Snapshot, WindowInfo
from deskpilot.desktop.caret import Caret
from deskpilot.desktop.cell_refs import Place
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey, WindowHandle
from deskpilot.desktop.skills.pixels import Pixels
from deskpilot.desktop.skills.popovers import place_popovers, shift_to
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.desktop.skills.read_memo import ReadMemo
from deskpilot.desktop.skills.tab_closers import DrawnClosers, drawn_live, tab_of
from deskpilot.errors import DeskpilotError, NotAnswering

#: A read within this many seconds of keyboard/pointer input first lets the app settle.
INPUT_SETTLE_S = 1.0
#: Ancestors of a focused element asked at most to place it in a window.
MAX_FOCUS_CLIMB = 16
#: How long a settle waits at most for a window the app announced to reach the screen.
NEW_WINDOW_S = 3.0


def content_digest(snap: Snapshot) -> int:
    """What a read shows, as one number: two reads with the same one show the same nodes,
    names, states, places and texts."""
    return hash(
        tuple(
            (n.key, n.role, n.name, n.states, n.bounds, n.text, n.value, len(n.children))
            for n in snap.nodes()
        )
    )


class Reading:
    """Snapshots of windows and live element checks."""

    def __init__(self, ports: Ports, pixels: Pixels, raw: RawInput) -> None:
        self.windows = ports.windows
        self.a11y = ports.a11y
        self.pixels = pixels
        self.raw = raw
        self.closers = DrawnClosers(pixels)  # GTK 3 tabs' close buttons, drawn only
        self._focus_checked: dict[WindowHandle, ElementKey] = {}  # window → focus looked for
        self.memo = ReadMemo()

    async def snapshot(
        self,
        window: WindowInfo,
        *,
        timeout: float = 5.0,
        fresh: bool = False,
        whole: ElementKey | None = None,
    ) -> Snapshot:
        start = time.perf_counter()
        if time.monotonic() - self.raw.last_input < INPUT_SETTLE_S:
            # keyboard/pointer input is processed asynchronously: let the app catch up
            # (a read right after typing "12*7\n" could still show "12×7")
            await self.settle(window, self.raw.last_input)
        events = self.a11y.events_seen()  # before the read: one that comes during it voids it
        fresh = await self.pixels.changed(window) or fresh
        # ``whole`` only when asked: ports (and their fakes) written before it still serve reads
        part: dict[str, Any] = {"whole": whole} if whole is not None else {}
        popups = [
            r for r in await self.windows.popups(window) if r.x + r.width > 0 < r.y + r.height
        ]
        if popups:
            part["popups"] = popups  # a context menu: a popup outside the window's tree
        if not fresh and whole is None:
            again = await self._again(window, events, tuple(popups))
            if again is not None:
                again.elapsed_ms = (time.perf_counter() - start) * 1000
                return again
        read = await self.a11y.read_window(window, timeout=timeout, fresh=fresh, **part)
        if not fresh and read.root is not None and await self._focus_outside(window, read.root):
            # the focus moved into something the tree does not have: a popup the toolkit did
            # not announce (GTK 4's drop-down list): read the window afresh, once
            read = await self.a11y.read_window(window, timeout=timeout, fresh=True, **part)
        watched = False  # tabs whose close buttons are only drawn: found in pixels
        if read.root is not None:
            place_popovers(read.root, popups)  # GTK 4's, reported at their anchors
            await self.closers.add(window, read.root)  # GTK 3 tabs' (.tab_closers)
            watched = self.closers.watches(window.handle)
        await self.pixels.take_baseline(window)
        # those pixels may change with no event (a hover): a window with such tabs is read
        # each time
        kept = whole is None and not read.partial and not read.problems and not watched
        if read.root is not None and kept:
            self.memo.keep(window, events, tuple(popups), self.raw.last_input, read.root)
        else:
            self.memo.drop(window.handle)
        return Snapshot(
            window=window,
            root=read.root,
            partial=read.partial,
            problems=read.problems,
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )

    async def _again(
        self, window: WindowInfo, events: int, popups: tuple[Rect, ...]
    ) -> Snapshot | None:
        """The window's last read when nothing could have changed it (:mod:`.read_memo`) and
        its app still answers; else None (read it)."""
        kept = self.memo.get(window, events, popups, self.raw.last_input)
        if kept is None:
            return None
        try:
            await self.a11y.states(kept.key)  # it still answers (a frozen app does not)
        except NotAnswering:
            self.memo.drop(window.handle)
            return Snapshot(window=window, root=None, partial=True, problems=[NOT_ANSWERING])
        except DeskpilotError:
            self.memo.drop(window.handle)  # gone, or its frame is: a read says what
            return None
        return Snapshot(window=window, root=kept, unchanged=True)

    async def popover_shift(self, window: WindowInfo, believed: Rect) -> tuple[int, int]:
        """How far a GTK 4 popover really is from where its extents put it (on X11 it is a
        popup window of its own, placed elsewhere): :func:`.popovers.shift_to`."""
        return shift_to(believed, await self.windows.popups(window))

    async def _focus_outside(self, window: WindowInfo, root: Node) -> bool:
        """Whether the app's focused element lies inside this window but is missing from the
        tree just read (its ancestors, asked live, reach a node of the tree). Decided once per
        focused element."""
        focused = await self.a11y.focused(window)
        if focused is None:
            return False
        known = {n.key for n in root.walk()}
        if focused in known or self._focus_checked.get(window.handle) == focused:
            return False
        self._focus_checked[window.handle] = focused
        key: ElementKey | None = focused
        for _ in range(MAX_FOCUS_CLIMB):
            live = await self.a11y.inspect(key) if key is not None else None
            if live is None or live.parent_key is None:
                return False
            if live.parent_key in known:
                return True
            key = live.parent_key
        return False

    async def inspect(self, key: ElementKey) -> LiveElement | None:
        tab = tab_of(key)
        if tab is not None:  # a GTK 3 tab's close button, drawn only (.tab_closers)
            return drawn_live(key, await self.inspect(tab))
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

    async def cell_at(self, key: ElementKey, row: int, col: int) -> ElementKey | None:
        return await self.a11y.cell_at(key, row, col)

    async def read_cells(
        self, window: WindowInfo, key: ElementKey, first: Place, last: Place
    ) -> tuple[Node | None, list[str]]:
        return await self.a11y.read_cells(window, key, first, last)

    async def read_text(self, key: ElementKey) -> str | None:
        return await self.a11y.read_text(key)

    async def settle(self, window: WindowInfo, since: float) -> bool:
        settled = await self.a11y.settle(window, since)
        if settled.new_window:
            await self._new_window_shown(window)
        return settled.reacted

    async def focused_element(self, window: WindowInfo) -> ElementKey | None:
        return await self.a11y.focused(window)

    async def text_caret(self, key: ElementKey) -> Caret | None:
        return await self.a11y.caret(key)

    async def _new_window_shown(self, window: WindowInfo) -> None:
        """The app announced another window (a dialog it opened): wait until the window
        manager has it. The app says so before the window is mapped, and an action's result
        must report the dialog it opened."""
        before = await self.windows.handles()

        async def shown() -> bool:
            now = await self.windows.handles()
            return await self.windows.active_handle() != window.handle or len(now) != len(before)

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(shown, timeout=NEW_WINDOW_S, what="the new window", interval=0.05)

    async def element_at(
        self, x: int, y: int, window: WindowInfo | None = None
    ) -> LiveElement | None:
        if window is None:
            window = await self.windows.window_at(x, y)
        if window is None:
            return None
        return await self.a11y.element_at(window, x, y)
