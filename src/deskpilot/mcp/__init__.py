"""``deskpilot mcp``: the ToolSet for any MCP client, over stdio or streamable HTTP.

::

    definitions  ToolSpec -> MCP Tool (annotations from declared risk); ToolResult -> result
    approval     ElicitingApprover: ask the user through the client, else refuse with a hint
    server       DeskpilotMCP: tools/list + tools/call on the SDK's low-level Server,
                 one ClientState (Session, audit run, lock) per client connection
    transports   stdio; HTTP with a bearer token, loopback-only unless allowed

:func:`run_server` wires one process: the tools (plus ``computer_use_task`` when a model is
configured), one session (:func:`deskpilot.runtime.open_session`: the desktop connection shared
by every client and the audit log), a transport.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from deskpilot.config import Settings
from deskpilot.desktop.live import LiveDesktop, Opener, as_desktop
from deskpilot.errors import DeskpilotError
from deskpilot.mcp.approval import ElicitingApprover
from deskpilot.mcp.definitions import annotations_for, call_result, tool_definition
from deskpilot.mcp.desktops import configured_desktop
from deskpilot.mcp.server import DeskpilotMCP
from deskpilot.mcp.tokens import default_token_file, load_token
from deskpilot.mcp.transports import Bind, bind_socket, parse_bind, serve_http, serve_stdio
from deskpilot.runtime import open_session
from deskpilot.session import Session
from deskpilot.tools.builtin import all_tools
from deskpilot.tools.toolset import ToolSet

__all__ = [
    "Bind",
    "DeskpilotMCP",
    "ElicitingApprover",
    "annotations_for",
    "build_toolset",
    "call_result",
    "parse_bind",
    "run_server",
    "tool_definition",
]

Say = Callable[[str], None]


@contextlib.asynccontextmanager
async def build_toolset(settings: Settings, say: Say) -> AsyncIterator[ToolSet]:
    """The nine tools and the page tools, ``begin_task`` and ``end_task`` (the user's request
    grants what it names, once the user confirms it), plus ``computer_use_task`` when a model
    is configured and usable."""
    from deskpilot.tools.task_tools import TASK_TOOLS

    toolset = all_tools()
    for spec in TASK_TOOLS:
        toolset.add(spec)
    if not settings.model:
        yield toolset
        return
    from deskpilot.agent.providers import get_provider
    from deskpilot.agent.task import computer_use_task_tool

    try:
        provider = get_provider(settings.model, settings)
    except DeskpilotError as exc:
        say(f"not serving computer_use_task: {exc}")
        yield toolset
        return
    toolset.add(computer_use_task_tool(provider, tools=all_tools))
    say(f"serving computer_use_task with {provider.label}")
    try:
        yield toolset
    finally:
        await provider.aclose()


async def run_server(
    settings: Settings,
    *,
    opener: Opener | None = None,
    http: Bind | None = None,
    token_file: Path | None = None,
    say: Say = lambda message: None,
) -> None:
    """Serve until the client leaves (stdio) or the process is told to stop (HTTP).

    The desktop is opened by ``opener`` (default: the configured or discovered one) on the
    first call that needs it, and again after it was lost; the server is up without one."""
    async with contextlib.AsyncExitStack() as stack:
        sock = stack.enter_context(bind_socket(http)) if http is not None else None
        token = load_token(token_file or default_token_file(settings)) if http else None
        toolset = await stack.enter_async_context(build_toolset(settings, say))
        live = LiveDesktop(opener or configured_desktop(settings, say), say=say)
        stack.push_async_callback(live.close)
        base = await stack.enter_async_context(
            open_session(
                settings, surface="mcp", desktop=as_desktop(live), session=Session(name="mcp")
            )
        )
        app = DeskpilotMCP(toolset, base)
        stack.push_async_callback(app.aclose)
        say(
            f"{len(toolset.list())} tools; the desktop opens on the first call that needs it; "
            f"confirm policy: {settings.confirm}; audit log: {settings.audit_db}"
        )
        if http is None or sock is None or token is None:
            await serve_stdio(app)
            return

        def ready(url: str) -> None:
            say(f"bearer token in {token.path} (mode 0600; `deskpilot mcp token` shows it)")
            say(f"listening on {url}")

        await serve_http(app, sock, http, token, on_ready=ready)
