"""A window's last read, handed out again while nothing could have changed it.

A warm read builds the window's nodes again from the event cache even when no event came
since the last read (a Chromium page: ~10 ms of the 15 ms read, the same tree every time). A
read is kept with what it was read under — the accessibility events seen before it began, the
window's place and size, the app's popups over it, the last keyboard or pointer input — and
given again while all of them still hold, after the same pixel check a warm read has (what
changes without an event, a page scrolled, changes its pixels: the caller reads afresh).

Only a complete read is kept: a partial one, one with problems, a zoomed one (``whole``), or
one of a window whose tabs' close buttons are found in its pixels (GTK 3's, drawn only:
:mod:`.tab_closers`; a hover may draw one with no event) is never handed out again. Nodes
handed out are shared between the reads that got them: nothing outside the read that built
them changes them (their builders and the placing of GTK 4 popovers, :mod:`.popovers`, run
before a read is kept; rendering merges a sheet's panes in place, once).
"""

from __future__ import annotations

from dataclasses import dataclass

from deskpilot.desktop.base import Node, Rect, WindowInfo
from deskpilot.desktop.ports.identity import WindowHandle

#: Windows whose last read is kept at most (the oldest is let go first).
KEPT_WINDOWS = 16


@dataclass(frozen=True)
class _Kept:
    events: int  # accessibility events seen (of any app) before the read began
    geometry: Rect
    popups: tuple[Rect, ...]
    input_at: float  # the last keyboard or pointer input before the read
    root: Node


class ReadMemo:
    """The last complete read of each window, and when it may be given again."""

    def __init__(self) -> None:
        self._kept: dict[WindowHandle, _Kept] = {}

    def get(
        self, window: WindowInfo, events: int, popups: tuple[Rect, ...], input_at: float
    ) -> Node | None:
        """The window's last read when no event came since it began, the window has its place
        and size, the same popups are over it and no input was sent since; else None."""
        kept = self._kept.get(window.handle)
        if kept is None:
            return None
        if (kept.events, kept.geometry, kept.popups, kept.input_at) != (
            events,
            window.geometry,
            popups,
            input_at,
        ):
            del self._kept[window.handle]
            return None
        return kept.root

    def keep(
        self,
        window: WindowInfo,
        events: int,
        popups: tuple[Rect, ...],
        input_at: float,
        root: Node,
    ) -> None:
        self._kept.pop(window.handle, None)  # the newest last
        self._kept[window.handle] = _Kept(events, window.geometry, popups, input_at, root)
        while len(self._kept) > KEPT_WINDOWS:
            del self._kept[next(iter(self._kept))]

    def drop(self, handle: WindowHandle) -> None:
        self._kept.pop(handle, None)
