"""Apps' own connections: calls to an app straight to it, not through the bus daemon.

An app on atk-bridge (GTK 3, LibreOffice, Chromium and Electron) listens on a socket of its
own and gives its address to whoever asks (``Application.GetApplicationBusAddress``): libatspi,
and so pyatspi and Orca, make their calls to an app there. Through the bus every call and reply
is read and written again by the daemon; straight to the app it is not, and the app's side
costs less too. Measured on Chromium's benchmark page (300 ``GetState`` calls in flight
together, a loaded 2-core machine): 26 ms through the bus (our process 10 ms of CPU, Chromium
17, the daemon 9), 9 ms straight (9, 7, 0); a single call's round trip 0.17 → 0.10 ms.

Events still come through the bus (an app sends its signals there), and so do calls to the
registry and the daemon, and calls to an app that has no socket of its own (GTK 4 and Qt answer
``UnknownMethod``), or whose socket cannot be reached (another mount namespace) or refuses us:
an app run as the sandbox's unprivileged user while deskpilot is root (every app on a Wayland
sandbox in CI) completes the handshake and hangs up at ``BEGIN``, libdbus admitting its own uid
only. For them nothing changes. A connection that closes (the app exited) is dropped, and its
calls fail as calls to an app that left do.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

from dbus_fast.aio import MessageBus

from deskpilot.desktop.atspi.connect import connect_bus
from deskpilot.desktop.atspi.consts import ROOT_PATH
from deskpilot.errors import DesktopError

#: How long connecting to an app's socket may take (the socket, the handshake, ``Hello``).
CONNECT_S = 2.0


class Caller(Protocol):
    """What asks the app for its socket's address (the bus's call queue)."""

    async def call(self, dest: str, path: str, iface: str, member: str) -> list[Any]: ...


class Peers:
    """Each app's own connection, once open (by bus name)."""

    def __init__(self) -> None:
        self._open: dict[str, MessageBus] = {}
        self._opening: dict[str, asyncio.Future[None]] = {}

    def route(self, dest: str) -> MessageBus | None:
        """The app's own connection, if it has one open."""
        conn = self._open.get(dest)
        if conn is not None and not conn.connected:
            self.drop(dest)
            return None
        return conn

    async def open(self, queue: Caller, dest: str, *, wait: float) -> None:
        """Connect to the app's own socket, once per app (a later call waits for the first);
        give up waiting after ``wait`` seconds (the connection is made all the same, for the
        calls after it). Every failure leaves the app's calls on the bus."""
        if dest in self._open:
            return
        if dest not in self._opening:
            self._opening[dest] = asyncio.ensure_future(self._connect(queue, dest))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._opening[dest]), wait)

    async def _connect(self, queue: Caller, dest: str) -> None:
        try:
            body = await queue.call(dest, ROOT_PATH, "Application", "GetApplicationBusAddress")
            address = str(body[0])
            if not address:
                return
            conn = await connect_bus(address, "app's own socket", CONNECT_S)
        except DesktopError:
            return  # no socket of its own, or not one we can reach: the bus it is
        if dest not in self._opening:  # forgotten meanwhile
            conn.disconnect()
            return
        self._open[dest] = conn
        closed = asyncio.ensure_future(conn.wait_for_disconnect())  # type: ignore[no-untyped-call]
        closed.add_done_callback(lambda _f: self._closed(dest, conn, closed))

    def _closed(self, dest: str, conn: MessageBus, closed: asyncio.Future[None]) -> None:
        """The app closed its connection (it exited): forget it (and its error, which is the
        app's going, not ours)."""
        if not closed.cancelled():
            closed.exception()
        if self._open.get(dest) is conn:
            self.drop(dest)

    def drop(self, dest: str) -> None:
        """Forget the app's connection (closed, or the app left): its calls go by the bus,
        and the next read may connect again."""
        conn = self._open.pop(dest, None)
        self._opening.pop(dest, None)
        if conn is not None and conn.connected:
            conn.disconnect()

    def close(self) -> None:
        for dest in list(self._open):
            self.drop(dest)
        for opening in self._opening.values():
            opening.cancel()
        self._opening.clear()
