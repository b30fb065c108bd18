"""deskpilot's command line: thin glue over the library (``deskpilot --help``).

Commands are imported when they run (a :class:`LazyGroup`): ``deskpilot --version`` or one
``deskpilot tool`` call must not pay for the agent loop, the providers, MCP or the console.
"""

from __future__ import annotations

import importlib

import click

from deskpilot._version import VERSION
from deskpilot.cli.common import Context, main_options

#: Each command's name and the module (in deskpilot.cli) that defines it in COMMANDS.
COMMAND_MODULES = {
    "tool": "tools_cmd",
    "tools": "tools_cmd",
    "sandbox": "sandbox_cmd",
    "doctor": "doctor_cmd",
    "blocklist": "blocklist_cmd",
    "run": "run_cmd",
    "chat": "chat_cmd",
    "log": "log_cmd",
    "mcp": "mcp_cmd",
    "rules": "rules_edit",  # rules_cmd's group with `edit` added
    "serve": "serve_cmd",
    "eval": "eval_cmd",
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (``--help`` imports them all)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [
            *COMMAND_MODULES,
            *(n for n in super().list_commands(ctx) if n not in COMMAND_MODULES),
        ]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        commands = importlib.import_module(f"deskpilot.cli.{module}").COMMANDS
        return next((c for c in commands if c.name == cmd_name), None)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@main_options
@click.version_option(version=VERSION, message="%(prog)s, version %(version)s")
@click.pass_context
def main(ctx: click.Context, /, **options: object) -> None:
    """deskpilot — a computer-use agent for Linux desktops.

    An LLM (or you) sees real GUI apps through their accessibility trees and acts on them by
    element ID. Start with a sandbox desktop, then try the tools:

    \b
      eval "$(deskpilot sandbox up)"          # a private headless desktop
      deskpilot tool open_app '{"bundleId": "Calculator"}'
      deskpilot tool read_screen_ax
      deskpilot tool perform_sequence '{"steps": [{"elementID": "..."}]}'
      deskpilot sandbox down

    Configuration: flags > environment (DESKPILOT_*) > ~/.config/deskpilot/config.toml.
    """
    ctx.obj = Context.from_options(options)
