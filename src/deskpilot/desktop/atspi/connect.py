"""Finding and opening the accessibility bus: ``org.a11y.Bus`` on the session bus gives its
address; the connection is made patient (dbus-fast drops it on EAGAIN otherwise).

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


async def connect_bus(address: str, what: str, timeout: float) -> MessageBus:
    try:
        bus = await asyncio.wait_for(MessageBus(bus_address=address).connect(), timeout)
    except (OSError, DBusError, TimeoutError, ValueError) as exc:
        raise AccessibilityUnavailable(f"cannot connect to the {what} at {address}: {exc}") from exc
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
