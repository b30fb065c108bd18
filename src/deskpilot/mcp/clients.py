"""Who is calling: one :class:`ClientState` per MCP client, in both protocol eras.

A client's state is its own in-memory :class:`~deskpilot.session.Session` (tracked target,
element IDs), its own audit run, and a lock that runs its calls one at a time, in order.
Clients never see each other's targets or element IDs.

* Handshake era (``initialize``, up to 2025-11-25): the state hangs on the SDK's
  ``Connection`` (a stdio process, or one ``Mcp-Session-Id`` over HTTP) and ends with it.
* Stateless era (2026-07-28): there is no connection; every request carries the client's
  identity in its ``_meta`` envelope. The state is keyed by, in order: an explicit
  ``deskpilot/session`` key in the request's ``_meta`` (for programs running several agents
  through one client), the stdio process (one client per process), or the client's
  ``clientInfo`` name and version over HTTP. A state unused for :data:`IDLE_S` seconds ends
  (its run is finished in the audit log as ``idle``); the rest end when the server stops.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext

from deskpilot.audit.chain import new_run_id
from deskpilot.errors import AuditError
from deskpilot.events import Event, EventSink
from deskpilot.policy import TaskGrants
from deskpilot.session import Session

log = logging.getLogger(__name__)

#: Key of deskpilot's entry in the SDK's per-connection scratch dict (``Connection.state``).
STATE_KEY = "deskpilot.client"
#: ``_meta`` key a 2026-07-28 client may send to keep several states apart.
SESSION_META_KEY = "deskpilot/session"
#: Seconds after which an unused 2026-07-28 client state ends.
IDLE_S = 1800.0


@dataclass
class ClientState:
    """What one client's connection (or stateless identity) owns."""

    session: Session
    run_id: str
    label: str
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    calls: int = 0
    used: float = field(default_factory=time.monotonic)
    #: stopped by the user (the console's Stop): its calls are refused from then on
    stopped: bool = False
    #: the scope of the call running now, cancelled by a stop
    scope: anyio.CancelScope | None = None
    #: processes of the apps its open_app calls started (a stop may end them)
    launched: set[int] = field(default_factory=set)
    #: the grants of its task (the server's --goal, or begin_task with the user's yes)
    grants: TaskGrants = field(default_factory=TaskGrants)
    #: the server's goal was given to it (once: end_task ends it for good)
    goal_given: bool = False


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The SDK ``Connection`` a request arrived on.

    ``Connection.state`` and ``Connection.exit_stack`` are the SDK's documented per-connection
    scratch space and teardown hook, but ``ServerRequestContext`` does not expose the
    connection yet (the SDK's own TODO L54); its ``ServerSession`` holds it. One place reads
    it; tests/e2e/test_mcp_server.py pins the assumption (one ClientState per connection)."""
    connection = getattr(ctx.session, "_connection", None)
    if not isinstance(connection, Connection):
        raise RuntimeError("this mcp SDK version does not expose the request's Connection")
    return connection


def client_label(connection: Connection) -> str:
    params = connection.client_params
    if params is None:
        return "unknown client"
    info = params.client_info
    return f"{info.name} {info.version}".strip()


def stateless_key(ctx: ServerRequestContext[Any, Any], label: str) -> str:
    """Which state a 2026-07-28 request belongs to (see the module docstring)."""
    meta: dict[str, Any] = dict(ctx.meta) if ctx.meta is not None else {}
    explicit = meta.get(SESSION_META_KEY)
    if isinstance(explicit, str) and explicit:
        return f"meta:{explicit[:200]}"
    if ctx.request is None:  # stdio (or in-process): the process serves one client
        return "process"
    return f"client:{label}"


class Clients:
    """Every client's state, and their runs in the audit log."""

    def __init__(self, emit: Callable[[], EventSink]) -> None:
        self._emit = emit  # read at each event: tests swap the sink
        self.live: dict[str, ClientState] = {}  # run id → state
        self._stateless: dict[str, ClientState] = {}  # stateless key → state

    def of(self, ctx: ServerRequestContext[Any, Any], *, stateless: bool) -> ClientState:
        connection = connection_of(ctx)
        label = client_label(connection)
        if stateless:
            self.expire()
            key = stateless_key(ctx, label)
            state = self._stateless.get(key)
            if state is None:
                state = self._start(f"{label}, protocol {ctx.protocol_version}")
                self._stateless[key] = state
            state.used = time.monotonic()
            return state
        found = connection.state.get(STATE_KEY)
        if isinstance(found, ClientState):
            return found
        state = self._start(label)
        connection.state[STATE_KEY] = state
        connection.exit_stack.callback(self.finish, state, "disconnected")
        return state

    def _start(self, label: str) -> ClientState:
        run_id = new_run_id()
        state = ClientState(session=Session(name=f"mcp-{run_id}"), run_id=run_id, label=label)
        self.live[run_id] = state
        self._emit()(
            Event(
                "run.started",
                {"goal": f"MCP client connection ({label})", "model": "mcp", "window": None},
                run_id=run_id,
            )
        )
        return state

    def expire(self, now: float | None = None) -> None:
        """End stateless states unused for IDLE_S seconds."""
        now = time.monotonic() if now is None else now
        for key, state in list(self._stateless.items()):
            if now - state.used > IDLE_S and not state.lock.locked():
                del self._stateless[key]
                self.finish(state, "idle")

    def finish(self, state: ClientState, outcome: str) -> None:
        if self.live.pop(state.run_id, None) is None:
            return
        try:
            self._emit()(
                Event(
                    "run.finished",
                    {"outcome": outcome, "answer": "", "steps": state.calls},
                    run_id=state.run_id,
                )
            )
        except AuditError as exc:
            log.error("audit log: cannot record the end of %s: %s", state.run_id, exc)

    def close(self) -> None:
        """The server stops: end every stateless state."""
        for state in list(self._stateless.values()):
            self.finish(state, "server stopped")
        self._stateless.clear()
