"""``deskpilot rules menu``, ``rules values``, ``rules cache``: what userscripts keep and offer
beside their code — the menu commands they registered in open tabs, their stored values, the
cache of their ``@require``/``@resource`` files (the machine may be offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.cli.rules_cmd import _after_change, _library, rules_group
from deskpilot.errors import DeskpilotError
from deskpilot.pages.tree import Rule


@rules_group.command("menu")
@click.option("--tab", "tab", type=int, default=None, help="Only this tab's commands.")
@click.option(
    "--run",
    "which",
    default=None,
    metavar="N|CAPTION",
    help="Run a command: its number in the list, or its caption.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the commands as JSON.")
@pass_context
def menu_cmd(ctx: Context, tab: int | None, which: str | None, as_json: bool) -> None:
    """The menu commands userscripts registered in the agent browser's open tabs
    (GM_registerMenuCommand), and running one (--run).

    \b
      deskpilot rules menu
      deskpilot rules menu --run 2
      deskpilot rules menu --tab 1234 --run 'Toggle dark mode'
    """
    from deskpilot.pages.browser import connect
    from deskpilot.pages.service import menu_commands, run_menu_command

    async def go() -> list[dict[str, Any]]:
        async with connect(ctx.settings) as agent:
            found = [c for c in await menu_commands(agent) if tab is None or c["tab"] == tab]
            if which is not None:
                await run_menu_command(agent, pick(found, which))
            return found

    found = run_async(go())
    if which is not None:
        chosen = pick(found, which)
        click.echo(f"ran {chosen['script']}: {chosen['caption']!r} in tab {chosen['tab']}")
        return
    if as_json:
        click.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("No menu commands: no userscript registered one in the open tabs.")
        return
    for n, c in enumerate(found, 1):
        where = f"tab {c['tab']}" + (f" frame {c['frame']}" if c["frame"] else "")
        click.echo(f"[{n}] {c['caption']}  — {c['script']} ({c['rule']}), {where}: {c['url']}")


def pick(commands: list[dict[str, Any]], which: str) -> dict[str, Any]:
    """The command ``which`` names: a 1-based number, a key or a caption (unique)."""
    if which.isdigit() and 1 <= int(which) <= len(commands):
        return commands[int(which) - 1]
    hits = [c for c in commands if which in (c["caption"], c["key"])]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        known = ", ".join(repr(c["caption"]) for c in commands) or "none"
        fail(f"no menu command {which!r} in the open tabs (there are: {known})")
    fail(f"{len(hits)} commands are called {which!r}: give its number, or --tab")


@rules_group.command("values")
@click.argument("rule_id", metavar="ID")
@click.option("--set", "sets", multiple=True, metavar="KEY=JSON", help="Set a value (repeat).")
@click.option("--delete", "deletes", multiple=True, metavar="KEY", help="Delete a value.")
@click.option("--clear", is_flag=True, help="Delete every value.")
@click.option("--json", "as_json", is_flag=True, help="Print the values as one JSON object.")
@pass_context
def values_cmd(
    ctx: Context,
    rule_id: str,
    sets: tuple[str, ...],
    deletes: tuple[str, ...],
    clear: bool,
    as_json: bool,
) -> None:
    """A userscript's stored values (GM_setValue), as the agent browser last wrote them;
    --set/--delete/--clear change them (pages get the new values at once).

    \b
      deskpilot rules values r_1a2b3c4d
      deskpilot rules values r_1a2b3c4d --set count=3 --set 'name="Ann"'
    """
    from deskpilot.pages.service import pull_values

    with _library(ctx) as lib:
        try:
            rule = lib.find(rule_id)
        except DeskpilotError as exc:
            fail(exc)
        if not isinstance(rule, Rule) or not rule.js:
            fail(f"{rule_id!r} is not a userscript rule")
        try:
            run_async(pull_values(ctx.settings, lib))
        except SystemExit:
            click.secho("deskpilot: values not read from the browser", fg="yellow", err=True)
        values = lib.values(rule_id)
        if sets or deletes or clear:
            new = {} if clear else dict(values)
            for item in sets:
                key, sep, text = item.partition("=")
                if not sep or not key:
                    fail(f"--set {item!r}: write KEY=JSON (e.g. count=3, name='\"Ann\"')")
                try:
                    new[key] = json.loads(text)
                except ValueError:
                    new[key] = text  # plain text, as a string
            for key in deletes:
                new.pop(key, None)
            lib.set_values(rule_id, new)
            values = new
    if as_json:
        click.echo(json.dumps(values, indent=2, ensure_ascii=False))
    elif not values:
        click.echo("(no values)")
    else:
        for key, value in values.items():
            click.echo(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    if sets or deletes or clear:
        _after_change(ctx)


@rules_group.group("cache")
def cache_group() -> None:
    """The files userscripts' @require and @resource lines name, kept so scripts run with
    no network. Fill it from files you have (add), or from the network once (fetch)."""


@cache_group.command("list")
@pass_context
def cache_list(ctx: Context) -> None:
    """Every cached file, and every file a script needs that is missing."""
    with _library(ctx) as lib:
        items = lib.resources()
        missing = _missing(lib)
    for res in items:
        click.echo(f"{res.url}  {len(res.body)} bytes, {res.mime or '?'} (from {res.source})")
    for url, who in missing.items():
        click.secho(f"missing: {url}  (needed by {', '.join(who)})", fg="yellow")
    if not items and not missing:
        click.echo("The cache is empty and no script needs a file.")


@cache_group.command("add")
@click.argument("url")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--mime", default=None, help="The file's type (default: from its name).")
@pass_context
def cache_add(ctx: Context, url: str, file: Path, mime: str | None) -> None:
    """Keep FILE as the contents of URL (a @require or @resource URL)."""
    from deskpilot.pages.resources import guess_mime, integrity_problem
    from deskpilot.pages.script_data import Resource, cache_key

    body = file.read_bytes()
    bad = integrity_problem(url, body)
    if bad:
        fail(f"{file} is not the file {url} names: {bad}")
    with _library(ctx) as lib:
        lib.put_resource(Resource(cache_key(url), body, mime or guess_mime(url), str(file)))
    click.echo(f"cached {cache_key(url)} ({len(body)} bytes from {file})")
    _after_change(ctx)


@cache_group.command("fetch")
@click.argument("urls", nargs=-1)
@pass_context
def cache_fetch(ctx: Context, urls: tuple[str, ...]) -> None:
    """Download URLs into the cache (none given: every file a script needs and the cache
    lacks)."""
    from deskpilot.pages.resources import download, integrity_problem

    with _library(ctx) as lib:
        wanted = list(urls) or list(_missing(lib))
        if not wanted:
            click.echo("nothing to fetch: every file the scripts need is cached")
            return
        failed = 0
        for n, url in enumerate(wanted, 1):
            click.echo(f"[{n}/{len(wanted)}] {url} … ", nl=False)
            got = download(url)
            if isinstance(got, str):
                click.secho(got, fg="red")
                failed += 1
                continue
            bad = integrity_problem(url, got.body)
            if bad:
                click.secho(f"refused: {bad}", fg="red")
                failed += 1
                continue
            lib.put_resource(got)
            click.echo(f"{len(got.body)} bytes")
    if len(wanted) > failed:
        _after_change(ctx)
    if failed:
        fail(f"{failed} of {len(wanted)} could not be fetched")


@cache_group.command("remove")
@click.argument("url")
@pass_context
def cache_remove(ctx: Context, url: str) -> None:
    """Forget a cached file."""
    with _library(ctx) as lib:
        if not lib.remove_resource(url):
            fail(f"{url} is not in the cache")
    click.echo(f"removed {url}")


def _missing(lib: Any) -> dict[str, list[str]]:
    from deskpilot.pages.resources import absolute, data_url
    from deskpilot.pages.script_data import cache_key
    from deskpilot.pages.userscript_meta import parse_meta

    out: dict[str, list[str]] = {}
    for _f, _g, rule in lib.chains():
        meta = parse_meta(rule.js or "") if rule.js else None
        if meta is None:
            continue
        base = lib.script_state(rule.id).base_url
        for url in [*meta.items("require"), *meta.resources.values()]:
            full = absolute(url, base)
            if data_url(full) is None and lib.resource(full) is None:
                out.setdefault(cache_key(full), []).append(rule.name)
    return out
