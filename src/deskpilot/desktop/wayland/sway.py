"""sway's IPC: the i3-ipc JSON socket (``$SWAYSOCK``) — windows, focus, close, outputs.

Wire format (sway-ipc(7)): the magic ``i3-ipc``, then the payload length and the message type
as native-endian uint32, then a UTF-8 JSON payload; a reply has the same header. One
connection, one request at a time (replies come in order).

A window's screen geometry is the compositor's, never the client's: a container's ``rect`` is
its place on the output (absolute), ``window_rect`` the window's content inside it (relative);
``deco_rect`` the title bar. Measured on sway 1.7 (a tiled GTK window alone on a 1280x800
output): ``rect`` (0,0,1280,800), ``window_rect`` (2,0,1276,773), the title bar drawn at
y 0–25 — ``window_rect.y`` leaves the title out, so the content's top is what remains above
it once the bottom border (as wide as the side ones) is taken off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from deskpilot.errors import DesktopError

MAGIC = b"i3-ipc"
HEADER = struct.Struct("=6sII")
RUN_COMMAND, GET_WORKSPACES, GET_OUTPUTS, GET_TREE, GET_VERSION, GET_SEATS = 0, 1, 3, 4, 7, 101


class SwayError(DesktopError):
    """sway's IPC refused a command or could not be reached."""


@dataclass(frozen=True)
class SwayRect:
    x: int
    y: int
    width: int
    height: int

    @classmethod
    def of(cls, data: Any) -> SwayRect:
        if not isinstance(data, dict):
            return cls(0, 0, 0, 0)
        return cls(
            int(data.get("x", 0)),
            int(data.get("y", 0)),
            int(data.get("width", 0)),
            int(data.get("height", 0)),
        )


@dataclass(frozen=True)
class SwayWindow:
    """A view (a toplevel window) in sway's tree."""

    con_id: int
    pid: int
    app_id: str  # xdg app_id, or the X11 class for an Xwayland window
    title: str
    rect: SwayRect  # the content, in output (screen) coordinates
    focused: bool
    visible: bool
    shell: str  # "xdg_shell" or "xwayland"
    x11_id: int | None = None  # the X window of an Xwayland view
    floating: bool = False
    fullscreen: bool = False
    workspace: str = ""


class SwayIpc:
    """A connection to sway's IPC socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, path: str, *, timeout: float = 5.0) -> SwayIpc:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), timeout)
        except (TimeoutError, OSError) as exc:
            raise SwayError(f"cannot reach sway's IPC socket {path}: {exc}") from exc
        return cls(reader, writer)

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    async def request(self, kind: int, payload: str = "", *, timeout: float = 5.0) -> Any:
        """Send one message; return its decoded JSON reply."""
        body = payload.encode()
        async with self._lock:
            try:
                self._writer.write(HEADER.pack(MAGIC, len(body), kind) + body)
                await self._writer.drain()
                head = await asyncio.wait_for(self._reader.readexactly(HEADER.size), timeout)
                magic, size, _reply = HEADER.unpack(head)
                if magic != MAGIC:
                    raise SwayError("sway's IPC answered with a bad header")
                data = await asyncio.wait_for(self._reader.readexactly(size), timeout)
            except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
                raise SwayError(f"sway's IPC connection failed: {exc!r}") from exc
        return json.loads(data)

    async def command(self, cmd: str) -> None:
        """Run a sway command; raise SwayError with sway's message if it failed."""
        results = await self.request(RUN_COMMAND, cmd)
        for result in results if isinstance(results, list) else [results]:
            if not result.get("success", False):
                raise SwayError(f"sway refused {cmd!r}: {result.get('error', 'no reason given')}")

    async def tree(self) -> dict[str, Any]:
        tree = await self.request(GET_TREE)
        return tree if isinstance(tree, dict) else {}

    async def outputs(self) -> list[dict[str, Any]]:
        outs = await self.request(GET_OUTPUTS)
        return [o for o in outs if isinstance(o, dict)] if isinstance(outs, list) else []

    async def version(self) -> str:
        data = await self.request(GET_VERSION)
        return str(data.get("human_readable", "")) if isinstance(data, dict) else ""

    async def windows(self) -> list[SwayWindow]:
        """Every view in the tree (including the scratchpad), in tree order."""
        return list(views(await self.tree()))

    async def focus(self, con_id: int) -> None:
        await self.command(f"[con_id={int(con_id)}] focus")

    async def close_window(self, con_id: int) -> None:
        await self.command(f"[con_id={int(con_id)}] kill")


def request_once(path: str, kind: int, payload: str = "", *, timeout: float = 5.0) -> Any:
    """One request on a fresh blocking connection (for synchronous callers: sandbox start-up)."""
    body = payload.encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(path)
            sock.sendall(HEADER.pack(MAGIC, len(body), kind) + body)
            head = _recv_exactly(sock, HEADER.size)
            _magic, size, _reply = HEADER.unpack(head)
            return json.loads(_recv_exactly(sock, size))
        except OSError as exc:
            raise SwayError(f"sway's IPC at {path} failed: {exc}") from exc


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise SwayError("sway closed its IPC connection")
        data += chunk
    return data


def views(tree: dict[str, Any]) -> Iterator[SwayWindow]:
    """The views of a ``get_tree`` reply, with their workspace."""

    def walk(node: dict[str, Any], workspace: str, floating: bool) -> Iterator[SwayWindow]:
        if node.get("type") == "workspace":
            workspace = str(node.get("name", ""))
        if node.get("pid") and node.get("type") in ("con", "floating_con"):
            yield _view(node, workspace, floating)
        for child in node.get("nodes", []):
            yield from walk(child, workspace, floating)
        for child in node.get("floating_nodes", []):
            yield from walk(child, workspace, True)

    yield from walk(tree, "", False)


def _view(node: dict[str, Any], workspace: str, floating: bool) -> SwayWindow:
    outer = SwayRect.of(node.get("rect"))
    inner = SwayRect.of(node.get("window_rect"))
    if inner.width and inner.height:
        # sway 1.7 reports window_rect.y = 0 under a title bar; the bottom border equals the
        # side one (window_rect.x), so what is left above the content is the title and border
        top = max(inner.y, outer.height - inner.height - inner.x)
        content = SwayRect(outer.x + inner.x, outer.y + top, inner.width, inner.height)
    else:
        content = outer
    props = node.get("window_properties") or {}
    app_id = node.get("app_id") or props.get("class") or ""
    x11 = node.get("window")
    return SwayWindow(
        con_id=int(node["id"]),
        pid=int(node.get("pid") or 0),
        app_id=str(app_id),
        title=str(node.get("name") or ""),
        rect=content,
        focused=bool(node.get("focused")),
        visible=bool(node.get("visible", True)),
        shell=str(node.get("shell", "")),
        x11_id=int(x11) if isinstance(x11, int) else None,
        floating=floating or node.get("type") == "floating_con",
        fullscreen=bool(node.get("fullscreen_mode")),
        workspace=workspace,
    )
