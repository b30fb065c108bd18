"""``deskpilot mcp``: serve the tools to MCP clients (stdio by default, or streamable HTTP)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.config import CONFIRM_MODES
from deskpilot.errors import ConfigError, DeskpilotError, SandboxError

if TYPE_CHECKING:
    from deskpilot.mcp.transports import Bind


def _say(message: str) -> None:
    click.secho(f"deskpilot mcp: {message}", fg="cyan", err=True)


@click.group("mcp", invoke_without_command=True)
@click.option(
    "--http",
    "http_bind",
    metavar="[HOST:]PORT",
    default=None,
    help="Serve streamable HTTP on HOST:PORT (default host 127.0.0.1; port 0 picks a free "
    "one) at /mcp instead of stdio. Every request needs the bearer token printed at start.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow --http on a non-loopback address (anyone who can reach it and has the token "
    "can operate this desktop).",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The bearer token file for --http (default: ~/.local/state/deskpilot/mcp-token). "
    "An existing file's token is used (it must be mode 0600); a missing one is made. The token "
    "is kept across restarts until `deskpilot mcp token --rotate`.",
)
@click.option(
    "--sandbox",
    is_flag=True,
    help="Work on a private headless desktop, started at the first tool call (not at start, "
    "so a client's probe never starts one) and stopped when the server exits.",
)
@click.option(
    "--confirm",
    type=click.Choice(CONFIRM_MODES),
    default=None,
    help="Which actions need the user's approval (default: config 'confirm', else "
    "consequential). Clients with elicitation are asked; for other clients those actions "
    "are refused, so 'none' is the way to allow them.",
)
@click.option(
    "--model",
    default=None,
    metavar="PROVIDER:MODEL",
    help="Also serve computer_use_task (a subagent) with this model (default: config 'model').",
)
@click.option(
    "--goal",
    default=None,
    metavar="TEXT",
    help='The task every client of this server works on, in your own words ("fill in the '
    'booking form on example.test and submit it"): what it names is done without asking. A '
    "client can also pass its user's request with begin_task, which the user confirms.",
)
@click.option(
    "--print-config",
    "print_config",
    type=click.Choice(["claude-desktop", "claude-code", "vscode", "cursor"]),
    default=None,
    help="Print a ready-to-paste config for this MCP client on this machine (this deskpilot's "
    "path, the desktop's environment; with --http the URL and token, Claude Desktop through "
    "mcp-remote) and exit. Combine with --sandbox, --http, --confirm, --model as you would "
    "serve.",
)
@click.pass_context
@pass_context
def mcp(
    ctx: Context,
    click_ctx: click.Context,
    http_bind: str | None,
    allow_remote: bool,
    token_file: Path | None,
    sandbox: bool,
    confirm: str | None,
    model: str | None,
    goal: str | None,
    print_config: str | None,
) -> None:
    """Serve deskpilot's tools to MCP clients (Claude Desktop, Claude Code, VS Code, Cursor).

    \b
    deskpilot mcp                         stdio (the client starts this command)
    deskpilot mcp --http 127.0.0.1:8765   streamable HTTP at http://127.0.0.1:8765/mcp
    deskpilot mcp --sandbox               on a private headless desktop
    deskpilot mcp token [--rotate]        the HTTP bearer token (kept until rotated)
    deskpilot mcp --print-config vscode   a config to paste (claude-desktop, claude-code,
                                          vscode, cursor; add --http/--sandbox as served)

    The server starts without a desktop and opens it at the first tool call: DISPLAY, else
    the one your session advertises (systemd user environment, login session), a sandbox kept
    with `deskpilot sandbox up`, or the only X server running. With none, every call answers
    what to set. A desktop lost mid-session is reported and reconnected when it is back.

    Both MCP protocol eras are served (the initialize handshake up to 2025-11-25, and the
    stateless 2026-07-28). Every call goes through the same policy and audit log as the CLI;
    each client has its own tracked window and element IDs. Logs go to stderr; over stdio,
    stdout carries only the protocol.
    """
    if click_ctx.invoked_subcommand is not None:
        if http_bind or allow_remote or sandbox or confirm or model or goal:
            fail(
                ConfigError(
                    "--http, --sandbox, --confirm, --model, --goal and --allow-remote are for "
                    "serving; "
                    f"they do not apply to `deskpilot mcp {click_ctx.invoked_subcommand}`"
                )
            )
        return
    from deskpilot.mcp import run_server
    from deskpilot.mcp.transports import check_bind, parse_bind

    bind = None
    try:
        if http_bind is not None:
            bind = parse_bind(http_bind)
            check_bind(bind, allow_remote=allow_remote)
        elif allow_remote or (token_file is not None and print_config is None):
            raise ConfigError("--allow-remote and --token-file only apply with --http")
    except ConfigError as exc:
        fail(exc)
    if print_config is not None:
        _print_config(ctx, print_config, bind, token_file, sandbox, confirm, model)
        return
    overrides = {"confirm": confirm, "model": model, "goal": goal}
    settings = ctx.override(**overrides)
    if not sandbox:
        run_async(run_server(settings, http=bind, token_file=token_file, say=_say))
        return
    if ctx.options.get("display"):
        fail(ConfigError("--sandbox and --display cannot be combined"))
    from deskpilot.mcp.desktops import SandboxDesktop

    desktops = SandboxDesktop(ctx.settings, _say)
    try:
        run_async(run_server(settings, opener=desktops, http=bind, token_file=token_file, say=_say))
    except SandboxError as exc:
        fail(exc)
    finally:
        desktops.stop()


@mcp.command("token")
@click.option("--rotate", is_flag=True, help="Replace the token: the old one stops working now.")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The token file (default: ~/.local/state/deskpilot/mcp-token).",
)
@pass_context
def token_command(ctx: Context, rotate: bool, token_file: Path | None) -> None:
    """Print the bearer token HTTP clients send (made when there is none); --rotate replaces it.

    The token is kept (mode 0600) across server restarts, so configured clients keep working.
    A running `deskpilot mcp --http` refuses the old token as soon as it is rotated.
    """
    from deskpilot.mcp.tokens import default_token_file, ensure_token, rotate_token

    path = token_file or default_token_file(ctx.settings)
    try:
        if rotate:
            value = rotate_token(path)
            _say(f"new token written to {path}; the old one no longer works")
        else:
            value, created = ensure_token(path)
            if created:
                _say(f"made a new token in {path}")
    except ConfigError as exc:
        fail(exc)
    click.echo(value)


def _print_config(
    ctx: Context,
    client: str,
    bind: Bind | None,
    token_file: Path | None,
    sandbox: bool,
    confirm: str | None,
    model: str | None,
) -> None:
    from deskpilot.config import resolve_desktop
    from deskpilot.mcp.configs import WHERE, Served, render, stdio_env
    from deskpilot.mcp.tokens import default_token_file, ensure_token

    command, args = _this_deskpilot()
    args += ["mcp"]
    if sandbox:
        args.append("--sandbox")
    if confirm:
        args += ["--confirm", confirm]
    if model:
        args += ["--model", model]
    try:
        if bind is not None:
            if bind.port == 0:
                raise ConfigError("--print-config needs the port the server will listen on")
            token, _ = ensure_token(token_file or default_token_file(ctx.settings))
            served = Served(command, tuple(args), {}, url=bind.url(), token=token)
            serve = " ".join(
                ["deskpilot mcp --http", f"{bind.host}:{bind.port}", *args[args.index("mcp") + 1 :]]
            )
            _say(f"start the server with: {serve}")
        else:
            env: dict[str, str] = {}
            if not sandbox:
                try:
                    found = resolve_desktop(ctx.settings)
                    keys = (
                        "DISPLAY",
                        "XAUTHORITY",
                        "DBUS_SESSION_BUS_ADDRESS",
                        "DESKPILOT_SANDBOX",
                    )
                    env = stdio_env(found.environ, keys)
                except DeskpilotError:
                    _say(
                        "no desktop found from here, so the config names none: the server "
                        "looks for one when it runs (or add --sandbox)"
                    )
            served = Served(command, tuple(args), env)
    except ConfigError as exc:
        fail(exc)
    click.echo(render(client, served))
    _say(f"paste it into {WHERE[client]}")
    if model:
        _say("the server also needs the model's API key: in the client's env for it, or [keys]")


def _this_deskpilot() -> tuple[str, list[str]]:
    """How to start this very deskpilot: its console script, else this Python with -m."""
    script = Path(sys.argv[0])
    if script.name == "deskpilot" and script.exists():
        return str(script.resolve()), []
    return sys.executable, ["-m", "deskpilot"]


COMMANDS: list[click.Command] = [mcp]
