"""A small Wayland wire-protocol client: enough to bind globals and speak wlroots protocols.

The Wayland protocol is messages on a unix socket: a header of the object id (uint32) and
``size << 16 | opcode`` (uint32), then the arguments, each padded to 4 bytes — ``int``/``uint``
(32-bit), ``fixed`` (24.8), ``string`` (length with the NUL, bytes, NUL, padding), ``object``
and ``new_id`` (ids), ``array`` (length, bytes, padding); file descriptors travel beside the
bytes (SCM_RIGHTS). Object 1 is ``wl_display``: ``sync`` (0) and ``get_registry`` (1) requests;
``error`` (0) and ``delete_id`` (1) events. The registry announces globals (``global``, 0) and
binds them (``bind``, 0: name, interface, version, new id).

This client is synchronous on a non-blocking socket with ``poll`` for waits: every exchange
deskpilot makes is a few messages on a local socket (a roundtrip costs well under a
millisecond), and a frame capture waits at most for the compositor's next render. It reads no
environment: the caller passes the socket path.
"""

from __future__ import annotations

import array
import os
import select
import socket
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deskpilot.errors import DesktopError

DISPLAY_ID = 1
#: wl_display requests / events
SYNC, GET_REGISTRY = 0, 1
ERROR, DELETE_ID = 0, 1
#: wl_registry
BIND = 0
GLOBAL, GLOBAL_REMOVE = 0, 1


class WaylandError(DesktopError):
    """The compositor could not be reached, refused a request or closed the connection."""


Handler = Callable[[int, bytes, list[int]], None]


@dataclass
class Global:
    name: int
    interface: str
    version: int


def fixed(value: float) -> int:
    """A ``fixed`` (signed 24.8) argument."""
    return round(value * 256)


class Args:
    """Builds a message's argument bytes."""

    def __init__(self) -> None:
        self.data = bytearray()

    def uint(self, value: int) -> Args:
        self.data += struct.pack("=I", value & 0xFFFFFFFF)
        return self

    def int(self, value: int) -> Args:
        self.data += struct.pack("=i", value)
        return self

    def string(self, text: str) -> Args:
        raw = text.encode() + b"\0"
        self.uint(len(raw))
        self.data += raw + b"\0" * (-len(raw) % 4)
        return self


@dataclass
class Reader:
    """Reads an event's arguments in order."""

    data: bytes
    pos: int = 0
    fds: list[int] = field(default_factory=list)

    def uint(self) -> int:
        (value,) = struct.unpack_from("=I", self.data, self.pos)
        self.pos += 4
        return int(value)

    def int(self) -> int:
        (value,) = struct.unpack_from("=i", self.data, self.pos)
        self.pos += 4
        return int(value)

    def string(self) -> str:
        size = self.uint()
        raw = self.data[self.pos : self.pos + size]
        self.pos += size + (-size % 4)
        return raw.rstrip(b"\0").decode(errors="replace")

    def array(self) -> bytes:
        size = self.uint()
        raw = self.data[self.pos : self.pos + size]
        self.pos += size + (-size % 4)
        return bytes(raw)


class Connection:
    """One client connection to a Wayland compositor."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self._next_id = 2
        self._handlers: dict[int, Handler] = {}
        self._buffer = b""
        self._fds: list[int] = []
        self.globals: dict[int, Global] = {}
        self.error: str | None = None
        self._registry = 0

    @classmethod
    def connect(cls, path: str, *, timeout: float = 5.0) -> Connection:
        """Connect to the socket at ``path`` and read the compositor's globals."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError as exc:
            sock.close()
            raise WaylandError(f"cannot reach the Wayland compositor at {path}: {exc}") from exc
        conn = cls(sock)
        conn._registry = conn.new_id(conn._on_registry)
        conn.send(DISPLAY_ID, GET_REGISTRY, Args().uint(conn._registry))
        conn.roundtrip(timeout)
        return conn

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
        self.sock.close()

    # -- objects ---------------------------------------------------------------------------

    def new_id(self, handler: Handler | None = None) -> int:
        oid = self._next_id
        self._next_id += 1
        if handler is not None:
            self._handlers[oid] = handler
        return oid

    def find(self, interface: str) -> Global | None:
        for glob in self.globals.values():
            if glob.interface == interface:
                return glob
        return None

    def bind(self, interface: str, version: int, handler: Handler | None = None) -> int:
        """Bind the first global of ``interface`` at ``min(version, advertised)``."""
        glob = self.find(interface)
        if glob is None:
            raise WaylandError(f"the compositor does not offer {interface}")
        oid = self.new_id(handler)
        args = Args().uint(glob.name).string(interface).uint(min(version, glob.version))
        self.send(self._registry, BIND, args.uint(oid))
        return oid

    # -- messages --------------------------------------------------------------------------

    def send(
        self, oid: int, opcode: int, args: Args | None = None, fds: Sequence[int] = ()
    ) -> None:
        body = bytes(args.data) if args is not None else b""
        msg = struct.pack("=II", oid, ((8 + len(body)) << 16) | opcode) + body
        self._check()
        try:
            sent = socket.send_fds(self.sock, [msg], list(fds)) if fds else self.sock.send(msg)
            if sent != len(msg):  # a full socket buffer: finish the message blocking
                self.sock.setblocking(True)
                try:
                    self.sock.sendall(msg[sent:])
                finally:
                    self.sock.setblocking(False)
        except BlockingIOError:
            self.sock.setblocking(True)
            try:
                if fds:
                    socket.send_fds(self.sock, [msg], list(fds))
                else:
                    self.sock.sendall(msg)
            finally:
                self.sock.setblocking(False)
        except OSError as exc:
            raise WaylandError(f"the Wayland connection broke: {exc}") from exc

    def roundtrip(self, timeout: float = 5.0) -> None:
        """Wait until the compositor has handled every request sent so far."""
        done: list[bool] = []
        callback = self.new_id(lambda _op, _data, _fds: done.append(True))
        self.send(DISPLAY_ID, SYNC, Args().uint(callback))
        self.dispatch_until(lambda: bool(done), timeout, "the compositor to answer")
        self._handlers.pop(callback, None)

    def dispatch_until(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        """Read and handle events until ``condition()`` holds."""
        deadline = time.monotonic() + timeout
        while not condition():
            self._check()
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaylandError(f"timed out after {timeout:.1f}s waiting for {what}")
            ready, _, _ = select.select([self.sock], [], [], left)
            if ready:
                self._read()
        self._check()

    def read_events(self) -> None:
        """Handle the events waiting on the socket (raises WaylandError once it is closed)."""
        self._check()
        self._read()

    def _check(self) -> None:
        if self.error is not None:
            raise WaylandError(self.error)

    def _read(self) -> None:
        fds = array.array("i")
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(
                65536, socket.CMSG_SPACE(28 * fds.itemsize)
            )
        except BlockingIOError:
            return
        except OSError as exc:
            raise WaylandError(f"the Wayland connection broke: {exc}") from exc
        if not data:
            self.error = self.error or "the compositor closed the connection"
            raise WaylandError(self.error)
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        self._fds.extend(fds)
        self._buffer += data
        while len(self._buffer) >= 8:
            oid, word = struct.unpack_from("=II", self._buffer)
            size, opcode = word >> 16, word & 0xFFFF
            if size < 8 or len(self._buffer) < size:
                break
            body, self._buffer = self._buffer[8:size], self._buffer[size:]
            self._dispatch(oid, opcode, body)

    def _dispatch(self, oid: int, opcode: int, body: bytes) -> None:
        if oid == DISPLAY_ID:
            if opcode == ERROR:
                r = Reader(body)
                obj, code, message = r.uint(), r.uint(), r.string()
                self.error = (
                    f"the compositor reported a protocol error on object {obj} "
                    f"(code {code}): {message}"
                )
            elif opcode == DELETE_ID:
                self._handlers.pop(Reader(body).uint(), None)
            return
        handler = self._handlers.get(oid)
        if handler is not None:
            handler(opcode, body, self._fds)

    def _on_registry(self, opcode: int, body: bytes, _fds: list[int]) -> None:
        r = Reader(body)
        if opcode == GLOBAL:
            name, interface, version = r.uint(), r.string(), r.uint()
            self.globals[name] = Global(name, interface, version)
        elif opcode == GLOBAL_REMOVE:
            self.globals.pop(r.uint(), None)
