"""One ``deskpilot serve`` process: the console, its sessions and the MCP server, on one port.

:func:`serve` binds the socket (``--port 0`` picks a free one), prints the one-time login link
as the first line on stdout, and runs uvicorn until SIGINT/SIGTERM; then it closes the pages'
streams first (an open stream would hold the shutdown), stops every session (their sandboxes
and processes) and the MCP server.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TextIO

import uvicorn
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from deskpilot.audit import AuditLog
from deskpilot.config import Settings
from deskpilot.mcp.tokens import default_token_file, load_token
from deskpilot.mcp.transports import Bind, bind_socket, check_bind
from deskpilot.serve.app import ConsoleRoutes, build_app
from deskpilot.serve.approver import CONFIRM_TIMEOUT
from deskpilot.serve.audit_api import AuditViews
from deskpilot.serve.auth import ConsoleAuth
from deskpilot.serve.cleanup import TabCleanup
from deskpilot.serve.frames import Previews
from deskpilot.serve.guard import Guard
from deskpilot.serve.hub import Hub
from deskpilot.serve.mcp_host import McpHost
from deskpilot.serve.picker import WindowPicker
from deskpilot.serve.prices import PriceTable
from deskpilot.serve.sessions import KEEP_FINISHED, MAX_SESSIONS, Sessions
from deskpilot.serve.shared_input import InputLocks

Say = Callable[[str], None]

#: The WM_CLASS of the console's own browser window (``deskpilot serve --open``): every
#: session's blocklist holds it, so no session can see, read or click the console.
CONSOLE_CLASS = "deskpilot-console"


@dataclasses.dataclass
class ServeOptions:
    bind: Bind
    allow_remote: bool = False
    token_file: Path | None = None
    max_sessions: int = MAX_SESSIONS
    confirm_timeout: float = CONFIRM_TIMEOUT
    previews: bool = True
    mcp: bool = True
    cleanup: bool = False
    #: seconds a finished session keeps its desktop for a follow-up (0: closed at once)
    keep_finished: float = KEEP_FINISHED
    #: allow taking over sessions that run on this desktop (not only sandboxes)
    takeover_here: bool = False


def hosts_for(bind: Bind, port: int) -> set[str]:
    names = {"127.0.0.1", "localhost", "[::1]"} if bind.loopback else set()
    names.add(f"[{bind.host}]" if ":" in bind.host else bind.host)
    return {f"{name}:{port}" for name in names}


def console_settings(settings: Settings) -> Settings:
    """The settings every session and the MCP server run with: the console window blocked."""
    if CONSOLE_CLASS in settings.blocklist_add:
        return settings
    return dataclasses.replace(settings, blocklist_add=(*settings.blocklist_add, CONSOLE_CLASS))


class Console:
    """Everything one ``deskpilot serve`` holds."""

    def __init__(self, settings: Settings, options: ServeOptions, port: int, say: Say) -> None:
        self.settings = console_settings(settings)
        self.options = options
        self.port = port
        self.say = say
        self.tokens = load_token(options.token_file or default_token_file(settings))
        self.auth = ConsoleAuth(self.tokens, port)
        self.hub = Hub()
        self.locks = InputLocks()
        self.prices = PriceTable(self.settings.config_dir / "prices.toml")
        self.sessions = Sessions(
            self.settings,
            self.hub,
            max_live=options.max_sessions,
            confirm_timeout=options.confirm_timeout,
            locks=self.locks,
            keep=options.keep_finished,
            takeover_here=options.takeover_here,
            prices=self.prices,
        )
        self.audit = AuditLog(self.settings.audit_db)
        self.routes = ConsoleRoutes(self.sessions, self.auth, {"mcp": options.mcp, "port": port})
        self.extra_routes: list[Route | Mount] = [*AuditViews(self.audit, self.prices).routes()]
        self.picker = WindowPicker(self.settings, self.locks)
        self.routes.windows = self.picker
        # parts running with the server: each has running() (a context) and maybe wrap(app)
        self.parts: list[Any] = [self.picker]
        if options.previews:
            self.previews = Previews(self.sessions)
            self.routes.frames = self.previews
            self.parts.append(self.previews)
        self.cleanup = TabCleanup(self.sessions, options.cleanup)
        self.routes.cleanup = self.cleanup
        self.mcp: McpHost | None = None
        if options.mcp:
            self.mcp = McpHost(self.sessions, options.bind, self.tokens, say)
            self.parts.append(self.mcp)
        self.stopping = False

    def url(self, host: str) -> str:
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/login?token={self.auth.one_time_token()}"

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for part in self.parts:
                await stack.enter_async_context(part.running())
            yield
            await self.shutdown()

    async def shutdown(self) -> None:
        """Close the pages' streams, then stop every session (idempotent)."""
        if self.stopping:
            return
        self.stopping = True
        self.hub.close()
        for part in self.parts:
            closing = getattr(part, "closing", None)
            if closing is not None:
                closing()
        await self.sessions.stop_all()

    def app(self) -> ASGIApp:
        inner = build_app(self.routes, self.extra_routes, self.lifespan)
        for part in self.parts:
            inner = part.wrap(inner) if hasattr(part, "wrap") else inner
        hosts = hosts_for(self.options.bind, self.port)
        return Guard(inner, self.auth, hosts)

    def close(self) -> None:
        self.audit.close()


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, console: Console) -> None:
        super().__init__(config)
        self.console = console

    async def shutdown(self, sockets: Any = None) -> None:
        await self.console.shutdown()  # streams end first, or the shutdown waits on them
        await super().shutdown(sockets)


async def serve(
    settings: Settings,
    options: ServeOptions,
    *,
    say: Say = lambda message: None,
    out: TextIO = sys.stdout,
    ready: Callable[[Console], None] = lambda console: None,
    build: Callable[[Console], None] = lambda console: None,
) -> None:
    """Serve until SIGINT/SIGTERM (see the module docstring)."""
    check_bind(options.bind, allow_remote=options.allow_remote)
    with bind_socket(options.bind) as sock:
        port = int(sock.getsockname()[1])
        console = Console(settings, options, port, say)
        try:
            build(console)
            config = uvicorn.Config(
                console.app(),
                log_level="warning",
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=5,
            )
            server = _Server(config, console)
            print(console.url(options.bind.host), file=out, flush=True)
            say(f"console for up to {options.max_sessions} sessions; audit log {settings.audit_db}")
            if options.mcp:
                say(f"MCP at {options.bind.url(port)} (bearer token in {console.tokens.path})")
            ready(console)
            await server.serve(sockets=[sock])
        finally:
            await console.shutdown()
            console.close()
