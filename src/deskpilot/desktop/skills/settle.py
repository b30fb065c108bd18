"""Waiting for an app's reaction on the app's own events, not on a timer.

:func:`until` checks a condition (a field shows the typed text, an element has the focus)
again each time an accessibility event comes, and at least every MAX_GAP_S (an app that
changes something without saying so is still seen). A poll that backs off checked late by up
to half its interval: a field that showed its text 60 ms after typing was seen at 95 ms.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from deskpilot.desktop.ports.accessibility import Accessibility

#: Longest time between two checks when no event comes.
MAX_GAP_S = 0.1


async def until(a11y: Accessibility, check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    """Whether ``check`` held within ``timeout`` seconds, checked at each event."""
    deadline = time.monotonic() + timeout
    while True:
        seen = a11y.events_seen()  # before the check: an event during it checks again at once
        if await check():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        await a11y.next_event(seen, min(left, MAX_GAP_S))
