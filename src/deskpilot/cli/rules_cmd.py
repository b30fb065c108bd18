"""``deskpilot rules …``: the page-rule library (folders → groups → rules of CSS/JS by URL)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.errors import DeskpilotError
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import KINDS, compile_pattern, normalize_url
from deskpilot.pages.store import open_library
from deskpilot.pages.tree import Folder, Group, Rule, Verdict


def _library(ctx: Context) -> Library:
    try:
        return open_library(ctx.settings)
    except DeskpilotError as exc:
        fail(exc)


def _after_change(ctx: Context) -> None:
    from deskpilot.pages.service import after_change

    try:
        note = run_async(after_change(ctx.settings))
    except SystemExit:
        raise
    if note:
        click.echo(note, err=True)


@click.group("rules")
def rules_group() -> None:
    """Page rules: CSS and JS that deskpilot's agent browser applies to matching pages.

    Rules live in folders and groups; each level has its own URL patterns (all must match)
    and its own enabled flag (a disabled level switches off everything below it). Rules apply
    by themselves from document start, also when no deskpilot process runs.

    \b
    URL patterns (glob by default):
      https://example.com/page     exactly that URL (its #fragment ignored)
      https://example.com/*        every page of the site
      *://*.example.com/*          any scheme, any subdomain
      *staging*                    any URL containing "staging"
      match:…  Chrome's match patterns (vm-match:, vm-glob: Violentmonkey's; stylus-glob:)
      regex:…  domain:…  prefix:…  url:…   other kinds (imports use them)
    Exclude patterns win over include patterns.

    Userscripts (.user.js) run with the GM API their @grant lines ask for, as in
    Violentmonkey; userstyles (.user.css) and Stylus exports import as Stylus reads them.

    \b
      deskpilot rules list --url https://example.com/blog/1
      deskpilot rules show r_1a2b3c4d
      deskpilot rules add my-script.user.js
      deskpilot rules edit r_1a2b3c4d
      deskpilot rules disable f_0a1b2c3d
      deskpilot rules export -o rules.json
      deskpilot rules import stylus-2026-01-01.json --dry-run
      deskpilot rules import violentmonkey_2026-01-01.zip
      deskpilot rules menu
      deskpilot rules test-pattern '*://*.example.com/*' https://www.example.com/x
    """


def _flag(enabled: bool) -> str:
    return "" if enabled else " [disabled]"


def _patterns(node: Folder | Group | Rule) -> str:
    d = node.pattern_dict()
    parts = []
    if d["include"]:
        parts.append("include " + ", ".join(map(str, d["include"])))
    if d["exclude"]:
        parts.append("exclude " + ", ".join(map(str, d["exclude"])))
    return "  (" + "; ".join(parts) + ")" if parts else ""


def _sizes(rule: Rule) -> str:
    from deskpilot.pages.userscript_meta import is_userscript

    sizes = ", ".join(f"{k} {len(v)} chars" for k, v in (("css", rule.css), ("js", rule.js)) if v)
    return f"userscript, {sizes}" if is_userscript(rule.js) else sizes


@rules_group.command("list")
@click.option(
    "--url",
    default=None,
    help="Say which rules apply to this URL, in order, and why each other one does not.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the library as JSON (no code).")
@pass_context
def list_cmd(ctx: Context, url: str | None, as_json: bool) -> None:
    """The folders, groups and rules with their ids, flags and patterns."""
    with _library(ctx) as lib:
        if url is not None:
            _list_for_url(lib, url, as_json)
            return
        _sync_errors(ctx, lib)
        tree = lib.tree()
        if as_json:
            from deskpilot.pages.tree import structure

            click.echo(json.dumps(structure(tree), indent=2, ensure_ascii=False))
            return
        if not tree:
            click.echo(
                "No rules yet. Add one (deskpilot rules add FILE), let a page-helper chat make "
                "them (deskpilot chat --page), "
                "or import some: deskpilot rules import FILE"
            )
            return
        for folder in tree:
            label = f" [{folder.label}]" if folder.label else ""
            click.echo(
                f"{folder.id}  folder {folder.name!r}{label}{_flag(folder.enabled)}"
                f"{_patterns(folder)}"
            )
            for group in folder.groups:
                click.echo(
                    f"  {group.id}  group {group.name!r}{_flag(group.enabled)}{_patterns(group)}"
                )
                for rule in group.rules:
                    errors = len(lib.errors(rule.id))
                    err = f"  · {errors} error{'s' if errors != 1 else ''}" if errors else ""
                    click.echo(
                        f"    {rule.id}  rule {rule.name!r} ({_sizes(rule)}; "
                        f"{rule.run_at}, frames {rule.frames}){_flag(rule.enabled)}"
                        f"{_patterns(rule)}{err}"
                    )


def _list_for_url(lib: Library, url: str, as_json: bool) -> None:
    verdicts = lib.verdicts(url)
    if as_json:
        click.echo(json.dumps([_verdict_dict(v) for v in verdicts], indent=2, ensure_ascii=False))
        return
    applying = [v for v in verdicts if v.applies]
    click.echo(f"{normalize_url(url)}: {len(applying)} of {len(verdicts)} rules apply")
    for n, v in enumerate(applying, 1):
        click.echo(
            f"  {n}. {v.rule.id}  {v.folder.name} / {v.group.name} / {v.rule.name} "
            f"({_sizes(v.rule)})"
        )
    others = [v for v in verdicts if not v.applies]
    if others:
        click.echo("Not applied:")
    for v in others:
        click.echo(f"  - {v.rule.id}  {v.rule.name}: {v.reason}")


def _verdict_dict(v: Verdict) -> dict[str, Any]:
    return {"id": v.rule.id, "name": v.rule.name, "applies": v.applies, "reason": v.reason}


@rules_group.command("show")
@click.argument("item_id", metavar="ID")
@pass_context
def show_cmd(ctx: Context, item_id: str) -> None:
    """A rule's code, patterns and last errors (or a folder's or group's contents).

    Errors are recorded by the agent browser as pages hit them, with or without deskpilot
    running; `show` and `list` collect them from it whenever it runs."""
    with _library(ctx) as lib:
        try:
            _sync_errors(ctx, lib)
            node = lib.find(item_id)
        except DeskpilotError as exc:
            fail(exc)
        if not isinstance(node, Rule):
            kind = "folder" if isinstance(node, Folder) else "group"
            click.echo(f"{kind} {node.id} {node.name!r}{_flag(node.enabled)}{_patterns(node)}")
            children = node.groups if isinstance(node, Folder) else node.rules
            for child in children:
                click.echo(f"  {child.id}  {child.name!r}{_flag(child.enabled)}")
            return
        rule = node
        click.echo(f"rule {rule.id} {rule.name!r}{_flag(rule.enabled)}")
        click.echo(
            f"  run at {rule.run_at}, frames {rule.frames}, origin {rule.origin}, "
            f"revision {rule.revision}, updated {rule.updated_at}"
        )
        d = rule.pattern_dict()
        click.echo(f"  include: {', '.join(map(str, d['include'])) or '(any URL)'}")
        click.echo(f"  exclude: {', '.join(map(str, d['exclude'])) or '(none)'}")
        for what, code in (("CSS", rule.css), ("JS", rule.js)):
            if code:
                click.echo(f"--- {what} ---")
                click.echo(code.rstrip("\n"))
        _show_script(ctx, lib, rule)
        errors = lib.errors(rule.id)
        click.echo(f"--- last errors ({len(errors)}) ---" if errors else "--- no errors ---")
        for e in errors[-10:]:
            times = f" ×{e.count}" if e.count > 1 else ""
            click.echo(f"  {e.last_at}  {e.kind}{times}  {e.url}\n    {e.message}")


def _show_script(ctx: Context, lib: Library, rule: Rule) -> None:
    """A userscript's grants, @connect list and stored values."""
    from deskpilot.pages.userscript_meta import parse_meta

    meta = parse_meta(rule.js or "") if rule.js else None
    if meta is None:
        return
    _sync_values(ctx, lib)
    values = lib.values(rule.id)
    click.echo("--- userscript ---")
    click.echo(f"  @grant: {', '.join(meta.grants) or '(none)'}")
    if meta.items("connect"):
        click.echo(f"  @connect: {', '.join(meta.items('connect'))}")
    for line, urls in (("@require", meta.items("require")), ("@resource", meta.resources)):
        for url in urls:
            click.echo(f"  {line} {url}")
    click.echo(f"  values: {len(values)} (deskpilot rules values {rule.id})")


def _sync_values(ctx: Context, lib: Library) -> None:
    """Take in the userscript values pages wrote (if the agent browser runs)."""
    import asyncio

    from deskpilot.pages.service import pull_values

    try:
        asyncio.run(pull_values(ctx.settings, lib))
    except DeskpilotError as exc:
        click.secho(f"deskpilot: script values not read from the browser: {exc}", err=True)


def _sync_errors(ctx: Context, lib: Library) -> None:
    """Take in the errors pages reported since the last look (if the agent browser runs; a
    failure to ask it is said, and the library's errors are shown anyway)."""
    import asyncio

    from deskpilot.pages.service import collect_errors

    try:
        asyncio.run(collect_errors(ctx.settings, lib))
    except DeskpilotError as exc:
        click.secho(f"deskpilot: rule errors not collected from the browser: {exc}", err=True)


def _set_enabled(ctx: Context, item_id: str, enabled: bool) -> None:
    with _library(ctx) as lib:
        try:
            node = lib.set_enabled(item_id, enabled)
        except DeskpilotError as exc:
            fail(exc)
        what = type(node).__name__.lower()
        click.echo(f"{what} {node.id} {node.name!r} {'enabled' if enabled else 'disabled'}")
        if isinstance(node, Folder | Group) and not enabled:
            click.echo("  (everything below it is off; the children keep their own flags)")
    _after_change(ctx)


@rules_group.command("enable")
@click.argument("item_id", metavar="ID")
@pass_context
def enable_cmd(ctx: Context, item_id: str) -> None:
    """Switch a folder, group or rule on."""
    _set_enabled(ctx, item_id, True)


@rules_group.command("disable")
@click.argument("item_id", metavar="ID")
@pass_context
def disable_cmd(ctx: Context, item_id: str) -> None:
    """Switch a folder, group or rule off (a folder or group: everything below it)."""
    _set_enabled(ctx, item_id, False)


@rules_group.command("delete")
@click.argument("item_id", metavar="ID")
@click.option("--yes", is_flag=True, help="Do not ask.")
@pass_context
def delete_cmd(ctx: Context, item_id: str, yes: bool) -> None:
    """Delete a folder, group or rule with everything below it."""
    with _library(ctx) as lib:
        try:
            node = lib.find(item_id)
            if not yes and not click.confirm(
                f"Delete {type(node).__name__.lower()} {node.name!r} and everything in it?"
            ):
                fail("nothing deleted")
            lib.delete(item_id)
        except DeskpilotError as exc:
            fail(exc)
        click.echo(f"deleted {item_id}")
    _after_change(ctx)


@rules_group.command("export")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (default: standard output).",
)
@pass_context
def export_cmd(ctx: Context, output: Path | None) -> None:
    """The whole library as deskpilot's JSON (import it back with `rules import`): folders,
    groups, rules, userscripts' stored values (as the agent browser last wrote them) and the
    cached files their @require/@resource lines name."""
    from deskpilot.pages.transfer import export_library

    with _library(ctx) as lib:
        _sync_values(ctx, lib)
        text = json.dumps(export_library(lib), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    click.echo(f"exported to {output}", err=True)


@rules_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(["auto", "deskpilot", "stylus", "usercss", "violentmonkey", "userscript"]),
    default="auto",
    show_default=True,
    help="The file's format: deskpilot JSON, a Stylus JSON export, a .user.css, a "
    "Violentmonkey or Tampermonkey backup zip, a .user.js.",
)
@click.option("--folder", default=None, help="Name of the folder the import goes into.")
@click.option("--fetch", is_flag=True, help="Download @require/@resource files not cached.")
@click.option("--dry-run", is_flag=True, help="Show what would be imported; change nothing.")
@click.option("--yes", is_flag=True, help="Accept rules that apply to every URL without asking.")
@pass_context
def import_cmd(
    ctx: Context,
    file: Path,
    source: str,
    folder: str | None,
    fetch: bool,
    dry_run: bool,
    yes: bool,
) -> None:
    """Import rules: all or nothing. Every item is checked as Stylus or Violentmonkey checks
    it, and each problem is listed with its item; with any, nothing is saved.

    A Stylus export, a UserCSS file, a Violentmonkey or Tampermonkey backup or a userscript
    lands in a folder named after its file. A backup's stored script values come along. A
    userscript's @require and @resource files must be in deskpilot's cache (`deskpilot rules
    cache`), in the file (a deskpilot export), local, or downloaded with --fetch."""
    from deskpilot.pages.import_plan import apply_plan
    from deskpilot.pages.transfer import plan_import

    with _library(ctx) as lib:
        try:
            plan = plan_import(file, source, folder, cached=lib.resource, fetch=fetch)
        except DeskpilotError as exc:
            fail(exc)
    f, g, r = plan.counts
    click.echo(
        f"{file.name} ({plan.source}): {f} folder{'s' * (f != 1)}, {g} group"
        f"{'s' * (g != 1)}, {r} rule{'s' * (r != 1)}"
    )
    for line in plan.describe():
        click.echo("  " + line)
    for w in plan.warnings:
        click.secho(f"  warning: {w}", fg="yellow")
    everywhere = plan.everywhere()
    if everywhere:
        click.secho(f"  {len(everywhere)} rule(s) would apply to EVERY page:", fg="yellow")
        for name in everywhere[:10]:
            click.secho(f"    {name}", fg="yellow")
    if dry_run:
        click.echo("dry run: nothing imported")
        return
    if everywhere and not yes:
        if not sys.stdin.isatty():
            fail(
                "some rules apply to every page: re-run with --yes to accept that scope "
                "(or --dry-run to look first); nothing imported"
            )
        if not click.confirm("Import them with that scope?"):
            fail("nothing imported")
    with _library(ctx) as lib:
        try:
            made = apply_plan(lib, plan)
        except DeskpilotError as exc:
            fail(f"{exc}; nothing imported")
    click.echo("imported into " + ", ".join(f"{x.id} {x.name!r}" for x in made))
    _after_change(ctx)


@rules_group.command("test-pattern")
@click.argument("pattern")
@click.argument("url")
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default=None,
    help="Pattern kind (default: glob, or the PATTERN's kind: prefix).",
)
def test_pattern_cmd(pattern: str, url: str, kind: str | None) -> None:
    """Does PATTERN match URL? Exit code 0 if it does, 1 if not."""
    from deskpilot.pages.patterns import split_kind

    if kind is None:
        kind, pattern = split_kind(pattern)
    try:
        compiled = compile_pattern(pattern, kind)
    except DeskpilotError as exc:
        fail(exc, code=2)
    hit = compiled.matches(url)
    click.echo(
        f"{'matches' if hit else 'does not match'}: {kind} {pattern!r} vs {normalize_url(url)}"
    )
    flags = f" with flags {compiled.flags}" if compiled.flags else ""
    click.echo(f"  (as a regular expression: {compiled.regex}{flags})")
    sys.exit(0 if hit else 1)


COMMANDS: list[click.Command] = [rules_group]
