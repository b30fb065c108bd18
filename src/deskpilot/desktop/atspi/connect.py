"""Finding and opening the accessibility bus: ``org.a11y.Bus`` on the session bus gives its
address; the connection writes what one turn of the event loop sends at once, and is made
patient (dbus-fast drops it on EAGAIN otherwise).

Every failure here is an :class:`~deskpilot.errors.AccessibilityUnavailable` that says what to
do (start a sandbox, install at-spi2-core).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusError

from deskpilot.errors import AccessibilityUnavailable


class _PatientSocket:
    """Socket wrapper under dbus-fast's writer: what it sends in one turn of the event loop
    goes out in one write, and a full socket is waited for instead of dropping the connection.

    dbus-fast writes each message with a ``send`` of its own. A read's calls are made many at
    a time (and a reply frees a slot for the next call), so the other end woke once per
    message: with the app's own connection (:mod:`.peers`), Chromium's CPU for a cold read
    went from 50 to 90 ms and ours from 65 to 87. Here ``send`` takes the bytes, says they
    went, and one write at the end of the turn sends them all.

    dbus-fast (<= 5.2) treats ``BlockingIOError`` from ``sock.send`` as fatal and drops the
    connection when many calls are queued: a full socket keeps the rest for a later write
    (FULL_RETRY_S), and ``sendmsg`` (file descriptors) writes what is held first, or returns 0
    (its writer keeps the buffer and waits for the socket to become writable).
    """

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
        self._sock = sock
        self._loop = loop
        self._held = bytearray()
        self._due = False  # a write of what is held is scheduled

    def send(self, data: Any) -> int:
        self._held += data
        if not self._due:
            self._due = True
            self._loop.call_soon(self._write)
        return len(data)

    def _write(self) -> None:
        self._due = False
        if self._flush():
            return
        self._due = True  # the socket is full: again shortly (its reader is behind)
        self._loop.call_later(FULL_RETRY_S, self._write)

    def _flush(self) -> bool:
        """Write what is held; whether all of it went."""
        while self._held:
            try:
                sent = self._sock.send(self._held)
            except BlockingIOError:
                return False
            except OSError:
                # the connection is gone: its reader sees it and fails the calls
                self._held.clear()
                return True
            del self._held[:sent]
        return True

    def sendmsg(self, *args: Any) -> int:
        if not self._flush():
            return 0
        try:
            return self._sock.sendmsg(*args)
        except BlockingIOError:
            return 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


#: How soon a write to a full socket is tried again (seconds).
FULL_RETRY_S = 0.001


def _patch_writer(bus: MessageBus) -> None:
    writer = getattr(bus, "_writer", None)
    if (
        writer is not None
        and hasattr(writer, "sock")
        and not isinstance(writer.sock, _PatientSocket)
    ):
        writer.sock = _PatientSocket(writer.sock, asyncio.get_running_loop())


async def connect_bus(address: str, what: str, timeout: float) -> MessageBus:
    try:
        bus = await asyncio.wait_for(MessageBus(bus_address=address).connect(), timeout)
    except (OSError, EOFError, DBusError, TimeoutError, ValueError) as exc:
        # EOFError: the other end closed during the handshake (it refused our credentials)
        reason = str(exc) or type(exc).__name__
        raise AccessibilityUnavailable(
            f"cannot connect to the {what} at {address}: {reason}"
        ) from exc
    _patch_writer(bus)
    return bus


async def find_a11y_address(session_bus: str | None, timeout: float) -> str:
    """The accessibility bus's address, asked of ``org.a11y.Bus`` on the session bus."""
    if not session_bus:
        raise AccessibilityUnavailable(
            "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset): start a sandbox "
            "with `deskpilot sandbox up` or run inside a desktop session"
        )
    session = await connect_bus(session_bus, "session bus", timeout)
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
    return str(reply.body[0])
