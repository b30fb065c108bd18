"""``deskpilot rules edit``: change a saved rule's code, patterns, timing or frames in place."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.cli.rules_cmd import _after_change, _library, rules_group
from deskpilot.errors import DeskpilotError
from deskpilot.pages.patterns import parse_patterns
from deskpilot.pages.tree import RUN_AT

_CODE = click.Path(dir_okay=False, allow_dash=True, path_type=Path)


def _read(path: Path | None) -> str | None:
    if path is None:
        return None
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {path}: {exc}")


@rules_group.command("edit")
@click.argument("rule_id", metavar="ID")
@click.option("--css", "css_file", type=_CODE, help="New CSS from this file (- for stdin).")
@click.option("--js", "js_file", type=_CODE, help="New JS function body from this file (-).")
@click.option("--no-css", is_flag=True, help="Remove the rule's CSS.")
@click.option("--no-js", is_flag=True, help="Remove the rule's JS.")
@click.option("--name", default=None, help="A new name.")
@click.option("--run-at", type=click.Choice(RUN_AT), default=None, help="When the JS runs.")
@click.option("--frames", type=click.Choice(["top", "all"]), default=None)
@click.option("--include", multiple=True, help="Replace the include patterns (repeat for several).")
@click.option("--exclude", multiple=True, help="Replace the exclude patterns (repeat for several).")
@click.option("--no-patterns", is_flag=True, help="Remove the rule's own patterns.")
@pass_context
def edit_cmd(
    ctx: Context,
    rule_id: str,
    css_file: Path | None,
    js_file: Path | None,
    no_css: bool,
    no_js: bool,
    name: str | None,
    run_at: str | None,
    frames: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    no_patterns: bool,
) -> None:
    """Change rule ID in place; what is not given stays. The running agent browser gets the
    change at once: open tabs now, pages loaded from now on with the new code only.

    \b
      deskpilot rules edit r_1a2b3c4d --js fix.js
      deskpilot rules edit r_1a2b3c4d --no-js --run-at document-end
      deskpilot rules edit r_1a2b3c4d --include 'https://example.com/blog/*'
    """
    if (css_file and no_css) or (js_file and no_js):
        fail("give new code or remove it, not both")
    if no_patterns and (include or exclude):
        fail("--no-patterns removes the patterns: do not give --include/--exclude with it")
    css = "" if no_css else _read(css_file)
    js = "" if no_js else _read(js_file)
    changes = (css, js, name, run_at, frames, include or exclude or no_patterns or None)
    if all(c is None for c in changes):
        fail("nothing to change: give --css, --js, --name, --run-at, --frames or patterns")
    try:
        inc = parse_patterns(list(include), "include") if include or no_patterns else None
        exc = parse_patterns(list(exclude), "exclude") if exclude or no_patterns else None
        if js:
            _check_js(ctx, js)
        with _library(ctx) as lib:
            rule = lib.update_rule(
                rule_id,
                name=name,
                css=css,
                js=js,
                run_at=run_at,
                frames=frames,
                include=inc,
                exclude=exc,
            )
    except DeskpilotError as exc_:
        fail(f"{exc_}; nothing changed")
    click.echo(f"rule {rule.id} {rule.name!r} changed (revision {rule.revision})")
    _after_change(ctx)


def _check_js(ctx: Context, js: str) -> None:
    """Refuse JS that does not compile (checked in the agent browser when it runs)."""
    from deskpilot.pages.browser import maybe_connect
    from deskpilot.pages.service import js_problem

    async def check() -> str | None:
        async with maybe_connect(ctx.settings) as agent:
            return await js_problem(agent, js)

    problem = run_async(check())
    if problem:
        fail(f"the JS does not compile: {problem}; nothing changed")


COMMANDS: list[click.Command] = [rules_group]  # with `edit` joined to it
