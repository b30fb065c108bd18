"""The console's event stream: numbered items, a bounded history, one queue per open page.

Everything a page shows arrives as an :class:`Item` on one Server-Sent-Events stream
(``GET /api/events``): ``session`` items (a card's whole state, sent on every change) and
``event`` items (one per recorded :class:`~deskpilot.events.Event` of a session: the chips,
confirmations, the answer). Items are numbered; a page that reconnects with ``Last-Event-ID``
gets what it missed from the history, and a new page gets the latest state of every session
plus the chips of each, so a reload keeps everything.

Publishing never blocks (sinks are synchronous): each subscriber has a bounded queue, and one
that falls behind is dropped (its stream ends, the browser reconnects and replays).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

#: Items kept for replay (chips of every session shown, plus state changes).
HISTORY = 20000
#: Items a subscriber may have queued before it is dropped.
QUEUE = 2000
#: Seconds between keep-alive comments on an idle stream.
KEEPALIVE = 15.0
#: Seconds a page counts as "watching" after its stream closed (a reload takes a moment).
RECONNECT_GRACE = 10.0


@dataclass(frozen=True)
class Item:
    seq: int
    session: str
    kind: str  # "session" (a card's state) or "event" (one recorded Event)
    data: dict[str, Any]
    ts: float = field(default_factory=time.time)
    #: when it was published (``ts`` is when its event happened; the log is written between)
    at: float = field(default_factory=time.time)

    def sse(self) -> bytes:
        payload = {
            "seq": self.seq,
            "session": self.session,
            "kind": self.kind,
            "data": self.data,
            "ts": self.ts,
            "at": self.at,
        }
        text = json.dumps(payload, ensure_ascii=False, default=str, separators=(",", ":"))
        return f"id: {self.seq}\ndata: {text}\n\n".encode()


class Subscriber:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[Item | None] = asyncio.Queue(QUEUE)
        self.dropped = False


class Hub:
    """Numbered items for the console's pages (see the module docstring)."""

    def __init__(self, history: int = HISTORY) -> None:
        self._seq = 0
        self._history: deque[Item] = deque(maxlen=history)
        self._latest: dict[str, Item] = {}  # session → its last "session" item
        self._subscribers: set[Subscriber] = set()
        self._last_left = 0.0
        self.closed = False

    # -- publishing -----------------------------------------------------------------------

    def publish(
        self, session: str, kind: str, data: dict[str, Any], ts: float | None = None
    ) -> Item:
        self._seq += 1
        item = Item(self._seq, session, kind, data, time.time() if ts is None else ts)
        self._history.append(item)
        if kind == "session":
            self._latest[session] = item
        for sub in list(self._subscribers):
            try:
                sub.queue.put_nowait(item)
            except asyncio.QueueFull:
                self._drop(sub)
        return item

    def forget(self, session: str) -> None:
        """Drop a session from what new pages are shown (its history ages out)."""
        self._latest.pop(session, None)

    # -- subscribing ------------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        """Whether a page is connected (or was, within RECONNECT_GRACE seconds)."""
        if self._subscribers:
            return True
        return bool(self._last_left) and time.monotonic() - self._last_left < RECONNECT_GRACE

    def replay(self, after: int | None) -> list[Item]:
        """What a page connecting with ``Last-Event-ID: after`` (None: a new page) must get."""
        oldest = self._history[0].seq if self._history else self._seq + 1
        if after is not None and after >= oldest - 1:
            return [i for i in self._history if i.seq > after]
        shown = set(self._latest)
        items: Iterable[Item] = (
            i for i in self._history if i.session in shown and i.kind == "event"
        )
        return sorted([*self._latest.values(), *items], key=lambda i: i.seq)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[Subscriber]:
        sub = Subscriber()
        self._subscribers.add(sub)
        try:
            yield sub
        finally:
            self._subscribers.discard(sub)
            self._last_left = time.monotonic()

    def _drop(self, sub: Subscriber) -> None:
        sub.dropped = True
        self._subscribers.discard(sub)
        self._last_left = time.monotonic()
        with contextlib.suppress(asyncio.QueueFull):
            sub.queue.put_nowait(None)

    async def stream(self, after: int | None) -> AsyncIterator[bytes]:
        """The SSE body for one page: the replay, then live items, keep-alives when idle."""
        async with self.subscribe() as sub:
            yield b"retry: 1000\n\n"
            last = 0
            for old in self.replay(after):
                last = old.seq
                yield old.sse()
            while not self.closed:
                try:
                    async with asyncio.timeout(KEEPALIVE):
                        item: Item | None = await sub.queue.get()
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                if item is None:  # dropped, or the server is stopping
                    return
                if item.seq > last:
                    last = item.seq
                    yield item.sse()

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        self.closed = True
        for sub in list(self._subscribers):
            with contextlib.suppress(asyncio.QueueFull):
                sub.queue.put_nowait(None)
