"""deskpilot's command line: thin glue over the library (``deskpilot --help``)."""

from __future__ import annotations

import click

from deskpilot.cli import (
    blocklist_cmd,
    chat_cmd,
    eval_cmd,
    log_cmd,
    mcp_cmd,
    rules_cmd,
    rules_edit,
    run_cmd,
    sandbox_cmd,
    serve_cmd,
    tools_cmd,
)
from deskpilot.cli.common import Context, main_options


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@main_options
@click.version_option(package_name="deskpilot")
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


for module in (
    tools_cmd,
    sandbox_cmd,
    blocklist_cmd,
    run_cmd,
    chat_cmd,
    log_cmd,
    mcp_cmd,
    rules_cmd,
    rules_edit,
    serve_cmd,
    eval_cmd,
):
    for command in module.COMMANDS:
        main.add_command(command)
