"""Typing into a named element, checked as the keys go.

A step that names the element its keys are for (``type`` with an ``elementID``) gives it the
focus first (:mod:`.focus`); but the app may move the focus on its own while the keys go — a
PIN field that jumps to the next one after its last digit, a dialog that grabs the focus —
and the rest of the keys would land in another control. So the first keys are sent one at a
time, each once the app has taken the one before (the element's text changed, or it sent an
event), and the focus checked after each (on the element, or on a part of it); typing stops
where the focus left. The rest goes in chunks of CHUNK characters, checked between chunks: of
the chunk the focus left in, the element's text tells how many reached it, and the result
says the rest followed the focus.
"""

from __future__ import annotations

import time

from deskpilot.desktop.base import Typed, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.desktop.skills.settle import until
from deskpilot.errors import ElementCallFailed, NotAnswering

#: The first HEAD characters are typed one at a time (where a PIN or code field moves the
#: focus on), the rest CHUNK at a time: each check waits for the app to show the keys in its
#: accessible text (Chromium: ~28 ms; 30 characters took 1.1–1.25 s one at a time against
#: 0.3–0.7 s sent at once)
HEAD = 8
CHUNK = 8
#: How far up from the app's focused element the named element is looked for.
MAX_DEPTH = 8
#: How long the app is given to take a key (its text to change) before the next is sent;
#: an element without text, or a key that changes none (Enter in an entry), waits this long
#: at most for the app's next event.
TAKE_S = 0.5


def pieces(text: str) -> list[str]:
    """The text as it is sent: its first HEAD characters one at a time, then chunks."""
    head, rest = list(text[:HEAD]), text[HEAD:]
    return head + [rest[i : i + CHUNK] for i in range(0, len(rest), CHUNK)]


class CheckedKeys:
    """Typing into a named element, the focus checked after each key (see the module)."""

    def __init__(self, ports: Ports, raw: RawInput) -> None:
        self.a11y = ports.a11y
        self.input = ports.input
        self.raw = raw

    async def type_into(self, window: WindowInfo, key: ElementKey, text: str) -> Typed:
        """Type ``text`` into the element, which has the focus (:func:`.focus.take_focus`)."""
        parts = pieces(text)
        reached = 0
        async with self.raw.session(window) as outcome:
            for i, piece in enumerate(parts):
                before = await self._text(key)
                await self.input.type_text(piece)
                self.raw.last_input = time.monotonic()
                await self._taken(key, before, len(piece))
                if i + 1 == len(parts) or await self._holds(window, key):
                    reached += len(piece)
                    continue
                # the focus left: one key reached the element (the focus moved on it); of a
                # chunk, what the element's text grew by did, the rest followed the focus
                got = await self._grew(key, before, len(piece))
                focus = await self.a11y.focused(window)
                done = outcome.done(f"typed {reached} of {len(text)} characters")
                if got is None:
                    return Typed(done, reached, True, focus, len(piece), spill_known=False)
                return Typed(done, reached + got, True, focus, len(piece) - got)
        return Typed(outcome.done(f"typed {len(text)} characters"), len(text))

    async def _grew(self, key: ElementKey, before: str | None, sent: int) -> int | None:
        """How many of ``sent`` characters reached the element, by how much its text grew
        (None when that cannot tell: no text, or it shrank)."""
        if sent == 1:
            return 1
        now = await self._text(key)
        if before is None or now is None or not 0 <= len(now) - len(before) <= sent:
            return None
        return len(now) - len(before)

    async def _holds(self, window: WindowInfo, key: ElementKey) -> bool:
        """Whether the element has the focus, itself or through a part of it (a document
        whose paragraph takes the caret)."""
        live = await self.a11y.inspect(key)
        if live is None:
            return False
        if "focused" in live.states:
            return True
        inner = await self.a11y.focused(window)
        for _ in range(MAX_DEPTH):
            if inner is None:
                return False
            if inner == key:
                return True
            try:
                inner = await self.a11y.parent(inner)
            except (ElementCallFailed, NotAnswering):
                return False
        return False

    async def _text(self, key: ElementKey) -> str | None:
        try:
            return await self.a11y.read_text(key)
        except (ElementCallFailed, NotAnswering):
            return None

    async def _taken(self, key: ElementKey, before: str | None, sent: int) -> None:
        """Wait until the app has taken the keys just sent: the element's text grew by them
        (changed, for one key), or it lost the focus; for an element without text, the
        app's next event."""
        if before is None:
            seen = self.a11y.events_seen()
            await self.a11y.next_event(seen, TAKE_S)
            return

        async def taken() -> bool:
            now = await self._text(key)
            if now != before and (sent == 1 or now is None or len(now) - len(before) >= sent):
                return True
            live = await self.a11y.inspect(key)
            return live is None or "focused" not in live.states

        await until(self.a11y, taken, TAKE_S)
