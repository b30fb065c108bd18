"""``deskpilot log``: list, show, verify and export the runs in the audit log."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from deskpilot.agent.chips import ChipPrinter, JsonlPrinter, clean, clip
from deskpilot.audit import AuditLog
from deskpilot.cli.common import Context, fail, pass_context
from deskpilot.errors import AuditError


def _open(ctx: Context) -> AuditLog:
    path = ctx.settings.audit_db
    if not path.exists():
        fail(
            f"no audit log yet at {path}: it is written by `deskpilot run` and `deskpilot chat`.",
            code=1,
        )
    try:
        return AuditLog(path)
    except AuditError as exc:
        fail(exc)
        raise  # unreachable


def _resolve(log: AuditLog, ref: str) -> str:
    try:
        return log.resolve_run(ref)
    except AuditError as exc:
        fail(exc)
        raise  # unreachable


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@click.group("log")
def log_group() -> None:
    """The audit log: every run's events, hash-chained, under the XDG data dir.

    \b
      deskpilot log list                  runs, newest first
      deskpilot log show 3f2a             one run as chips (id prefix, or 'last')
      deskpilot log verify                check the hash chain and every screenshot
      deskpilot log export last --markdown -o run.md
    """


@log_group.command("list")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Show at most this many runs.",
)
@pass_context
def list_cmd(ctx: Context, limit: int) -> None:
    """List recorded runs, newest first."""
    path = ctx.settings.audit_db
    if not path.exists():
        click.echo(f"No audit log yet at {path}: runs appear here after `deskpilot run`.")
        return
    with _open(ctx) as log:
        runs = log.list_runs(limit)
    if not runs:
        click.echo(f"The audit log at {path} has no runs yet.")
        return
    console = Console(highlight=False)
    wide = console.width >= 120  # the model column only where the goal still has room
    names = ("run", "started", "outcome", "events", *(("model",) if wide else ()), "goal")
    rows = [
        (
            run.id[:12],
            _when(run.started),
            clean(run.outcome or "unfinished"),
            str(run.events),
            *((clip(clean(run.model), 28),) if wide else ()),
            clean(run.goal),
        )
        for run in runs
    ]
    used = sum(max(len(n), *(len(r[i]) for r in rows)) + 2 for i, n in enumerate(names[:-1]))
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name in names:
        table.add_column(name, no_wrap=True)
    for row in rows:
        table.add_row(*row[:-1], clip(row[-1], max(12, console.width - used)))
    console.print(table)


@log_group.command("show")
@click.argument("run", default="last")
@click.option(
    "--events",
    "fmt",
    type=click.Choice(["chips", "jsonl"]),
    default="chips",
    show_default=True,
    help="Print chips, or one JSON object per event.",
)
@pass_context
def show_cmd(ctx: Context, run: str, fmt: str) -> None:
    """Replay a run's events as chips.

    RUN is a run id, a unique prefix of one, or 'last' (the default).
    """
    with _open(ctx) as log:
        run_id = _resolve(log, run)
        events = log.run_events(run_id)
    sink = ChipPrinter(Console(highlight=False)) if fmt == "chips" else JsonlPrinter(sys.stdout)
    for event in events:
        sink(event)


@log_group.command("verify")
@pass_context
def verify_cmd(ctx: Context) -> None:
    """Check the hash chain and every screenshot's hash.

    Exits 0 if every row and screenshot is intact, 1 (naming each broken row) if any was edited,
    reordered, inserted or deleted, or if there is no log. Keep the printed head hash elsewhere
    to detect a log rewritten from scratch.
    """
    with _open(ctx) as log:
        try:
            report = log.verify()
        except AuditError as exc:
            fail(exc)
    path = ctx.settings.audit_db
    if report.ok:
        click.secho(
            f"✓ audit log OK: {report.events} events in {report.runs} runs, "
            f"{report.blobs} blobs ({path})",
            fg="green",
        )
        click.echo(f"  head #{report.head_seq} {report.head_hash}")
        return
    click.secho(
        f"✗ audit log BROKEN ({path}): {len(report.problems)} problem(s)", fg="red", err=True
    )
    for problem in report.problems[:50]:
        click.echo(f"  {problem}", err=True)
    if len(report.problems) > 50:
        click.echo(f"  … and {len(report.problems) - 50} more", err=True)
    sys.exit(1)


@log_group.command("export")
@click.argument("run", default="last")
@click.option(
    "--markdown",
    "markdown",
    is_flag=True,
    default=True,
    help="Export as Markdown (the only format; the default).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to FILE; screenshots are saved next to it as images and linked. "
    "Without it the trace goes to stdout, without screenshots.",
)
@pass_context
def export_cmd(ctx: Context, run: str, markdown: bool, output: Path | None) -> None:
    """Export a run as a readable Markdown trace.

    RUN is a run id, a unique prefix of one, or 'last' (the default). The trace holds the goal,
    the model's text, each tool call with its arguments, confirmations and results.
    """
    with _open(ctx) as log:
        run_id = _resolve(log, run)
        try:
            text = log.export_markdown(run_id, output.parent if output else None)
        except AuditError as exc:
            fail(exc)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}")
    click.echo(f"wrote {output}", err=True)


COMMANDS: list[click.Command] = [log_group]
