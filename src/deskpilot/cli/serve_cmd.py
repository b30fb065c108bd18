"""``deskpilot serve``: the web console (background sessions you watch, approve and stop) and
the MCP server, in one process on loopback."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from types import FrameType

import click

from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.errors import ConfigError


def _say(message: str) -> None:
    click.secho(f"deskpilot serve: {message}", fg="cyan", err=True)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a non-loopback --host (anyone who reaches it and has the token can operate "
    "this desktop and approve actions).",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The kept token (for scripts, the login page and /mcp; default "
    "~/.local/state/deskpilot/mcp-token, shared with `deskpilot mcp`).",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(1, 6),
    default=6,
    show_default=True,
    help="Sessions running at once.",
)
@click.option(
    "--confirm-timeout",
    type=click.FloatRange(1, 86400),
    default=120,
    show_default=True,
    help="Seconds a confirmation card waits for an answer; then the action is declined.",
)
@click.option(
    "--model", metavar="PROVIDER:MODEL", default=None, help="Default model for new sessions."
)
@click.option("--base-url", metavar="URL", default=None, help="API endpoint (for compatible:).")
@click.option("--no-mcp", is_flag=True, help="Do not serve MCP at /mcp.")
@click.option("--no-preview", is_flag=True, help="No live previews (cards and chips only).")
@click.option(
    "--open",
    "open_window",
    is_flag=True,
    help="Open the console in a Chromium window of its own on this desktop, one that no "
    "session can see, read or click (so an agent cannot approve its own actions).",
)
@click.option(
    "--keep-finished",
    type=click.FloatRange(0, 86400),
    default=600,
    show_default=True,
    metavar="SECONDS",
    help="How long a finished session keeps its desktop (its sandbox, or the apps it opened "
    "here) so that a follow-up message continues it there; 0 closes it at once. Stop closes "
    "it sooner.",
)
@click.option(
    "--takeover-here",
    is_flag=True,
    help='Allow "Take over" for sessions on this desktop too (by default only on their own '
    "sandbox desktops): the page then drives your real screen's pointer and keyboard.",
)
@click.option(
    "--cleanup/--no-cleanup",
    default=False,
    show_default=True,
    help="When the last session ends, close the agent browser's tabs the sessions opened.",
)
@pass_context
def serve_command(
    ctx: Context,
    host: str,
    port: int,
    allow_remote: bool,
    token_file: Path | None,
    max_sessions: int,
    confirm_timeout: float,
    model: str | None,
    base_url: str | None,
    no_mcp: bool,
    no_preview: bool,
    open_window: bool,
    keep_finished: float,
    takeover_here: bool,
    cleanup: bool,
) -> None:
    """Serve the web console: start tasks in the background, watch them, approve, stop.

    \b
      deskpilot serve                   http://127.0.0.1:8765 (the link to open is printed)
      deskpilot serve --port 0          any free port

    The first line on stdout is the login link: its token works once and is swapped for a
    cookie. Each session runs on a new sandbox desktop or on this desktop (raw input takes
    turns), up to six at once, with a live preview, its tool calls as chips, and a card for
    every action that needs your yes (no answer in time, or no page open: declined). Stop
    ends the model call, the tool call, the sandbox and every process the session started.

    Talk to a session while it works (its next model turn reads the message; "Interrupt"
    stops the step first), continue it after it ends (same context, same desktop, kept for
    --keep-finished seconds), or run it again. "Take over" on the live preview hands you its
    pointer and keyboard (its agent waits) and hands back with a note the model reads. Each
    step shows its tokens and cost (prices: the Prices page, ~/.config/deskpilot/prices.toml)
    and its raw model request and reply. The audit log (runs, replays, verify, Markdown
    export with pictures) is under "Audit log".

    MCP clients connect to /mcp on the same port (bearer token: `deskpilot mcp token`); each
    connection shows as a session, and what a client cannot ask its user is asked here.
    """
    from deskpilot.mcp.transports import parse_bind
    from deskpilot.serve.server import CONSOLE_CLASS, Console, ServeOptions, serve
    from deskpilot.serve.window import close_console_window, open_console_window

    try:
        bind = parse_bind(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    except ConfigError as exc:
        fail(exc)
    settings = ctx.override(model=model, base_url=base_url)
    options = ServeOptions(
        bind=bind,
        allow_remote=allow_remote,
        token_file=token_file,
        max_sessions=max_sessions,
        confirm_timeout=confirm_timeout,
        previews=not no_preview,
        mcp=not no_mcp,
        cleanup=cleanup,
        keep_finished=keep_finished,
        takeover_here=takeover_here,
    )
    # uvicorn re-raises SIGINT/SIGTERM to the handler it found after its graceful shutdown:
    # make that a no-op so the sessions' cleanup runs and the process exits normally
    windows: list[subprocess.Popen[bytes]] = []

    def ready(console: Console) -> None:
        if open_window:
            windows.append(open_console_window(settings, console.url(bind.host), CONSOLE_CLASS))
            _say("opened the console in its own window")

    previous = {s: signal.signal(s, _ignore) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_async(serve(settings, options, say=_say, ready=ready))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for window in windows:
            close_console_window(window)


def _ignore(signum: int, frame: FrameType | None) -> None:
    """A signal handler that does nothing (the signal was already acted on)."""


COMMANDS: list[click.Command] = [serve_command]
