"""MCP in the console's process: ``/mcp`` is deskpilot's MCP server, each client a session card.

The server is :class:`~deskpilot.mcp.server.DeskpilotMCP` behind its streamable-HTTP app and
bearer check (:func:`deskpilot.mcp.transports.http_app`), exactly as ``deskpilot mcp --http``
serves it: the same tools (``computer_use_task`` too when a model is configured), the same
per-client state and both protocol eras. Its one session is opened through the door
(:func:`deskpilot.runtime.open_session`, ``surface="mcp"``) on this desktop, opened on first
use and reopened after a loss (:class:`~deskpilot.desktop.live.LiveDesktop`), with raw input
taking turns with the console's sessions on the same display.

What the console adds: an observer that turns each client's audit run into a card (its calls
as chips, a thumbnail of the window it works on; the card ends when the client disconnects),
Stop on that card (the client's running call is cancelled, its later calls are refused, the
apps it launched are ended),
and a fallback approver: a confirmation the client cannot ask its user (no elicitation)
becomes a card in the console instead of a refusal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from deskpilot.desktop.live import LiveDesktop, as_desktop
from deskpilot.errors import SandboxError
from deskpilot.events import Event
from deskpilot.mcp import build_toolset
from deskpilot.mcp.clients import ClientState
from deskpilot.mcp.desktops import configured_desktop
from deskpilot.mcp.server import DeskpilotMCP
from deskpilot.mcp.tokens import TokenFile
from deskpilot.mcp.transports import MCP_PATH, Bind, http_app
from deskpilot.runtime import open_session
from deskpilot.serve.approver import ConsoleApprover
from deskpilot.serve.places import kill_all
from deskpilot.serve.sessions import ConsoleSession, Sessions
from deskpilot.serve.shared_input import shared
from deskpilot.session import Session

log = logging.getLogger(__name__)

Say = Callable[[str], None]


def for_mcp(path: str) -> bool:
    """Whether a path belongs to the MCP server: /mcp, and OAuth discovery (answered 404 there,
    so that clients do not try a sign-in; see :class:`~deskpilot.mcp.transports.BearerAuth`)."""
    return path == MCP_PATH or path.startswith((MCP_PATH + "/", "/.well-known/"))


class McpHost:
    def __init__(self, sessions: Sessions, bind: Bind, tokens: TokenFile, say: Say) -> None:
        self.sessions = sessions
        self.bind = bind
        self.tokens = tokens
        self.say = say
        self.server: DeskpilotMCP | None = None
        self._asgi: ASGIApp | None = None
        self._by_run: dict[str, ConsoleSession] = {}

    # -- cards --------------------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        session = self._by_run.get(event.run_id)
        if session is None and event.kind == "run.started":
            parent = event.data.get("parent_run")
            session = self._by_run.get(str(parent)) if parent else None
            if session is None:
                session = self._card(event)
            self._by_run[event.run_id] = session
        if session is None:
            return
        self.sessions.observer(session)(event)
        if event.kind == "run.finished" and event.run_id == session.run_id:
            self.sessions.confirmations.cancel_all(session.id)
            outcome = str(event.data.get("outcome") or "left")
            session.state = "stopped" if outcome == "stopped" else "done"
            session.status = "Stopped" if outcome == "stopped" else f"Client {outcome}"
            session.ended = event.ts
            self.sessions.changed(session.id)
            for hook in self.sessions.on_end:
                hook(session)

    def _card(self, event: Event) -> ConsoleSession:
        label = str(event.data.get("goal") or "MCP client")
        session = ConsoleSession(
            id=f"mcp-{event.run_id[:8]}",
            goal=label,
            model="mcp",
            confirm=self.sessions.settings.confirm,
            target="mcp",
            kind="mcp",
            state="running",
            status="Connected",
            run_id=event.run_id,
            display=self.sessions.settings.display or "",
        )
        state = self.server.clients.get(event.run_id) if self.server is not None else None
        if state is not None:
            session.session = state.session  # its tracked window: the card's thumbnail
        session.on_stop = lambda: self._stop(session)
        self.sessions.add(session)
        for hook in self.sessions.on_running:
            hook(session)
        return session

    async def _stop(self, session: ConsoleSession) -> None:
        """The card's Stop: the client's running call is cancelled, its confirmations are
        withdrawn, its later calls are refused, and the apps its open_app calls started are
        ended (as a console session's on this desktop are; apps that were running already
        are left alone)."""
        session.state = "stopping"
        self.sessions.confirmations.cancel_all(session.id)
        self.sessions.changed(session.id)
        state = self.server.stop(session.run_id) if self.server is not None else None
        if state is None:
            session.state, session.status, session.ended = "stopped", "Stopped", time.time()
            self.sessions.changed(session.id)
            return
        try:
            await kill_all(state.launched)
        except SandboxError as exc:
            log.warning("MCP session %s: %s", session.id, exc)

    def approver_for(self, state: ClientState) -> ConsoleApprover:
        session = self._by_run.get(state.run_id)
        card = session.id if session is not None else f"mcp-{state.run_id[:8]}"
        s = self.sessions
        s.confirmations.track(card, state.grants)  # the client's task: listed, revocable
        return ConsoleApprover(
            card, s.confirmations, lambda: s.hub.watching, timeout=s.confirm_timeout
        )

    # -- serving ------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        settings = self.sessions.settings
        async with contextlib.AsyncExitStack() as stack:
            toolset = await stack.enter_async_context(build_toolset(settings, self.say))
            live = LiveDesktop(configured_desktop(settings, self.say), say=self.say)
            stack.push_async_callback(live.close)
            lock = self.sessions.locks.of(settings.display or "")
            base = await stack.enter_async_context(
                open_session(
                    settings,
                    surface="mcp",
                    desktop=shared(as_desktop(live), lock),
                    session=Session(name="mcp"),
                    observe=self.observe,
                    label="MCP server",
                )
            )
            base = dataclasses.replace(base, step_frames=True)  # the replay's frame per step
            server = DeskpilotMCP(toolset, base, fallback=self.approver_for)
            stack.push_async_callback(server.aclose)
            outer = http_app(server, self.bind, self.tokens)
            starlette: Any = getattr(outer, "app", outer)
            await stack.enter_async_context(starlette.router.lifespan_context(starlette))
            self.server, self._asgi = server, outer
            try:
                yield
            finally:
                self._asgi = None

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
            path = str(scope.get("path", ""))
            mcp = self._asgi
            if scope["type"] == "http" and mcp is not None and for_mcp(path):
                await mcp(scope, receive, send)
                return
            await app(scope, receive, send)

        return dispatch
