"""Serving :class:`DeskpilotMCP` over stdio or streamable HTTP.

stdio: the SDK's ``stdio_server`` streams driven by ``serve_loop`` (the handshake-only loop:
see :mod:`deskpilot.mcp.server` on protocol eras). One process serves one client.

HTTP: the SDK's streamable-HTTP app (one SDK session, so one deskpilot client state, per
``Mcp-Session-Id``) behind :class:`BearerAuth`, served by uvicorn on a socket bound before the
server says it is ready. Every request must carry ``Authorization: Bearer TOKEN``; anything
else is answered 401 before it reaches the MCP app, so nothing runs. The address must be
loopback unless remote access was allowed explicitly. On loopback the SDK's DNS-rebinding
protection (Host and Origin checks) is on as well.
"""

from __future__ import annotations

import ipaddress
import json
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType

import anyio
import uvicorn
from mcp.server.runner import serve_dual_era_loop
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from deskpilot.errors import ConfigError
from deskpilot.mcp.server import DeskpilotMCP
from deskpilot.mcp.tokens import TokenFile

MCP_PATH = "/mcp"

# -- stdio -------------------------------------------------------------------------------------


async def serve_stdio(app: DeskpilotMCP) -> None:
    """Serve one client on stdin/stdout until it closes stdin (or SIGTERM/SIGHUP). A client
    that is gone (killed mid-call: writing to it breaks the pipe) ends the server like one
    that closed stdin, with no traceback in its log."""
    server = app.server
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_stop_on_signals, tg.cancel_scope)
            async with server.lifespan(server) as lifespan_state, stdio_server() as (read, write):
                await serve_dual_era_loop(
                    server,
                    read,
                    write,
                    lifespan_state=lifespan_state,
                    init_options=server.create_initialization_options(),
                )
            tg.cancel_scope.cancel()
    except* (BrokenPipeError, ConnectionResetError):
        print("deskpilot mcp: the client went away; stopping", file=sys.stderr)


async def _stop_on_signals(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
        async for _ in signals:
            scope.cancel()
            return


# -- HTTP: address -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Bind:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}{MCP_PATH}"


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_bind(value: str, default_host: str = "127.0.0.1") -> Bind:
    """``PORT``, ``:PORT``, ``HOST:PORT`` or ``[IPv6]:PORT`` (port 0: any free port)."""
    text = value.strip()
    host, port_text = default_host, text
    if text.startswith("["):
        inside, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ConfigError(f"{value!r} is not [IPv6]:PORT")
        host, port_text = inside, rest[1:]
    elif ":" in text:
        head, _, port_text = text.rpartition(":")
        host = head or default_host
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ConfigError(f"{value!r}: the port must be a number from 0 to 65535")
    return Bind(host, int(port_text))


def check_bind(bind: Bind, *, allow_remote: bool) -> None:
    if not bind.loopback and not allow_remote:
        raise ConfigError(
            f"refusing to listen on {bind.host}: only loopback addresses (127.0.0.1, ::1, "
            "localhost) are served unless you pass --allow-remote. Anyone who can reach the "
            "port and has the token can operate this desktop."
        )


def bind_socket(bind: Bind) -> socket.socket:
    """A listening TCP socket on ``bind`` (port 0 picks a free port)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            bind.host, bind.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise ConfigError(f"cannot resolve {bind.host!r}: {exc.strerror}") from exc
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {bind.host}:{bind.port}: {exc.strerror}") from exc
    return sock


# -- HTTP: token -------------------------------------------------------------------------------


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401.

    The token is the one in the token file now (see :mod:`deskpilot.mcp.tokens`). OAuth
    discovery (``/.well-known/...``) is answered 404 without a token: there is no
    authorization server, and a 401 there made OAuth-capable clients start a sign-in that
    could never work."""

    def __init__(self, app: ASGIApp, tokens: TokenFile) -> None:
        self.app = app
        self.tokens = tokens

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                scheme, _, credential = value.partition(b" ")
                return scheme.lower() == b"bearer" and self.tokens.accepts(credential.strip())
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # websockets: not served
            await send({"type": "websocket.close", "code": 1008})
            return
        if str(scope.get("path", "")).startswith("/.well-known/"):
            await _json(send, 404, {"error": "not_found", "error_description": NO_OAUTH})
            return
        if self._authorized(scope):
            await self.app(scope, receive, send)
            return
        await _json(
            send,
            401,
            {
                "error": "invalid_token",
                "error_description": "deskpilot mcp needs 'Authorization: Bearer <token>' with "
                f"the token kept in {self.tokens.path} (`deskpilot mcp token` prints it)",
            },
            [(b"www-authenticate", b'Bearer realm="deskpilot", error="invalid_token"')],
        )


NO_OAUTH = (
    "deskpilot mcp has no OAuth authorization server: send the static bearer token "
    "(`deskpilot mcp token` prints it) in an Authorization header"
)


async def _json(
    send: Send, status: int, payload: dict[str, str], headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# -- HTTP: serving -----------------------------------------------------------------------------


def http_app(app: DeskpilotMCP, bind: Bind, tokens: TokenFile) -> ASGIApp:
    security = None
    if bind.loopback:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{h}:*" for h in ("127.0.0.1", "localhost", "[::1]")]
            + ([f"{bind.host}:*"] if bind.host not in ("127.0.0.1", "localhost", "::1") else []),
            allowed_origins=[f"http://{h}:*" for h in ("127.0.0.1", "localhost", "[::1]")],
        )
    starlette = app.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=bind.host,
        transport_security=security,
    )
    return BearerAuth(starlette, tokens)


async def serve_http(
    app: DeskpilotMCP,
    sock: socket.socket,
    bind: Bind,
    tokens: TokenFile,
    *,
    on_ready: Callable[[str], None] = lambda url: None,
) -> None:
    """Serve on the already-listening ``sock`` until SIGINT/SIGTERM."""
    config = uvicorn.Config(
        http_app(app, bind, tokens),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=3,
    )
    port = int(sock.getsockname()[1])
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal for the
    # handler it found: make that a no-op, so our callers' cleanup (desktop, token file,
    # sandbox) runs and the process exits normally.
    previous = {s: signal.signal(s, _ignore) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        on_ready(bind.url(port))
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _ignore(signum: int, frame: FrameType | None) -> None:
    """A signal handler that does nothing (the signal was already acted on)."""
