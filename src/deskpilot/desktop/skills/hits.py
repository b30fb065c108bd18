"""Hit-tests shared within an action: the element at a screen point, asked once.

A click on a page's element hit-tests its point twice over — the cover check (what a
person's click would reach there) and the click itself (the point approved) — and a web
engine's hit-test is slow (Chromium's first answer is a guess until its renderer's comes:
:mod:`deskpilot.desktop.atspi.point_hits`). An answer is
reused for the same window and point while nothing can have moved: no accessibility event
has come since (of any app) and it is younger than FRESH_S.
"""

from __future__ import annotations

import time

from deskpilot.desktop.base import LiveElement, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import WindowHandle

#: How long a hit-test's answer is reused, at most (within one action).
FRESH_S = 1.0


class HitTests:
    """The element at a window's screen point, each point asked once while nothing moved."""

    def __init__(self, ports: Ports) -> None:
        self.a11y = ports.a11y
        #: (window handle, x, y) → (when, events seen then, the answer)
        self._last: tuple[tuple[WindowHandle, int, int], float, int, LiveElement | None] | None = (
            None
        )

    async def element_at(self, window: WindowInfo, x: int, y: int) -> LiveElement | None:
        where = (window.handle, x, y)
        seen = self.a11y.events_seen()
        if self._last is not None:
            was, when, events, hit = self._last
            if was == where and events == seen and time.monotonic() - when < FRESH_S:
                return hit
        hit = await self.a11y.element_at(window, x, y)
        # the events seen *before* the question: one that came during it voids the answer
        self._last = (where, time.monotonic(), seen, hit)
        return hit
