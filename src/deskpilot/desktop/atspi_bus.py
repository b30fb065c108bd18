"""The accessibility bus over plain D-Bus (dbus-fast): connect, call with timeouts, register.

Every call goes through :meth:`AtspiBus.request` (or :meth:`AtspiBus.call`, which awaits it),
which bounds calls in flight (the apps' main loops are the bottleneck; unbounded concurrency is
slower and trips dbus-fast's EAGAIN bug) and puts a timeout on each, so a hung or stopped app
costs at most the timeout, never a hung tool.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusError

from deskpilot.desktop.atspi_consts import REGISTRY_BUS, REGISTRY_PATH, ROOT_PATH
from deskpilot.errors import AccessibilityUnavailable, DesktopError

A11Y = "org.a11y.atspi."
#: How often the watchdog looks for calls past their timeout (seconds).
WATCH_S = 0.05
DBUS_PROPS = "org.freedesktop.DBus.Properties"

#: Errors meaning "this object or app is gone".
GONE_ERRORS = frozenset(
    {
        "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.Disconnected",
    }
)


class AtspiCallError(DesktopError):
    """An AT-SPI call returned a D-Bus error."""

    def __init__(self, member: str, error_name: str, message: str = "") -> None:
        super().__init__(f"{member}: {error_name} {message}".strip())
        self.member = member
        self.error_name = error_name

    @property
    def gone(self) -> bool:
        return self.error_name in GONE_ERRORS

    @property
    def unsupported(self) -> bool:
        return self.error_name in (
            "org.freedesktop.DBus.Error.UnknownMethod",
            "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownProperty",
            "org.freedesktop.DBus.Error.InvalidArgs",
        )


class AtspiTimeout(DesktopError):
    """An AT-SPI call got no reply in time (the app is busy, stopped or hung)."""


class _PatientSocket:
    """Socket wrapper: ``send`` returns 0 on EAGAIN instead of raising.

    dbus-fast (<= 5.2) treats ``BlockingIOError`` from ``sock.send`` as fatal and drops the
    connection when many calls are queued. Returning 0 makes its writer keep the buffer and wait
    for the socket to become writable, which is what it does for short writes.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def send(self, data: Any) -> int:
        try:
            return self._sock.send(data)
        except BlockingIOError:
            return 0

    def sendmsg(self, *args: Any) -> int:
        try:
            return self._sock.sendmsg(*args)
        except BlockingIOError:
            return 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def _patch_writer(bus: MessageBus) -> None:
    writer = getattr(bus, "_writer", None)
    if (
        writer is not None
        and hasattr(writer, "sock")
        and not isinstance(writer.sock, _PatientSocket)
    ):
        writer.sock = _PatientSocket(writer.sock)


async def _connect(address: str, what: str, timeout: float) -> MessageBus:
    try:
        bus = await asyncio.wait_for(MessageBus(bus_address=address).connect(), timeout)
    except (OSError, DBusError, TimeoutError, ValueError) as exc:
        raise AccessibilityUnavailable(f"cannot connect to the {what} at {address}: {exc}") from exc
    _patch_writer(bus)
    return bus


@dataclass(slots=True, eq=False)
class _Call:
    """One method call on its way: its message, its future, its deadline."""

    msg: Message
    future: asyncio.Future[list[Any]]
    timeout: float
    deadline: float = 0.0  # loop time, set when sent
    finished: bool = False


class AtspiBus:
    """A connection to the AT-SPI bus with bounded, timed calls."""

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
        self._pids: dict[str, int] = {}
        self._toolkits: dict[str, asyncio.Future[str]] = {}
        self._registered: set[str] = set()
        self._listening = False
        #: monotonic time of the last AT-SPI event from each app (bus name), once listening
        self.last_event: dict[str, float] = {}

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
            if not session_bus:
                raise AccessibilityUnavailable(
                    "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset): start a sandbox "
                    "with `deskpilot sandbox up` or run inside a desktop session"
                )
            session = await _connect(session_bus, "session bus", timeout)
            try:
                reply = await asyncio.wait_for(
                    session.call(
                        Message(
                            destination="org.a11y.Bus",
                            path="/org/a11y/bus",
                            interface="org.a11y.Bus",
                            member="GetAddress",
                        )
                    ),
                    timeout,
                )
            except TimeoutError as exc:
                raise AccessibilityUnavailable("org.a11y.Bus.GetAddress timed out") from exc
            finally:
                session.disconnect()
            if reply.message_type == MessageType.ERROR:
                raise AccessibilityUnavailable(
                    f"the accessibility bus is not available ({reply.error_name}): install "
                    "at-spi2-core and make sure at-spi-bus-launcher runs in this session"
                )
            a11y_address = str(reply.body[0])
        bus = await _connect(a11y_address, "accessibility bus", timeout)
        return cls(bus)

    async def close(self) -> None:
        self.bus.disconnect()

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
        if len(self._in_flight) < self._max_in_flight:
            self._send(call)
        else:
            self._queue.append(call)
        return call.future

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
        if self._watchdog is None:
            self._watchdog = loop.call_later(WATCH_S, self._watch, loop)
        try:
            # dbus-fast's callback form of call(): its public coroutine costs a task here
            self.bus._call(call.msg, functools.partial(self._on_reply, call))
        except Exception as exc:  # the connection is closed or the message is bad
            self._finish(call)
            if not call.future.done():
                call.future.set_exception(
                    AccessibilityUnavailable(f"accessibility bus connection lost: {exc}")
                )

    def _finish(self, call: _Call) -> bool:
        """Free the call's slot (once) and send the next queued calls."""
        if call.finished:
            return False
        call.finished = True
        self._in_flight.discard(call)
        if not self._pumping:  # a send that fails inside the loop below must not recurse
            self._pumping = True
            try:
                while self._queue and len(self._in_flight) < self._max_in_flight:
                    queued = self._queue.popleft()
                    if not queued.future.done():  # its caller gave up while it waited
                        self._send(queued)
            finally:
                self._pumping = False
        return True

    def _on_reply(self, call: _Call, reply: Message | None, err: Exception | None) -> None:
        if not self._finish(call) or call.future.done():
            return  # timed out (or its caller was cancelled) before the reply came
        msg = call.msg
        if err is not None or reply is None:
            call.future.set_exception(
                AccessibilityUnavailable(f"accessibility bus connection lost: {err}")
            )
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

    async def register_events(self, events: Sequence[str] = ("object:children-changed",)) -> None:
        """Tell the registry we listen; atk-bridge apps only export their Cache after this."""
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
                )
            except AtspiCallError as exc:
                if not exc.unsupported:
                    raise
                await self.call(
                    REGISTRY_BUS, REGISTRY_PATH, "Registry", "RegisterEvent", "s", [event]
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
            self.last_event[msg.sender or ""] = time.monotonic()

    async def settle(
        self, bus_name: str, since: float, *, quiet: float = 0.15, timeout: float = 0.8
    ) -> bool:
        """Wait until ``bus_name`` sent an event after ``since`` and then went quiet.

        Returns False if no event came within ``timeout`` (the action may have had no effect
        the app reports, or it is slow)."""
        deadline = since + timeout
        while True:
            now = time.monotonic()
            last = self.last_event.get(bus_name, 0.0)
            if last > since and now - last >= quiet:
                return True
            if now >= deadline:
                return last > since
            await asyncio.sleep(0.02)

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

    def forget(self, bus_name: str) -> None:
        self._pids.pop(bus_name, None)
        self._toolkits.pop(bus_name, None)
