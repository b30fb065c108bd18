"""``deskpilot tools`` and ``deskpilot tool NAME ARGS``: the model's tools, by hand or script."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from deskpilot.cli.common import Context, async_command, pass_context
from deskpilot.config import CONFIRM_MODES
from deskpilot.errors import ToolError
from deskpilot.tools.base import ToolResult
from deskpilot.tools.builtin import all_tools, computer_use_tools
from deskpilot.tools.toolset import parse_args


@click.command("tools")
@click.option("--json", "as_json", is_flag=True, help="Print the full definitions as JSON.")
def tools(as_json: bool) -> None:
    """List the tools with their input schemas."""
    specs = all_tools().list()
    if as_json:
        click.echo(json.dumps([s.schema_dict() for s in specs], indent=2, ensure_ascii=False))
        return
    for spec in specs:
        click.secho(f"{spec.name}", bold=True, nl=False)
        click.echo(f"  ({spec.title}; {spec.risk.value})")
        click.echo("  " + spec.description.replace("\n", "\n  "))
        click.echo("  input schema: " + json.dumps(spec.input_schema, ensure_ascii=False))
        click.echo()


def _save_images(result: ToolResult, out_dir: Path) -> list[Path]:
    paths = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for i, image in enumerate(result.images):
        ext = "png" if image.mime == "image/png" else "jpg"
        path = out_dir / f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}-{i}.{ext}"
        path.write_bytes(image.data)
        paths.append(path)
    return paths


@click.command("tool", context_settings={"ignore_unknown_options": False})
@click.argument("name")
@click.argument("args", required=False, default="{}")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a structured result (for read_screen_ax: the nodes with id, role, "
    "name, states, bounds).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where screenshots are saved.",
)
@click.option(
    "--confirm",
    type=click.Choice(CONFIRM_MODES),
    default=None,
    help="What asks for a yes: all acting tools, consequential ones, or none (default: "
    "the configured mode, `consequential` unless set). On a terminal you are asked; "
    "without one the action is declined and the result says so.",
)
@pass_context
@async_command
async def tool(
    ctx: Context, name: str, args: str, as_json: bool, out_dir: Path, confirm: str | None
) -> None:
    """Call one tool NAME with ARGS (a JSON object) and print exactly what the model would get.

    \b
    deskpilot tool list_windows
    deskpilot tool open_app '{"bundleId": "Calculator"}'
    deskpilot tool read_screen_ax '{"windowID": "4280/12345"}'
    deskpilot tool perform '{"action": "type", "text": "12*7\\n"}'
    deskpilot tool perform '{"action": "double_click", "x": 120, "y": 80}'
    deskpilot tool perform '{"action": "drag", "elementID": "2.ax", "dx": 150}'

    Pointer actions (double_click, right_click, hover, drag, click at x, y) are XTest input on
    the window; a point is in the pixels of its computer_use_screenshot (`deskpilot tools`
    lists every argument).

    Images (screenshots) are saved to files whose paths are printed. Exit code 0 on success,
    1 on a tool error (a declined or refused action too). The tracked target window and
    element IDs persist per --session. Every call is written to the audit log (`deskpilot log`).
    """
    from deskpilot.agent.approvers import TerminalApprover
    from deskpilot.runtime import open_session

    settings = ctx.override(confirm=confirm)
    # the nine tools unless a page tool is asked for (those import the browser side)
    toolset = computer_use_tools() if name in computer_use_tools() else all_tools()
    # fail fast on bad input, before touching the desktop
    bad: str | None = None
    try:
        spec = toolset.get(name)
        spec.validate(parse_args(name, args))
    except ToolError as exc:  # unknown tool, invalid arguments
        bad = str(exc)
    if bad is not None:
        _emit(ToolResult.error(bad), as_json, out_dir)
        sys.exit(1)
    approver = TerminalApprover()
    async with open_session(
        settings, surface="cli", approver=approver, label=f"deskpilot tool {name}"
    ) as tctx:
        result = await toolset.call(name, args, tctx)
    _emit(result, as_json, out_dir)
    sys.exit(1 if result.is_error else 0)


def _emit(result: ToolResult, as_json: bool, out_dir: Path) -> None:
    paths = _save_images(result, out_dir) if result.images else []
    if as_json:
        payload: dict[str, Any] = {
            "ok": not result.is_error,
            "text": result.text,
            "data": result.data,
            "images": [str(p) for p in paths],
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
        return
    click.echo(result.text)
    for p in paths:
        click.echo(f"[image saved: {p}]")


COMMANDS: list[click.Command] = [tools, tool]
