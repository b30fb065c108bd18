"""``deskpilot rules add`` and ``deskpilot rules edit``: make a rule from files, change a saved
rule in place (from files or in ``$VISUAL``/``$EDITOR``), with no chat."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from deskpilot.cli import rules_scripts  # noqa: F401  (its commands join the group)
from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.cli.rules_cmd import _after_change, _library, rules_group
from deskpilot.errors import DeskpilotError, InvalidArguments
from deskpilot.pages.patterns import Pattern, parse_patterns
from deskpilot.pages.tree import RUN_AT, Rule
from deskpilot.pages.userscript_meta import parse_meta

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


def _patterns(values: tuple[str, ...], mode: str) -> tuple[Pattern, ...] | None:
    if not values:
        return None
    try:
        return parse_patterns(list(values), mode)  # type: ignore[arg-type]
    except DeskpilotError as exc:
        fail(f"{exc}; nothing saved")


@rules_group.command("add")
@click.argument(
    "file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--css", "css_file", type=_CODE, help="A rule's CSS from this file (- for stdin).")
@click.option("--js", "js_file", type=_CODE, help="A rule's JS function body from this file.")
@click.option("--name", default=None, help="The rule's name (default: the script's @name).")
@click.option("--include", multiple=True, help="URL pattern the rule applies to (repeat).")
@click.option("--exclude", multiple=True, help="URL pattern it never applies to (repeat).")
@click.option("--run-at", type=click.Choice(RUN_AT), default=None, help="When the JS runs.")
@click.option("--frames", type=click.Choice(["top", "all"]), default=None)
@click.option("--group", "group_id", default=None, help="Add into this group (g_…).")
@click.option("--fetch", is_flag=True, help="Download @require/@resource files not cached.")
@click.option("--yes", is_flag=True, help="Accept a rule for every URL without asking.")
@pass_context
def add_cmd(
    ctx: Context,
    file: Path | None,
    css_file: Path | None,
    js_file: Path | None,
    name: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    run_at: str | None,
    frames: str | None,
    group_id: str | None,
    fetch: bool,
    yes: bool,
) -> None:
    """Add a rule from files: a userscript (.user.js), a userstyle (.user.css), or CSS/JS.

    A .user.js gives its name, URL patterns (@match, @include, @exclude, @exclude-match), run
    time (@run-at) and frames (@noframes) from its metadata block; --include, --exclude,
    --run-at, --frames and --name replace them. Its @require and @resource files come from a
    local file (relative to the script), deskpilot's cache (`deskpilot rules cache`), or the
    network with --fetch. A .user.css becomes a group with a rule per @-moz-document
    section. --css/--js make a plain rule (--name and --include needed).

    Without --group, a rule lands in the folder Userscripts, Userstyles or Rules (made if
    missing). The running agent browser gets it at once.

    \b
      deskpilot rules add wide-reader.user.js
      deskpilot rules add dark.user.css --include 'https://docs.example/*'
      deskpilot rules add --css hide.css --name 'Hide ads' --include 'https://news.example/*'
      deskpilot rules add --js fix.js --name Fix --include '*://*.example.com/*'
    """
    from deskpilot.pages.adding import AddRequest, add_plan, plan_add

    if file is not None and (css_file or js_file):
        fail("give a .user.js/.user.css file, or --css/--js files, not both")
    if file is None and not (css_file or js_file):
        fail("nothing to add: give a .user.js or .user.css file, or --css/--js files")
    req = AddRequest(
        file=file,
        css=_read(css_file),
        js=_read(js_file),
        name=name,
        include=_patterns(include, "include"),
        exclude=_patterns(exclude, "exclude"),
        run_at=run_at,
        frames=frames,
    )
    if req.js and file is None:
        _check_js(ctx, req.js)
    with _library(ctx) as lib:
        try:
            plan = plan_add(req, lib.resource, fetch=fetch)
        except DeskpilotError as exc:
            fail(exc)
        for w in plan.warnings:
            click.secho(f"  warning: {w}", fg="yellow", err=True)
        everywhere = plan.everywhere()
        if everywhere and not yes:
            if not sys.stdin.isatty():
                fail(
                    f"{', '.join(everywhere)} would apply to EVERY page: give --include, or "
                    "--yes to accept that scope; nothing saved"
                )
            if not click.confirm("It applies to EVERY page. Save it anyway?"):
                fail("nothing saved")
        try:
            made = add_plan(lib, plan, group_id)
        except DeskpilotError as exc:
            fail(f"{exc}; nothing saved")
        for rule in made:
            click.echo(f"added rule {rule.id} {rule.name!r}{_summary(rule)}")
    _after_change(ctx)


def _summary(rule: Rule) -> str:
    d = rule.pattern_dict()
    inc = ", ".join(map(str, d["include"])) or "every page"
    exc = f"; not {', '.join(map(str, d['exclude']))}" if d["exclude"] else ""
    when = f", {rule.run_at}" if rule.js else ""
    return f" for {inc}{exc}{when}"


@rules_group.command("edit")
@click.argument("rule_id", metavar="ID")
@click.option("--css", "css_file", type=_CODE, help="New CSS from this file (- for stdin).")
@click.option("--js", "js_file", type=_CODE, help="New JS from this file (- for stdin).")
@click.option("--no-css", is_flag=True, help="Remove the rule's CSS.")
@click.option("--no-js", is_flag=True, help="Remove the rule's JS.")
@click.option("--name", default=None, help="A new name.")
@click.option("--run-at", type=click.Choice(RUN_AT), default=None, help="When the JS runs.")
@click.option("--frames", type=click.Choice(["top", "all"]), default=None)
@click.option("--include", multiple=True, help="Replace the include patterns (repeat for several).")
@click.option("--exclude", multiple=True, help="Replace the exclude patterns (repeat for several).")
@click.option("--no-patterns", is_flag=True, help="Remove the rule's own patterns.")
@click.option(
    "--part",
    type=click.Choice(["js", "css"]),
    default=None,
    help="With no change given: edit only this part in the editor.",
)
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
    part: str | None,
) -> None:
    """Change rule ID in place; what is not given stays. With no change given, the rule's
    code opens in $VISUAL or $EDITOR (its JS, then its CSS; --part picks one), and is saved
    when the editor exits with it changed. The running agent browser gets the change at once:
    open tabs now, pages loaded from now on with the new code only.

    A userscript whose metadata lines change (@match, @include, @exclude, @exclude-match,
    @run-at, @noframes) takes its patterns, run time and frames from them again, unless
    --include/--exclude/--run-at/--frames are given.

    \b
      deskpilot rules edit r_1a2b3c4d                  # in your editor
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
        css, js = _in_editor(ctx, rule_id, part)
        if css is None and js is None:
            click.echo("no change: nothing saved")
            return
    try:
        inc = parse_patterns(list(include), "include") if include or no_patterns else None
        exc = parse_patterns(list(exclude), "exclude") if exclude or no_patterns else None
        with _library(ctx) as lib:
            old = lib.find(rule_id)
            if not isinstance(old, Rule):
                fail(f"{rule_id!r} is not a rule id (r_…)")
            followed = ""
            if js and inc is None and exc is None:
                inc, exc, run_at, frames, followed = _follow_meta(old, js, run_at, frames)
            if js:
                _check_js(ctx, js)
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
    click.echo(f"rule {rule.id} {rule.name!r} changed (revision {rule.revision}){followed}")
    _after_change(ctx)


def _follow_meta(
    old: Rule, js: str, run_at: str | None, frames: str | None
) -> tuple[tuple[Pattern, ...] | None, tuple[Pattern, ...] | None, str | None, str | None, str]:
    """A userscript's patterns, run time and frames from its new metadata lines, when they
    changed from the old code's."""
    from deskpilot.pages.userscript_plan import ScriptSource, plan_userscript

    new_meta, old_meta = parse_meta(js), parse_meta(old.js or "")
    if new_meta is None:
        return None, None, run_at, frames, ""
    keys = ("match", "include", "exclude", "excludeMatch", "runAt", "noframes")
    if old_meta is not None and all(new_meta.values.get(k) == old_meta.values.get(k) for k in keys):
        return None, None, run_at, frames, ""
    out = plan_userscript(ScriptSource(js, old.name), lambda _u: None)
    if out.rule is None:
        pattern_problems = [p for p in out.problems if p.startswith("@")]
        if pattern_problems:
            raise InvalidArguments("; ".join(pattern_problems))
        return None, None, run_at, frames, ""
    r = out.rule
    return (
        r.include,
        r.exclude,
        run_at or r.run_at,
        frames or r.frames,
        " — patterns, run time and frames follow its new metadata lines",
    )


def _editor(ctx: Context) -> list[str]:
    env = ctx.settings.environ
    command = env.get("VISUAL") or env.get("EDITOR")
    if not command:
        if not sys.stdin.isatty():
            fail(
                "nothing to change: give --css, --js, --name, --run-at, --frames or patterns, "
                "or set $EDITOR to edit the code"
            )
        command = "vi"
    return shlex.split(command)


def _in_editor(ctx: Context, rule_id: str, part: str | None) -> tuple[str | None, str | None]:
    """The rule's code after the user edited it (None for a part left unchanged)."""
    import subprocess
    import tempfile

    with _library(ctx) as lib:
        try:
            rule = lib.find(rule_id)
        except DeskpilotError as exc:
            fail(exc)
    if not isinstance(rule, Rule):
        fail(f"{rule_id!r} is not a rule id (r_…): only a rule has code to edit")
    parts = [p for p in ("js", "css") if (part is None or p == part)]
    if part is None:
        parts = [p for p in parts if getattr(rule, p)] or ["js" if rule.js is not None else "css"]
    out: dict[str, str | None] = {"css": None, "js": None}
    for p in parts:
        old = getattr(rule, p) or ""
        suffix = ".css" if p == "css" else ".user.js" if parse_meta(old) else ".js"
        with tempfile.TemporaryDirectory(prefix="deskpilot-rule-") as tmp:
            path = Path(tmp) / f"{rule.id}{suffix}"
            path.write_text(old, encoding="utf-8")
            argv = [*_editor(ctx), str(path)]
            try:
                done = subprocess.run(argv, env=dict(ctx.settings.environ), check=False)
            except OSError as exc:
                fail(f"cannot start the editor {argv[0]!r}: {exc.strerror}; set $EDITOR")
            if done.returncode != 0:
                fail(f"the editor exited with status {done.returncode}: nothing saved")
            new = path.read_text(encoding="utf-8")
        if new != old:
            out[p] = new
    return out["css"], out["js"]


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


COMMANDS: list[click.Command] = [rules_group]  # with `add`, `edit` and the script commands
