"""``deskpilot mcp``: serve the tools to MCP clients (stdio by default, or streamable HTTP)."""

from __future__ import annotations

from pathlib import Path

import click

from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.config import CONFIRM_MODES, Settings, load_settings
from deskpilot.errors import ConfigError, SandboxError
from deskpilot.sandbox import Sandbox, SandboxInfo
from deskpilot.sandbox.info import sandbox_command_env


def _say(message: str) -> None:
    click.secho(f"deskpilot mcp: {message}", fg="cyan", err=True)


@click.command("mcp")
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
    help="Where --http writes its bearer token (mode 0600; default: "
    "~/.local/state/deskpilot/mcp-token). A new token is made at every start.",
)
@click.option(
    "--sandbox",
    is_flag=True,
    help="Start a private headless desktop for the server's lifetime and work there.",
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
@pass_context
def mcp(
    ctx: Context,
    http_bind: str | None,
    allow_remote: bool,
    token_file: Path | None,
    sandbox: bool,
    confirm: str | None,
    model: str | None,
) -> None:
    """Serve deskpilot's tools to MCP clients (Claude Desktop, VS Code, Cursor, agents).

    \b
    deskpilot mcp                         stdio (the client starts this command)
    deskpilot mcp --http 127.0.0.1:8765   streamable HTTP at http://127.0.0.1:8765/mcp
    deskpilot mcp --sandbox               on a private headless desktop

    Every call goes through the same policy and audit log as the CLI. Each client connection
    has its own tracked window and element IDs. Logs go to stderr; over stdio, stdout carries
    only the protocol.
    """
    from deskpilot.mcp import run_server
    from deskpilot.mcp.transports import check_bind, parse_bind

    bind = None
    try:
        if http_bind is not None:
            bind = parse_bind(http_bind)
            check_bind(bind, allow_remote=allow_remote)
        elif allow_remote or token_file is not None:
            raise ConfigError("--allow-remote and --token-file only apply with --http")
    except ConfigError as exc:
        fail(exc)
    overrides = {"confirm": confirm, "model": model}
    if not sandbox:
        settings = ctx.override(**overrides)
        run_async(run_server(settings, http=bind, token_file=token_file, say=_say))
        return
    if ctx.options.get("display"):
        fail(ConfigError("--sandbox and --display cannot be combined"))
    base = ctx.settings
    try:
        with Sandbox(base_env=base.environ) as desk:
            assert desk.info is not None
            _say(
                f"sandbox desktop {desk.info.display} is up ({desk.info.width}x{desk.info.height})"
            )
            settings = sandbox_settings(ctx, base, desk.info, overrides)
            run_async(run_server(settings, http=bind, token_file=token_file, say=_say))
    except SandboxError as exc:
        fail(exc)


def sandbox_settings(
    ctx: Context, base: Settings, info: SandboxInfo, overrides: dict[str, str | None]
) -> Settings:
    """Settings for the sandbox: its display and buses, this user's config, state and data."""
    env = sandbox_command_env(base.environ, info)
    flags = {k: v for k, v in ctx.options.items() if k != "display"}
    flags.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return load_settings(flags, env=env)
    except ConfigError as exc:
        fail(exc)


COMMANDS: list[click.Command] = [mcp]
