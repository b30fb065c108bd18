"""``deskpilot blocklist list|add|remove|reset``: which apps deskpilot refuses to touch.

Entries live in the config file's ``[blocklist]`` table (``add`` and ``remove`` lists on top of
the built-in defaults); this command edits that table and leaves the rest of the file alone.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import click

from deskpilot.cli.common import Context, fail, pass_context
from deskpilot.tools.blocklist import DEFAULT_BLOCKLIST, Blocklist, default_group

_TABLE = re.compile(r"(?ms)^\[blocklist\][^\n]*\n.*?(?=^\[|\Z)")


def _read(path: Path) -> tuple[str, list[str], list[str]]:
    text = path.read_text() if path.exists() else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        fail(f"config file {path} is not valid TOML ({exc}); fix it before editing the blocklist")
    table = data.get("blocklist", {})
    return text, list(table.get("add", [])), list(table.get("remove", []))


def _write(path: Path, text: str, add: list[str], remove: list[str]) -> None:
    text = _TABLE.sub("", text).rstrip("\n")
    if add or remove:
        table = "[blocklist]\n"
        table += f"add = {json.dumps(add, ensure_ascii=False)}\n"
        table += f"remove = {json.dumps(remove, ensure_ascii=False)}\n"
        text = f"{text}\n\n{table}" if text else table
    try:  # the new file must parse and say exactly this (an inline `blocklist = {…}` would not)
        written = tomllib.loads(text).get("blocklist", {})
    except tomllib.TOMLDecodeError:
        written = None
    if (add or remove) and written != {"add": add, "remove": remove}:
        fail(
            f"cannot update the blocklist in {path} automatically (it is written in a form this "
            "command does not edit); edit its [blocklist] table by hand — nothing was changed"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text + ("\n" if text and not text.endswith("\n") else ""))
    tmp.replace(path)


@click.group("blocklist")
def blocklist_group() -> None:
    """Apps deskpilot will not open, read or control (password managers by default).

    An entry matches an app by desktop id, WM_CLASS, executable or name (case-insensitive).

    \b
    deskpilot blocklist list
    deskpilot blocklist add org.gnome.Settings
    deskpilot blocklist remove keepassxc      # allow a default entry
    deskpilot blocklist reset                 # back to the defaults
    """


@blocklist_group.command("list")
@pass_context
def list_cmd(ctx: Context) -> None:
    """Show the entries in effect (defaults, added, removed)."""
    settings = ctx.settings
    entries = Blocklist.from_settings(settings).entries
    removed = {r.casefold() for r in settings.blocklist_remove}
    for entry in entries:
        origin = "default" if entry in DEFAULT_BLOCKLIST else "added"
        click.echo(f"{entry}  ({origin})")
    for entry in DEFAULT_BLOCKLIST:
        if entry.casefold() in removed:
            click.echo(click.style(f"{entry}  (default, removed)", dim=True))
    click.echo(f"-- {len(entries)} entries; config: {settings.user_config_file}", err=True)


@blocklist_group.command("add")
@click.argument("entries", nargs=-1, required=True)
@pass_context
def add_cmd(ctx: Context, entries: tuple[str, ...]) -> None:
    """Block apps (desktop id, WM_CLASS, executable or name)."""
    path = ctx.settings.user_config_file
    text, add, remove = _read(path)
    for entry in (e.strip() for e in entries):
        if not entry:
            fail("an empty entry cannot be blocked")
        remove = [r for r in remove if r.casefold() != entry.casefold()]
        if entry.casefold() not in {a.casefold() for a in add} and entry not in DEFAULT_BLOCKLIST:
            add.append(entry)
    _write(path, text, add, remove)
    click.echo(f"blocked: {', '.join(entries)}")


@blocklist_group.command("remove")
@click.argument("entries", nargs=-1, required=True)
@pass_context
def remove_cmd(ctx: Context, entries: tuple[str, ...]) -> None:
    """Allow apps again (also default entries)."""
    path = ctx.settings.user_config_file
    text, add, remove = _read(path)
    known = {e.casefold() for e in (*Blocklist.from_settings(ctx.settings).entries, *remove)}
    for entry in (e.strip() for e in entries):
        if entry.casefold() not in known:
            fail(f"{entry!r} is not on the blocklist (see `deskpilot blocklist list`)")
        add = [a for a in add if a.casefold() != entry.casefold()]
        already = {r.casefold() for r in remove}
        remove += [d for d in default_group(entry) if d.casefold() not in already]
    _write(path, text, add, remove)
    click.echo(f"allowed: {', '.join(entries)}")


@blocklist_group.command("reset")
@pass_context
def reset_cmd(ctx: Context) -> None:
    """Restore the default blocklist (drop every addition and removal)."""
    path = ctx.settings.user_config_file
    text, _add, _remove = _read(path)
    _write(path, text, [], [])
    click.echo(f"blocklist reset to the {len(DEFAULT_BLOCKLIST)} default entries")


COMMANDS: list[click.Command] = [blocklist_group]
