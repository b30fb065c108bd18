"""The ToolSet as an MCP server: ``tools/list`` and ``tools/call`` on the SDK's low-level Server.

Why the low-level ``Server`` and not ``MCPServer``'s decorators: every tool already has its one
definition (a :class:`~deskpilot.tools.base.ToolSpec` with a derived schema), and every call
must reach :meth:`ToolSet.call` untouched, invalid arguments included, so that validation,
confirmation, events and the audit log are the CLI's own. ``MCPServer`` would validate the
arguments against a second model first and answer before the ToolSet (and the log) saw them.

Both protocol eras are served by the same handlers: the handshake era (``initialize``, up to
2025-11-25) and the stateless 2026-07-28 era (every request carries its envelope; the SDK
routes it by the ``MCP-Protocol-Version`` header over HTTP and by the first request over
stdio). Each client has its own state (:mod:`deskpilot.mcp.clients`); each call runs in a
context derived from the server's one session (:func:`deskpilot.runtime.open_session`,
``surface="mcp"``): the desktop, settings and audit log are the server's, the session, run id
and approver the client's. A confirmation reaches
the user through ``elicitation/create`` mid-call in the handshake era, and through an
``input_required`` result in the stateless one (:mod:`deskpilot.mcp.approval`).

While a call runs (an approval waiting for the user, an app launching, a long wait), the
caller gets a ``notifications/progress`` every :data:`PROGRESS_INTERVAL` seconds when it sent
a progress token, so clients that reset their timeout on progress keep waiting.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from deskpilot.errors import AuditError
from deskpilot.mcp.approval import (
    ELICIT_TIMEOUT,
    ElicitingApprover,
    RoundTripApprover,
    Tickets,
    declares_form_elicitation,
)
from deskpilot.mcp.clients import Clients, ClientState
from deskpilot.mcp.definitions import call_result, error_result, tool_definition
from deskpilot.policy import Approver as PolicyApprover
from deskpilot.tools.base import ToolResult
from deskpilot.tools.context import ToolContext
from deskpilot.tools.task_tools import begin_task
from deskpilot.tools.toolset import ToolSet

log = logging.getLogger(__name__)

#: Seconds between progress notifications while a call runs.
PROGRESS_INTERVAL = 10.0

INSTRUCTIONS = """\
deskpilot operates graphical apps on this Linux desktop through their accessibility trees.
Typical flow: open_app (or list_windows) -> read_screen_ax (element IDs) -> perform /
perform_sequence with those IDs -> read_screen_ax again to check. The window a tool last
used is this client's tracked target and is used when windowID is omitted. Actions that
need the user's approval (by default consequential ones: Send, Delete, Pay, ...) are asked
through the client when it supports elicitation; a declined action did nothing. Call
begin_task with the user's request in their own words first: once the user confirms it, what
the request names (submit that form, send to that person, delete that item) is not asked
again until end_task."""


def package_version() -> str:
    try:
        return version("deskpilot")
    except PackageNotFoundError:  # running from a source tree without metadata
        return "0"


Approver = ElicitingApprover | RoundTripApprover


#: What a client reads after the user stopped its session from the console.
STOPPED = (
    "{tool} {when}: the user stopped this deskpilot session from the deskpilot console. "
    "Do not retry; tell the user. (A new connection starts a new session.)"
)


class DeskpilotMCP:
    """deskpilot's tools over MCP. ``server`` is the SDK Server to run on a transport.

    ``base`` is the server's context from :func:`deskpilot.runtime.open_session`."""

    def __init__(
        self,
        toolset: ToolSet,
        base: ToolContext,
        *,
        fallback: Callable[[ClientState], PolicyApprover] | None = None,
    ) -> None:
        self.toolset = toolset
        self.base = base
        #: who to ask, per client, when a client cannot ask its user (``deskpilot serve``)
        self.fallback = fallback
        self.settings = base.settings
        self.tickets = Tickets(ELICIT_TIMEOUT)
        self._clients = Clients(lambda: self.base.emit)
        self.server: Server[Any] = Server(
            "deskpilot",
            version=package_version(),
            title="deskpilot",
            description="Computer use for Linux desktops: accessibility trees, element IDs.",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        # 2026-07-28 approvals ride the client's retry: seal their state (bound to the tool and
        # its arguments, expiring with the approval) so a client cannot forge or move it
        security = RequestStateSecurity.ephemeral(ttl=ELICIT_TIMEOUT, audience="deskpilot")
        self.server.middleware.append(RequestStateBoundary(security, default_audience="deskpilot"))

    @property
    def clients(self) -> dict[str, ClientState]:
        """Live client states by audit run id."""
        return self._clients.live

    async def aclose(self) -> None:
        self._clients.close()

    def stop(self, run_id: str) -> ClientState | None:
        """Stop a client's session (the console's Stop): its running call is cancelled, its
        run ends as ``stopped`` and its later calls are refused (a new connection starts a
        new session). Its state (``launched``: the apps it started), or None when no live
        client has that run."""
        state = self._clients.live.get(run_id)
        if state is None:
            return None
        state.stopped = True
        if state.scope is not None:
            state.scope.cancel()
        self._clients.finish(state, "stopped")
        return state

    # -- handlers ----------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_definition(s) for s in self.toolset.list()])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        stateless = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        approver: Approver
        try:
            state = self._clients.of(ctx, stateless=stateless)
            fallback = self.fallback(state) if self.fallback is not None else None
            mode = self.settings.confirm
            if stateless:
                caps = declares_form_elicitation(ctx.session.client_capabilities)
                approver = RoundTripApprover(
                    caps, params, self.tickets, mode=mode, fallback=fallback
                )
            else:
                approver = ElicitingApprover(
                    ctx.session, ctx.request_id, mode=mode, fallback=fallback
                )
            tool_ctx = dataclasses.replace(
                self.base,
                session=state.session,
                approver=approver,
                run_id=state.run_id,
                grants=state.grants,
            )
            if self.settings.goal and not state.goal_given:  # the server's own --goal
                state.goal_given = True
                begin_task(tool_ctx, self.settings.goal, "the server's --goal")
            if state.stopped:
                return error_result(STOPPED.format(tool=params.name, when="was not run"))
            async with state.lock:
                state.calls += 1
                with anyio.CancelScope() as scope:
                    state.scope = scope
                    result = await self._with_progress(
                        ctx,
                        params.name,
                        approver,
                        lambda: self.toolset.call(params.name, params.arguments, tool_ctx),
                    )
                state.scope = None
                if scope.cancelled_caught:
                    return error_result(
                        STOPPED.format(tool=params.name, when="was stopped while it ran")
                    )
                state.launched |= _launched(params.name, result)
        except AuditError as exc:
            log.error("audit log failed during %s: %s", params.name, exc)
            return error_result(
                f"{params.name}: deskpilot could not write its audit log ({exc}); the call may "
                "not have run or completed. Tell the user."
            )
        if isinstance(approver, RoundTripApprover) and approver.pending is not None:
            return approver.pending  # nothing ran; the client asks the user and calls again
        spec = self.toolset.get(params.name) if params.name in self.toolset else None
        note = approver.note if result.is_error else ""
        return call_result(result, note=note, spec=spec)

    async def _with_progress(
        self,
        ctx: ServerRequestContext[Any, Any],
        tool: str,
        approver: Approver,
        run: Any,
    ) -> Any:
        """Await ``run()``, sending progress every PROGRESS_INTERVAL seconds meanwhile."""
        started = time.monotonic()

        async def beat() -> None:
            while True:
                await anyio.sleep(PROGRESS_INTERVAL)
                waiting = getattr(approver, "waiting", False)
                message = (
                    f"{tool}: waiting for the user's approval"
                    if waiting
                    else f"{tool}: still running"
                )
                try:
                    await ctx.session.report_progress(
                        round(time.monotonic() - started, 1), message=message
                    )
                except Exception as exc:  # the client went away: the call ends on its own
                    log.debug("progress for %s not sent: %s", tool, exc)
                    return

        async with anyio.create_task_group() as tg:
            tg.start_soon(beat)
            try:
                return await run()
            finally:
                tg.cancel_scope.cancel()


def _launched(tool: str, result: ToolResult) -> set[int]:
    """The process an open_app call started (none when the app was running already)."""
    data = result.data or {}
    window = data.get("window") if tool == "open_app" and not result.is_error else None
    if not data.get("launched") or not isinstance(window, dict):
        return set()
    pid = window.get("pid")
    return {pid} if isinstance(pid, int) and pid > 0 else set()
