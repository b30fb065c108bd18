"""Hit-tests at a point of a frame: the deepest element there, and a web engine's own answer.

``GetAccessibleAtPoint`` answers with a child holding the point; asked again of that child
until none is deeper, it gives the deepest element.

Chromium hit-tests asynchronously: its first answer at a point is a guess (the last answer,
where the point lies in its box: an overlay's box where the element inside it is; else the
box found in its own copy of the tree), and each question sends the point to the renderer,
whose answer replaces the guess when it comes. A guess holds until then, so an answer that
changed is the renderer's. The point is asked again every HIT_POLL_S until the answer changes
(measured on an idle machine: the renderer's answer came 3–5 ms after the question, where a
fixed 50 ms gap was waited before), or until the renderer has had as long as its answers
take here (:meth:`PointHits.patience`), when the answer that never changed is taken: the
guess was right. No answer is timed before the renderer's first: until then it has HIT_GAP_S,
the gap waited before. A first question that found nothing deeper than the frame (its call
failed) makes the next answer the guess, not the renderer's.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi.consts import NULL_PATH

#: The longest a web engine's renderer is given to answer a hit-test (an unchanged answer is
#: taken then).
HIT_GAP_S = 0.05
#: How often the point is asked again meanwhile.
HIT_POLL_S = 0.003
#: Once its answers have been timed, the renderer is given this many times the slowest of its
#: last HIT_TIMED answers, at least HIT_MIN_S: a loaded machine's slower answers lengthen the
#: wait again (to HIT_GAP_S at most). The floor is for the answer that comes late while the
#: machine turns busy (a guess taken then is what a cover check judges by): only an answer
#: that never changes waits it, a changed one is taken when it comes.
HIT_MARGIN = 4.0
HIT_MIN_S = 0.025
HIT_TIMED = 8
#: Levels a hit-test descends at most.
MAX_DEPTH = 64

Key = tuple[str, str]


class PointHits:
    """Hit-tests on one accessibility bus, with how long each web engine's renderer takes."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus
        #: per app: how long its renderer's last answers took (seconds after the question)
        self._timed: dict[str, deque[float]] = {}

    async def deepest(self, bus_name: str, frame: str, point: tuple[int, int]) -> Key:
        """The deepest element of ``frame`` at ``point`` (the app's coordinates), as the app
        answers now; the frame itself where nothing is deeper or the app does not answer."""
        key = (bus_name, frame)
        for _ in range(MAX_DEPTH):
            try:
                body = await self.bus.call(
                    bus_name, key[1], "Component", "GetAccessibleAtPoint", "iiu", [*point, 0]
                )
            except (AtspiCallError, AtspiTimeout):
                break
            nbus, npath = body[0]
            if not nbus or npath in (NULL_PATH, key[1]):
                break
            key = (str(nbus), str(npath))
        return key

    async def renderers(self, bus_name: str, frame: str, point: tuple[int, int]) -> Key:
        """A web engine's answer at ``point``: its renderer's (see the module docstring)."""
        asked = time.monotonic()
        guess = await self.deepest(bus_name, frame, point)
        wait = self.patience(bus_name)
        while (left := asked + wait - time.monotonic()) > 0:
            await asyncio.sleep(min(HIT_POLL_S, left))
            key = await self.deepest(bus_name, frame, point)
            if key != guess and guess == (bus_name, frame):
                guess = key  # the first question went unanswered: this is the first guess
            elif key != guess:  # the renderer's answer has come
                timed = self._timed.setdefault(bus_name, deque(maxlen=HIT_TIMED))
                timed.append(time.monotonic() - asked)
                return key
        return guess

    def patience(self, bus_name: str) -> float:
        """How long the app's renderer is given to answer a hit-test."""
        timed = self._timed.get(bus_name)
        if not timed:
            return HIT_GAP_S
        return min(HIT_GAP_S, max(HIT_MIN_S, HIT_MARGIN * max(timed)))
