"""AT-SPI method calls in flight: bounded, each with a timeout, resolved by reply callbacks.

Every call goes through :meth:`CallQueue.request` (or :meth:`CallQueue.call`, which awaits it),
which bounds calls in flight (the apps' main loops are the bottleneck; unbounded concurrency is
slower and trips dbus-fast's EAGAIN bug) and puts a timeout on each, so a hung or stopped app
costs at most the timeout, never a hung tool. Once a call to an app has timed out, that app is
*stalled* until it answers again: while one call to it is out, further calls fail at once
instead of each waiting for its own timeout (a read of a thousand calls to a hung app costs one
timeout, not a thousand). A call to an app that has its own connection open goes there, not
through the bus (:mod:`.peers`). A call's outcome is its reply's body or one of the errors
defined here.
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from deskpilot.desktop.atspi.peers import Peers
from deskpilot.errors import AccessibilityUnavailable, ElementCallFailed, NotAnswering

A11Y = "org.a11y.atspi."
#: How often the watchdog looks for calls past their timeout (seconds).
WATCH_S = 0.05
DBUS_PROPS = "org.freedesktop.DBus.Properties"
#: What a call on a closed accessibility bus says.
BUS_GONE = (
    "the accessibility bus went away (its daemon stopped or restarted): reading and element "
    "actions cannot work on this connection. Tell the user; a new deskpilot session connects "
    "to the bus again"
)

#: What a call says when the app's own connection closed under it (as the bus says it when
#: the app left mid-call).
PEER_CLOSED = "org.freedesktop.DBus.Error.NoReply"

#: Errors meaning "the app is gone" (its bus name has no owner, or it left mid-call).
APP_GONE_ERRORS = frozenset(
    {
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.NoReply",
    }
)
#: Errors meaning "this object or app is gone".
GONE_ERRORS = frozenset(
    {
        "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.Disconnected",
        # the bus's answer for a call whose recipient left without replying (an app killed
        # mid-call); its own timeout (25 s) is far beyond ours, so it only comes for that
        "org.freedesktop.DBus.Error.NoReply",
    }
)


class AtspiCallError(ElementCallFailed):
    """An AT-SPI call returned a D-Bus error."""

    def __init__(self, member: str, error_name: str, message: str = "") -> None:
        super().__init__(f"{member}: {error_name} {message}".strip())
        self.member = member
        self.error_name = error_name

    @property
    def gone(self) -> bool:
        return self.error_name in GONE_ERRORS

    @property
    def app_gone(self) -> bool:
        """The whole app left the bus (not just one of its objects)."""
        return self.error_name in APP_GONE_ERRORS

    @property
    def unsupported(self) -> bool:
        return self.error_name in (
            "org.freedesktop.DBus.Error.UnknownMethod",
            "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownProperty",
            "org.freedesktop.DBus.Error.InvalidArgs",
        )


class AtspiTimeout(NotAnswering):
    """An AT-SPI call got no reply in time (the app is busy, stopped or hung)."""


@dataclass(slots=True, eq=False)
class _Call:
    """One method call on its way: its message, its future, its deadline."""

    msg: Message
    future: asyncio.Future[list[Any]]
    timeout: float
    deadline: float = 0.0  # loop time, set when sent
    finished: bool = False
    direct: bool = False  # sent on the app's own connection (:mod:`.peers`)


class CallQueue:
    """Method calls over one D-Bus connection, at most ``max_in_flight`` at a time."""

    def __init__(
        self, bus: MessageBus, *, call_timeout: float = 2.0, max_in_flight: int = 32
    ) -> None:
        self.bus = bus
        self.call_timeout = call_timeout
        self._max_in_flight = max_in_flight
        self._in_flight: set[_Call] = set()
        self._queue: deque[_Call] = deque()
        self._watchdog: asyncio.TimerHandle | None = None
        self._pumping = False
        self._stalled: set[str] = set()  # apps whose last call timed out, with no reply since
        self._out_to: Counter[str] = Counter()  # calls in flight per destination
        #: apps' own connections (calls to them go there once open)
        self.peers = Peers()
        #: calls sent so far (readers bound their reads by it)
        self.sent = 0

    def request(
        self,
        dest: str,
        path: str,
        iface: str,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
        *,
        timeout: float | None = None,
    ) -> asyncio.Future[list[Any]]:
        """Start one method call; the future gives the reply's body or raises AtspiCallError,
        AtspiTimeout or AccessibilityUnavailable.

        No task, timeout context or timer per call (a read makes a thousand): a reply
        callback resolves the future, a watchdog ticking while calls are in flight expires
        them (to within WATCH_S), and calls beyond ``max_in_flight`` wait in a queue. The
        timeout runs from when the call is sent.
        """
        if not iface.startswith("org."):
            iface = A11Y + iface
        msg = Message(
            destination=dest,
            path=path,
            interface=iface,
            member=member,
            signature=signature,
            body=list(body),
        )
        call = _Call(msg, asyncio.get_running_loop().create_future(), timeout or self.call_timeout)
        if self._refused(call):
            pass
        elif len(self._in_flight) < self._max_in_flight:
            self._send(call)
        else:
            self._queue.append(call)
        return call.future

    def stalled(self, dest: str) -> bool:
        """Whether ``dest``'s last call timed out and it has not answered since."""
        return dest in self._stalled

    def _refused(self, call: _Call) -> bool:
        """Fail a call to a stalled app at once while another call to it is out (that one
        tells whether it answers again)."""
        dest = call.msg.destination or ""
        if dest not in self._stalled or not self._out_to[dest]:
            return False
        call.finished = True
        call.future.set_exception(
            AtspiTimeout(f"{call.msg.member} on {dest} not sent: the app is not answering")
        )
        return True

    async def call(
        self,
        dest: str,
        path: str,
        iface: str,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
        *,
        timeout: float | None = None,
    ) -> list[Any]:
        """One method call; raises AtspiCallError, AtspiTimeout or AccessibilityUnavailable."""
        return await self.request(dest, path, iface, member, signature, body, timeout=timeout)

    def _send(self, call: _Call) -> None:
        loop = call.future.get_loop()
        call.deadline = loop.time() + call.timeout
        self._in_flight.add(call)
        self._out_to[call.msg.destination or ""] += 1
        self.sent += 1
        if self._watchdog is None:
            self._watchdog = loop.call_later(WATCH_S, self._watch, loop)
        if not getattr(self.bus, "connected", True):  # (unit tests' stand-in buses have none)
            # the bus went away (its daemon stopped): writing to the closed socket would only
            # leave dbus-fast's write future failing unseen ("never retrieved" on stderr)
            self._finish(call)
            call.future.set_exception(AccessibilityUnavailable(BUS_GONE))
            return
        dest = call.msg.destination or ""
        peer = self.peers.route(dest)
        if peer is not None:
            try:
                peer._call(call.msg, functools.partial(self._on_reply, call))
                call.direct = True
                return
            except Exception:  # the app's connection closed: the bus it is
                self.peers.drop(dest)
        try:
            # dbus-fast's callback form of call(): its public coroutine costs a task here
            self.bus._call(call.msg, functools.partial(self._on_reply, call))
        except Exception as exc:  # the connection is closed or the message is bad
            self._finish(call)
            if not call.future.done():
                call.future.set_exception(AccessibilityUnavailable(f"{BUS_GONE} ({exc})"))

    def _finish(self, call: _Call) -> bool:
        """Free the call's slot (once) and send the next queued calls."""
        if call.finished:
            return False
        call.finished = True
        if call in self._in_flight:
            self._in_flight.discard(call)
            dest = call.msg.destination or ""
            self._out_to[dest] -= 1
            if self._out_to[dest] <= 0:
                del self._out_to[dest]
        if not self._pumping:  # a send that fails inside the loop below must not recurse
            self._pumping = True
            try:
                while self._queue and len(self._in_flight) < self._max_in_flight:
                    queued = self._queue.popleft()
                    # its caller may have given up while it waited
                    if not queued.future.done() and not self._refused(queued):
                        self._send(queued)
            finally:
                self._pumping = False
        return True

    def _on_reply(self, call: _Call, reply: Message | None, err: Exception | None) -> None:
        if reply is not None:  # even a late reply: the app answers again
            self._stalled.discard(call.msg.destination or "")
        if not self._finish(call) or call.future.done():
            return  # timed out (or its caller was cancelled) before the reply came
        msg = call.msg
        if (err is not None or reply is None) and call.direct:
            # the app's own connection closed under the call: it exited (or closed it)
            self.peers.drop(msg.destination or "")
            call.future.set_exception(
                AtspiCallError(msg.member or "", PEER_CLOSED, "the app's connection closed")
            )
        elif err is not None or reply is None:
            call.future.set_exception(AccessibilityUnavailable(f"{BUS_GONE} ({err})"))
        elif reply.message_type == MessageType.ERROR:
            text = str(reply.body[0]) if reply.body else ""
            call.future.set_exception(
                AtspiCallError(msg.member or "", reply.error_name or "unknown", text)
            )
        else:
            call.future.set_result(list(reply.body))

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Expire the calls past their deadline; tick again while any is in flight."""
        now = loop.time()
        for call in [c for c in self._in_flight if c.deadline <= now]:
            self._stalled.add(call.msg.destination or "")
            if self._finish(call) and not call.future.done():
                msg = call.msg
                call.future.set_exception(
                    AtspiTimeout(f"{msg.member} on {msg.destination} timed out")
                )
        self._watchdog = loop.call_later(WATCH_S, self._watch, loop) if self._in_flight else None

    async def get_property(
        self, dest: str, path: str, iface: str, name: str, *, timeout: float | None = None
    ) -> Any:
        body = await self.call(
            dest, path, DBUS_PROPS, "Get", "ss", [A11Y + iface, name], timeout=timeout
        )
        return body[0].value
