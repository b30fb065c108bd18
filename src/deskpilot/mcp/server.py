"""The ToolSet as an MCP server: ``tools/list`` and ``tools/call`` on the SDK's low-level Server.

Why the low-level ``Server`` and not ``MCPServer``'s decorators: every tool already has its one
definition (a :class:`~deskpilot.tools.base.ToolSpec` with a derived schema), and every call
must reach :meth:`ToolSet.call` untouched, invalid arguments included, so that validation,
confirmation, events and the audit log are the CLI's own. ``MCPServer`` would validate the
arguments against a second model first and answer before the ToolSet (and the log) saw them.

Per client connection (a stdio process, or one ``Mcp-Session-Id`` over HTTP) the server keeps a
:class:`ClientState`: its own in-memory :class:`~deskpilot.session.Session` (tracked target,
element IDs), its own audit run id, and a lock that runs its calls one at a time, in order.
Clients never see each other's targets or element IDs. The desktop connection is shared (raw
input is serialised inside the desktop layer).

Protocol era: deskpilot serves the handshake protocol (2025-11-25 and earlier), where a
connection exists to hang that state on and the server can ask the user mid-call. A request in
the stateless 2026-07-28 envelope is refused with METHOD_NOT_FOUND, so a ``mode="auto"``
client falls back to ``initialize``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import mcp.types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from deskpilot.audit.chain import new_run_id
from deskpilot.config import Settings
from deskpilot.desktop.base import Desktop
from deskpilot.errors import AuditError
from deskpilot.events import Event, EventSink, discard
from deskpilot.mcp.approval import ElicitingApprover
from deskpilot.mcp.definitions import call_result, error_result, tool_definition
from deskpilot.runtime import rules_for
from deskpilot.session import Session
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

log = logging.getLogger(__name__)

#: Key of deskpilot's entry in the SDK's per-connection scratch dict (``Connection.state``).
STATE_KEY = "deskpilot.client"

INSTRUCTIONS = """\
deskpilot operates graphical apps on this Linux desktop through their accessibility trees.
Typical flow: open_app (or list_windows) -> read_screen_ax (element IDs) -> perform /
perform_sequence with those IDs -> read_screen_ax again to check. The window a tool last
used is this connection's tracked target and is used when windowID is omitted. Actions that
need the user's approval (by default consequential ones: Send, Delete, Pay, ...) are asked
through the client when it supports elicitation; a declined action did nothing."""


def package_version() -> str:
    try:
        return version("deskpilot")
    except PackageNotFoundError:  # running from a source tree without metadata
        return "0"


@dataclass
class ClientState:
    """What one client connection owns."""

    session: Session
    run_id: str
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    calls: int = 0


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


async def refuse_stateless_era(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Server middleware: refuse 2026-07-28 (stateless) requests; see the module docstring."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and ctx.request_id is not None:
        raise MCPError(
            code=types.METHOD_NOT_FOUND,
            message="deskpilot serves the MCP handshake protocol (2025-11-25); connect with "
            "initialize: its tools keep per-connection state (tracked window, element IDs)",
        )
    return await call_next(ctx)


class DeskpilotMCP:
    """deskpilot's tools over MCP. ``server`` is the SDK Server to run on a transport."""

    def __init__(
        self,
        toolset: ToolSet,
        *,
        desktop: Desktop,
        settings: Settings,
        emit: EventSink = discard,
    ) -> None:
        self.toolset = toolset
        self.desktop = desktop
        self.settings = settings
        self.emit = emit
        self.rules = rules_for(settings)
        self.clients: dict[str, ClientState] = {}  # run id → live connection state
        self.server: Server[Any] = Server(
            "deskpilot",
            version=package_version(),
            title="deskpilot",
            description="Computer use for Linux desktops: accessibility trees, element IDs.",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self.server.middleware.append(refuse_stateless_era)

    # -- handlers ----------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_definition(s) for s in self.toolset.list()])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        approver = ElicitingApprover(ctx.session, ctx.request_id, mode=self.settings.confirm)
        try:
            state = self._client(ctx)
            tool_ctx = ToolContext(
                desktop=self.desktop,
                settings=self.settings,
                session=state.session,
                approver=approver,
                emit=self.emit,
                run_id=state.run_id,
                rules=self.rules,
            )
            async with state.lock:
                state.calls += 1
                result = await self.toolset.call(params.name, params.arguments, tool_ctx)
        except AuditError as exc:
            log.error("audit log failed during %s: %s", params.name, exc)
            return error_result(
                f"{params.name}: deskpilot could not write its audit log ({exc}); the call may "
                "not have run or completed. Tell the user."
            )
        return call_result(result, note=approver.note if result.is_error else "")

    # -- per-connection state ------------------------------------------------------------------

    def _client(self, ctx: ServerRequestContext[Any, Any]) -> ClientState:
        connection = connection_of(ctx)
        state = connection.state.get(STATE_KEY)
        if isinstance(state, ClientState):
            return state
        run_id = new_run_id()
        label = client_label(connection)
        state = ClientState(session=Session(name=f"mcp-{run_id}"), run_id=run_id)
        connection.state[STATE_KEY] = state
        self.clients[run_id] = state
        self.emit(
            Event(
                "run.started",
                {"goal": f"MCP client connection ({label})", "model": "mcp", "window": None},
                run_id=run_id,
            )
        )
        connection.exit_stack.callback(self._finished, state)
        return state

    def _finished(self, state: ClientState) -> None:
        self.clients.pop(state.run_id, None)
        try:
            self.emit(
                Event(
                    "run.finished",
                    {"outcome": "disconnected", "answer": "", "steps": state.calls},
                    run_id=state.run_id,
                )
            )
        except AuditError as exc:
            log.error("audit log: cannot record the end of %s: %s", state.run_id, exc)
