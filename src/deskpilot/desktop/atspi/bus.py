"""The accessibility bus: connect, register for events, and what it knows about its apps.

:class:`AtspiBus` is a :class:`~deskpilot.desktop.atspi.calls.CallQueue` (bounded, timed
calls) on the AT-SPI bus, plus the registry side: registering for events (atk-bridge apps only
export their cache and emit events a client registered for), listening to them (when each app
last sent one, for :meth:`AtspiBus.settle`), and the apps' bus names, PIDs and toolkits.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout, CallQueue
from deskpilot.desktop.atspi.connect import connect_bus, find_a11y_address
from deskpilot.desktop.atspi.consts import REGISTRY_BUS, REGISTRY_PATH, ROOT_PATH
from deskpilot.errors import AccessibilityUnavailable

#: Apps (by their root's accessible name) whose Cache.GetItems may crash them.
UNSAFE_CACHE_APPS = frozenset({"soffice", "soffice.bin", "libreoffice"})
#: A burst: this many events since an action (a window or document being built: GTK's file
#: chooser sends ~2,000, in spurts with gaps that grow on a loaded machine) ...
BURST = 20
#: ... after which the app is quiet only after this long without an event.
BURST_QUIET = 0.5
#: In an app whose tree is its own (not a web engine's), a burst is a tree that grew by BURST
#: objects or more (children added less children removed, windows created less destroyed):
#: a window being built. A key typed into a Calc cell replaces the children of a few objects
#: (30–60 events, no growth): no burst, where counting events made it one (0.5 s a key).
GROWTH_KEPT = 256
#: Recent event times kept per app.
RECENT = 64
#: Toolkits whose tree lives in another process (a web engine's renderer): a burst there is
#: counted in events, as before (their events are no sure measure of the tree's growth).
REMOTE_TREES = frozenset({"chromium", "electron", "gecko", "mozilla", "firefox"})
#: A web engine sends what an input (a click, a key) changed at once, in one batch, and what
#: the page changes later (a timer, a fetch, a debounce, an animation frame) in batches at
#: most this often (Blink's kDelayForDeferredUpdatesAfterPageLoad). After an action the page
#: is given this long after the action's own reaction (its last echo: the focus moving, the
#: last key in its field; else its first event) to show an effect, whether or not one showed
#: at once: an effect made within a batching period of the action is its effect. (Ending
#: 30 ms after an event that was not the focus's lost a page's change 120 ms after its keys
#: in tests/desktop/test_late_effects.py: in each of the 4 traced runs whose settle ended
#: before it, Chromium 156 had renamed a tab meanwhile, its name saying its memory use.)
WEB_BATCH_S = 0.15
#: After an event that showed an effect (a text, children, a state elsewhere than the
#: focused element): the rest of its batch (its signals are sent together) is in after this
#: quiet.
WEB_EFFECT_QUIET = 0.03
#: Then the engine is asked to send what it has not sent yet (a hit-test makes Blink send its
#: pending changes at once: measured, a 120 ms timer's change came 4–6 ms after one asked at
#: 140 ms, instead of at 163–236 ms), and its answer is waited for this long at least — or as
#: long as its renderer's hit-tests are known to take, when that is less
#: (:mod:`.point_hits`: 25 ms at least).
FLUSH_QUIET = 0.03


def _growth(msg: Message) -> int:
    """How an event grows the app's tree: +1 (a child added, a window created), -1 (removed,
    destroyed), else 0."""
    if msg.member == "ChildrenChanged" and msg.body:
        detail = str(msg.body[0])
        return 1 if detail.startswith("add") else -1 if detail.startswith("remove") else 0
    if msg.interface == "org.a11y.atspi.Event.Window":
        return 1 if msg.member == "Create" else -1 if msg.member == "Destroy" else 0
    return 0


def _about_focus(msg: Message) -> bool:
    """Whether an event says where the focus is (``focus:``, ``state-changed:focused``)."""
    if msg.interface == "org.a11y.atspi.Event.Focus":
        return True
    return msg.member == "StateChanged" and bool(msg.body) and str(msg.body[0]) == "focused"


def _incidental(path: str, focus: bool, focused: str | None) -> bool:
    """Whether an event is what an input causes by itself (the focus moving, the element
    with the focus echoing its keys, caret or states), not an effect it had on the page."""
    return focus or (focused is not None and path == focused)


class AtspiBus(CallQueue):
    """A connection to the AT-SPI bus with bounded, timed calls."""

    def __init__(
        self, bus: MessageBus, *, call_timeout: float = 2.0, max_in_flight: int = 32
    ) -> None:
        super().__init__(bus, call_timeout=call_timeout, max_in_flight=max_in_flight)
        self._pids: dict[str, int] = {}
        self._toolkits: dict[str, asyncio.Future[str]] = {}
        self._names: dict[str, asyncio.Future[str | None]] = {}  # each app root's name
        self._registered: set[str] = set()
        self._listening = False
        #: monotonic time of the last AT-SPI event from each app (bus name), once listening
        self.last_event: dict[str, float] = {}
        #: the last window each app announced (created or activated): (monotonic time, path)
        self.last_window: dict[str, tuple[float, str]] = {}
        #: times of each app's recent events (how busy it is)
        self._recent: dict[str, deque[float]] = {}
        #: each app's recent events: (time, path, whether it is about focus or the echo of
        #: input at the focused element only: see :func:`_incidental`)
        self._seen: dict[str, deque[tuple[float, str, bool]]] = {}
        #: when each web engine was last asked to send what it held back (settle's flush),
        #: and how long its answer was waited for
        self._flushed: dict[str, tuple[float, float]] = {}
        #: each app's recent events that grow or shrink its tree: (time, +1 or -1)
        self._growth: dict[str, deque[tuple[float, int]]] = {}
        #: (app, container path) → its active descendant's path (a sheet's cursor cell), as
        #: the app last announced it
        self.active_descendant: dict[tuple[str, str], str] = {}
        #: when an action's effect is due in each app at the earliest (a GTK button clicks
        #: 250 ms after its activation): a settle after it is not over before then
        self.effect_due: dict[str, float] = {}
        #: the settles under way per app: their ``since`` (see :meth:`settle`, a settle that
        #: defers to an earlier one)
        self._settling: dict[str, list[float]] = {}
        #: the waits woken by the next event (or a settle's start or end): each its own
        #: future, so that one wait's end cannot swallow another's wake-up (see _sleep)
        self._waiters: set[asyncio.Future[None]] = set()
        #: AT-SPI events received so far (of any app)
        self.events_seen = 0

    @classmethod
    async def connect(
        cls,
        session_bus: str | None,
        *,
        a11y_address: str | None = None,
        timeout: float = 5.0,
    ) -> AtspiBus:
        """Find the a11y bus through ``org.a11y.Bus`` on the session bus and connect to it."""
        if a11y_address is None:
            a11y_address = await find_a11y_address(session_bus, timeout)
        bus = await connect_bus(a11y_address, "accessibility bus", timeout)
        return cls(bus)

    async def close(self) -> None:
        self.peers.close()
        self.bus.disconnect()

    async def register_events(
        self, events: Sequence[str] = ("object:children-changed",), *, timeout: float | None = None
    ) -> None:
        """Tell the registry we listen; atk-bridge apps only export their Cache after this.
        ``timeout``: for the first call on a new bus, which D-Bus-activates the registry."""
        for event in events:
            if event in self._registered:
                continue
            try:
                await self.call(
                    REGISTRY_BUS,
                    REGISTRY_PATH,
                    "Registry",
                    "RegisterEvent",
                    "sass",
                    [event, [], ""],
                    timeout=timeout,
                )
            except AtspiCallError as exc:
                if not exc.unsupported:
                    raise
                await self.call(
                    REGISTRY_BUS,
                    REGISTRY_PATH,
                    "Registry",
                    "RegisterEvent",
                    "s",
                    [event],
                    timeout=timeout,
                )
            self._registered.add(event)

    async def listen(self) -> None:
        """Receive AT-SPI events (object, window, focus) and note when each app last sent one.

        atk-bridge apps only emit events some client registered for, so this registers too.
        """
        if self._listening:
            return
        self._listening = True
        self.bus.add_message_handler(self._on_message)
        for iface in ("Object", "Window", "Focus"):
            rule = f"type='signal',interface='org.a11y.atspi.Event.{iface}'"
            await self.call(
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "AddMatch",
                "s",
                [rule],
            )
        await self.register_events(("object:", "window:", "focus:"))

    def _on_message(self, msg: Message) -> None:
        if msg.message_type == MessageType.SIGNAL and (msg.interface or "").startswith(
            "org.a11y.atspi.Event."
        ):
            now = time.monotonic()
            self.last_event[msg.sender or ""] = now
            self.events_seen += 1
            self._wake()
            self._recent.setdefault(msg.sender or "", deque(maxlen=RECENT)).append(now)
            self._seen.setdefault(msg.sender or "", deque(maxlen=RECENT)).append(
                (now, msg.path or "", _about_focus(msg))
            )
            grew = _growth(msg)
            if grew:
                self._growth.setdefault(msg.sender or "", deque(maxlen=GROWTH_KEPT)).append(
                    (now, grew)
                )
            if msg.interface == "org.a11y.atspi.Event.Window" and msg.member in (
                "Create",
                "Activate",
            ):
                self.last_window[msg.sender or ""] = (now, msg.path or "")
            elif msg.member == "ActiveDescendantChanged" and len(msg.body) > 3:
                child = getattr(msg.body[3], "value", None)
                if isinstance(child, list | tuple) and len(child) == 2:
                    self.active_descendant[(msg.sender or "", msg.path or "")] = str(child[1])

    async def settle(
        self,
        bus_name: str,
        since: float,
        *,
        quiet: float = 0.15,
        timeout: float = 0.8,
        busy: float = 4.0,
        focus: Mapping[str, str] | None = None,
        flush: Callable[[], Awaitable[float | None]] | None = None,
    ) -> bool:
        """Wait until ``bus_name`` sent an event after ``since`` and then went quiet.

        An app still building part of its tree (LibreOffice's Format Cells streams a thousand
        events for a second before its window appears) is waited for up to ``busy`` seconds,
        and after a burst (a tree grown by BURST objects; for a web engine, BURST events) quiet
        means BURST_QUIET seconds without an event (a loaded machine leaves gaps in the
        stream). Returns False if no event came within ``timeout`` (the action may have had
        no effect the app reports, or it is slow). An effect due later (``effect_due``: a GTK
        button clicked by its action) is waited for: the quiet counts only from then.

        A web engine's quiet follows its batches (WEB_BATCH_S): one batching period after the
        action's own reaction (the focus moving, ``focus``: each app's focused element's path,
        as it moves, and the echo of input at it; else its first event), even when an effect
        showed at once, and a short one after any later event; then ``flush`` asks it to send
        what it still holds (FLUSH_QUIET), and what that brings is settled in turn.

        A web settle that starts while another settle of the app is under way for an earlier
        ``since`` leaves the late effects to that one (the batch wait and the flush): it ends at
        the quiet after the app's events since that one's ``since`` (its action's own batch is
        in), or when that one ends. Its caller reads meanwhile and checks what came after.

        Not shortened by a round trip to the app (its answer does not prove it idle): a GTK
        file chooser in LibreOffice enabled its Save button after the app had answered one
        sent 30 ms after a fill's events, and the Enter that followed pressed nothing.
        """
        under_way = self._settling.setdefault(bus_name, [])
        under_way.append(since)
        self._wake()  # a settle that defers to an earlier one looks again
        try:
            return await self._settle(bus_name, since, quiet, timeout, busy, focus, flush)
        finally:
            under_way.remove(since)
            self._wake()  # one deferring to this one ends now

    async def _settle(
        self,
        bus_name: str,
        since: float,
        quiet: float,
        timeout: float,
        busy: float,
        focus: Mapping[str, str] | None,
        flush: Callable[[], Awaitable[float | None]] | None,
    ) -> bool:
        try:
            kit = (await self.toolkit(bus_name)).casefold()
        except AccessibilityUnavailable:
            kit = ""
        web = kit in REMOTE_TREES
        local = bool(kit) and not web
        # when the engine was last asked to send what it holds back, and the quiet after it
        flushed, flush_quiet = self._flushed.get(bus_name, (0.0, FLUSH_QUIET))
        lead: float | None = None  # the since of an earlier settle under way, deferred to
        while True:
            now = time.monotonic()
            last = self.last_event.get(bus_name, 0.0)
            if web:  # another settle under way for an earlier since sees to the late effects
                earlier = [s for s in self._settling.get(bus_name, ()) if s < since]
                if earlier:
                    lead = min(earlier)
                elif lead is not None:  # it has ended: the app is settled as far as it saw
                    return last > lead
            if lead is not None:  # its action's own batch in: the quiet after an effect
                burst = sum(1 for t in self._recent.get(bus_name) or () if t > lead) >= BURST
                quiet_until = last + (BURST_QUIET if burst else WEB_EFFECT_QUIET)
                if last > lead and now >= quiet_until:
                    return True
                # woken by an event, by that settle's end, or when quiet long enough
                await self._sleep(max(0.0, quiet_until - now) + 0.001 if last > lead else None)
                continue
            wanted = quiet
            late_until = 0.0  # in a web engine: until when a late effect is waited for
            if web:  # the page's next batch after the action's own reaction, at least
                focused = focus.get(bus_name) if focus is not None else None
                effects, reacted = 0, 0.0
                for t, path, about in self._seen.get(bus_name) or ():
                    if t <= since:
                        continue
                    if _incidental(path, about, focused):
                        reacted = t  # the action's echo: its last key's, say
                    else:
                        effects += 1
                        reacted = reacted or t  # none yet: its first effect
                burst = effects >= BURST
                wanted = WEB_EFFECT_QUIET
                late_until = reacted + WEB_BATCH_S
            elif local:  # a tree that grows: a window being built (typing churns, no growth)
                burst = sum(d for t, d in self._growth.get(bus_name) or () if t > since) >= BURST
            else:
                burst = sum(1 for t in self._recent.get(bus_name) or () if t > since) >= BURST
            quiet_until = max(last + (BURST_QUIET if burst else wanted), late_until)
            due = self.effect_due.get(bus_name, 0.0)
            if due > since:  # the effect's own events come after ``due``: a quiet past them
                quiet_until = max(quiet_until, due + quiet)
            if web and flush is not None and last > since and now >= quiet_until:
                # quiet since the last event: what does it hold back? Asked once a settle (a
                # page whose clock ticks has something to send every time it is asked)
                if flushed <= last and flushed <= since:
                    flushed = time.monotonic()
                    answers_in = await flush()
                    # its answer is a renderer's round trip away: as long as its hit-tests'
                    # answers take here (``answers_in``), when they are known to take less
                    # than FLUSH_QUIET; longer on a loaded machine
                    least = min(FLUSH_QUIET, answers_in or FLUSH_QUIET)
                    flush_quiet = max(least, 3 * (time.monotonic() - flushed))
                    self._flushed[bus_name] = (flushed, flush_quiet)  # a read's settle after
                    continue
                quiet_until = max(quiet_until, flushed + flush_quiet)
            if last > since and now >= quiet_until:
                return True
            give_up = since + (busy if last > since else timeout)
            if now >= give_up:
                return last > since
            # woken by the next event (the first one moves the end closer; a burst's count
            # changes the quiet wanted) or at the moment the app has been quiet long enough:
            # no polling interval added to every action
            wake = min(quiet_until, give_up) if last > since else give_up
            await self._sleep(max(0.0, wake - now) + 0.001)

    async def next_event(self, seen: int, timeout: float) -> int:
        """Return once more than ``seen`` AT-SPI events (of any app) have come, or after
        ``timeout`` seconds; the count then."""
        end = time.monotonic() + timeout
        while self.events_seen <= seen:
            left = end - time.monotonic()
            if left <= 0:
                break
            await self._sleep(left)
        return self.events_seen

    def _wake(self) -> None:
        """Wake every wait (_sleep) under way."""
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def _sleep(self, timeout: float | None) -> None:
        """Until the next event (or a settle's start or end), at most ``timeout`` seconds."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, timeout)
        finally:
            self._waiters.discard(waiter)

    async def app_buses(self) -> list[str]:
        """Bus names of the applications registered on the a11y bus."""
        try:
            body = await self.call(REGISTRY_BUS, ROOT_PATH, "Accessible", "GetChildren")
        except AtspiCallError as exc:
            raise AccessibilityUnavailable(
                f"the AT-SPI registry does not answer ({exc.error_name})"
            ) from exc
        return [str(name) for name, _path in body[0] if name]

    async def pid_of(self, bus_name: str) -> int | None:
        if bus_name in self._pids:
            return self._pids[bus_name]
        try:
            body = await self.call(
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "GetConnectionUnixProcessID",
                "s",
                [bus_name],
            )
        except (AtspiCallError, AtspiTimeout):
            return None
        pid = int(body[0])
        self._pids[bus_name] = pid
        return pid

    async def whole_text(self, bus_name: str, path: str) -> str:
        """All of an element's text (``Text.GetText(0, -1)``). GTK 4.8 answers an entry's
        ``GetText(0, -1)`` with "" whatever it holds (measured on X11 and on sway: a GtkEntry
        holding "hello"); an empty answer is checked against ``CharacterCount`` and asked again
        with the real end. Raises what the calls raise."""
        body = await self.call(bus_name, path, "Text", "GetText", "ii", [0, -1])
        text = str(body[0])
        if text:
            return text
        try:
            count = int(await self.get_property(bus_name, path, "Text", "CharacterCount"))
        except AtspiCallError:
            return text
        if count <= 0:
            return text
        return str((await self.call(bus_name, path, "Text", "GetText", "ii", [0, count]))[0])

    async def toolkit(self, bus_name: str) -> str:
        """The app's toolkit name ("GTK", "Qt", "Chromium", "LibreOffice"…), cached."""
        if bus_name not in self._toolkits:
            # one call per app even when many readers ask at once
            self._toolkits[bus_name] = asyncio.ensure_future(self._ask_toolkit(bus_name))
        return await self._toolkits[bus_name]

    async def _ask_toolkit(self, bus_name: str) -> str:
        try:
            name = await self.get_property(bus_name, ROOT_PATH, "Application", "ToolkitName")
        except AtspiCallError:
            return ""  # the app does not say: that answer holds
        except AtspiTimeout:
            # a busy app: ask again next time (a Qt app taken for "not Qt" would be sent
            # GetAll, which crashes Qt 5)
            self._toolkits.pop(bus_name, None)
            return ""
        except BaseException:  # a lost connection: nothing to remember
            self._toolkits.pop(bus_name, None)
            raise
        return str(name)

    async def cache_is_safe(self, bus_name: str) -> bool:
        """Whether the app's Cache.GetItems can be asked without risk (not LibreOffice: its
        atk-bridge cache keeps freed objects, and GetItems takes a reference on each). An app
        too busy to say its name is not asked either."""
        if bus_name not in self._names:
            self._names[bus_name] = asyncio.ensure_future(self._ask_name(bus_name))
        name = await self._names[bus_name]
        return name is not None and name.casefold() not in UNSAFE_CACHE_APPS

    async def _ask_name(self, bus_name: str) -> str | None:
        try:
            return str(await self.get_property(bus_name, ROOT_PATH, "Accessible", "Name"))
        except AtspiCallError:
            return ""  # no name: that answer holds
        except AtspiTimeout:
            self._names.pop(bus_name, None)  # busy: ask again next time
            return None
        except BaseException:  # a lost connection: nothing to remember
            self._names.pop(bus_name, None)
            raise

    def forget(self, bus_name: str) -> None:
        self._pids.pop(bus_name, None)
        self._toolkits.pop(bus_name, None)
        self._names.pop(bus_name, None)
