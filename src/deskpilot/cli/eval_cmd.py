"""``deskpilot eval``: run task suites on real apps, prove them, report on runs."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from deskpilot.cli.common import Context, fail, pass_context
from deskpilot.config import Settings
from deskpilot.errors import ConfigError, DeskpilotError, EvalError
from deskpilot.eval.driver import Plan, execute, write_report
from deskpilot.eval.local import Backend, LocalBackend
from deskpilot.eval.policies import PolicySpec
from deskpilot.eval.report import brief, markdown
from deskpilot.eval.store import MANIFEST, latest_run
from deskpilot.eval.suite import Suite, load_suite, packaged_suites
from deskpilot.eval.task import Task

DEFAULT_ROOT = Path("deskpilot-eval")

STATUS_HELP = """\b
Statuses (one per trial):
  passed / failed  the checks held / did not hold on the end state
  timeout          the agent's time ran out (checked anyway: passed_late)
  setup_error      the task's setup failed: the agent never started
  checker_error    a checker could not read the state (a task bug)
  infra_error      the sandbox, a Ray worker or the provider failed; retried
Success rate = passed / (passed + failed + timeout), with a Wilson 95% interval.
"""


class EvalGroup(click.Group):
    """``deskpilot eval SUITE …`` means ``deskpilot eval run SUITE …``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("eval", cls=EvalGroup)
def eval_group() -> None:
    """Measure whether a model gets tasks done: task suites on real apps, each trial on a
    fresh sandbox desktop, checked through channels the agent's tools do not use.

    \b
      deskpilot eval starter --policy oracle -j 2        # the suite shipped with deskpilot
      deskpilot eval starter --model anthropic:claude-sonnet-4-5 --trials 3
      deskpilot eval ./my-tasks --model compatible:qwen --base-url http://127.0.0.1:8000/v1 \\
          --tool-protocol text --tasks 'web.*'
      deskpilot eval check starter                       # oracle passes 3/3, noop fails 3/3
      deskpilot eval report deskpilot-eval/RUN           # the report of a run, again
      deskpilot eval list starter                        # its tasks and goals
    """


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--tasks", metavar="GLOB[,GLOB]", default=None,
                     help="Only tasks whose id matches (e.g. 'mousepad.*,web.signup')."),
        click.option("-j", "--jobs", type=click.IntRange(1, 256), default=None,
                     help="Sandbox desktops at once (local; default 1), or at most this many "
                     "Ray slots (default: every desktop the cluster offers)."),
        click.option("--backend", type=click.Choice(["local", "ray"]), default="local",
                     show_default=True, help="local: this machine. ray: a Ray cluster "
                     "(ray.init() honours RAY_ADDRESS; see --ray-address)."),
        click.option("--ray-address", metavar="ADDR", default=None,
                     help="Ray cluster to join (HOST:6379, auto, ray://HOST:10001)."),
        click.option("--retry-infra", type=click.IntRange(0, 10), default=1, show_default=True,
                     help="Retries of a trial that ended in an infrastructure error."),
        click.option("--json", "as_json", is_flag=True,
                     help="Print the summary as JSON on stdout (progress stays on stderr)."),
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func


def _policy(
    settings: Settings,
    policy: str | None,
    model: str | None,
    base_url: str | None,
    protocol: str | None,
) -> PolicySpec:
    if policy and model:
        raise ConfigError("--policy and --model exclude each other")
    if policy:
        return PolicySpec(policy)  # type: ignore[arg-type]
    spec = model or settings.model
    if not spec:
        raise ConfigError(
            "who should do the tasks? --model PROVIDER:MODEL (any provider, scripted:FILE), "
            "or --policy oracle|noop to check the suite itself"
        )
    from deskpilot.agent.providers import get_provider

    get_provider(spec, settings, base_url=base_url)  # a missing key fails now, not per trial
    return PolicySpec("model", spec, base_url, protocol)  # type: ignore[arg-type]


def _preflight(tasks: list[Task]) -> None:
    """Refuse to start when this machine lacks an app a task needs (local runs)."""
    missing: dict[str, list[str]] = {}
    for task in tasks:
        for app in task.apps:
            if shutil.which(app) is None:
                missing.setdefault(app, []).append(task.id)
    if missing:
        lines = "; ".join(f"{app} (for {', '.join(ids[:3])})" for app, ids in missing.items())
        raise EvalError(
            f"not installed here: {lines} — install them (scripts/apt-packages.txt) or skip "
            "those tasks with --tasks"
        )


def _backend(
    name: str, run: Path, jobs: int | None, settings: Settings, suite: Suite, address: str | None
) -> Backend:
    env = dict(settings.environ)
    if name == "ray":
        from deskpilot.eval.ray_backend import RayBackend

        return RayBackend(run, jobs, env, suite, address or settings.ray_address)
    return LocalBackend(run, jobs or 1, env)


def _out(out: Path | None, resume: bool, suite: Suite, label: str) -> Path:
    if out is not None:
        return out
    if resume:
        found = latest_run(DEFAULT_ROOT)
        if found is None:
            raise EvalError(f"nothing to resume: no run in {DEFAULT_ROOT}/ (give --out RUN)")
        return found
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in label)
    return DEFAULT_ROOT / f"{suite.name}-{safe}-{stamp}"


def _progress(line: str) -> None:
    click.echo(line, err=True)


def _execute(
    settings: Settings,
    plan: Plan,
    run: Path,
    *,
    backend: str,
    jobs: int | None,
    address: str | None,
    resume: bool,
) -> dict[str, Any]:
    if backend == "local":
        _preflight(plan.tasks)
    # stdout is for --json alone: what libraries print there (Ray's worker notices) goes to
    # stderr with the progress
    with contextlib.redirect_stdout(sys.stderr):
        back = _backend(backend, run, jobs, settings, plan.suite, address)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return execute(plan, run, back, resume=resume, progress=_progress)
    except KeyboardInterrupt:
        click.secho(f"deskpilot: interrupted; continue with --out {run} --resume", fg="yellow",
                    err=True)  # fmt: skip
        sys.exit(130)


@eval_group.command("run", epilog=STATUS_HELP)
@click.argument("suite")
@click.option("--model", metavar="PROVIDER:MODEL", default=None,
              help="The model under test: openai:, anthropic:, gemini:, compatible:, "
              "scripted:FILE (default: the configured model).")  # fmt: skip
@click.option("--policy", type=click.Choice(["oracle", "noop"]), default=None,
              help="Instead of a model: each task's oracle, or doing nothing.")  # fmt: skip
@click.option("--base-url", metavar="URL", default=None, help="API endpoint (compatible:).")
@click.option("--tool-protocol", type=click.Choice(["native", "text"]), default=None,
              help="native function calling (default) or the @@TOOL@@ text protocol.")  # fmt: skip
@click.option("--trials", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="Trials per task.")  # fmt: skip
@_common
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=f"Run directory (default: {DEFAULT_ROOT}/SUITE-POLICY-TIME).")  # fmt: skip
@click.option("--resume", is_flag=True,
              help="Continue the run in --out (default: the latest one): finished trials "
              "are kept, the others run.")  # fmt: skip
@pass_context
def run_command(
    ctx: Context,
    suite: str,
    model: str | None,
    policy: str | None,
    base_url: str | None,
    tool_protocol: str | None,
    trials: int,
    tasks: str | None,
    jobs: int | None,
    backend: str,
    ray_address: str | None,
    retry_infra: int,
    as_json: bool,
    out: Path | None,
    resume: bool,
) -> None:
    """Run SUITE (a directory of task files, a task file, or a shipped suite's name).

    Each trial gets a fresh sandbox desktop; the agent reaches it only through deskpilot's
    tools. Writes RUN/summary.md and RUN/summary.json, one results.jsonl line per attempt,
    and each trial's files (its transcript: the audit-log run) under RUN/trials/.
    """
    settings = ctx.settings
    try:
        loaded = load_suite(suite)
        chosen = loaded.select(tasks)
        spec = _policy(settings, policy, model, base_url, tool_protocol)
        run = _out(out, resume, loaded, spec.label)
        plan = Plan(loaded, chosen, spec, trials, retry_infra)
        summary = _execute(settings, plan, run, backend=backend, jobs=jobs,
                           address=ray_address, resume=resume)  # fmt: skip
    except DeskpilotError as exc:
        fail(exc)
    _finish(summary, run, as_json)


def _finish(summary: dict[str, Any], run: Path, as_json: bool) -> None:
    o = summary["overall"]
    rate = "–" if o["rate"] is None else f"{100 * o['rate']:.0f}%"
    click.echo(
        f"{o['passed']}/{o['scored']} passed ({rate}) · report: {run / 'summary.md'}", err=True
    )
    if as_json:
        click.echo(json.dumps(brief(summary), indent=2))


@eval_group.command("check", epilog=STATUS_HELP)
@click.argument("suite")
@click.option("--trials", type=click.IntRange(1, 100), default=3, show_default=True,
              help="Trials per task and policy.")  # fmt: skip
@_common
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"Where its two runs go (default: {DEFAULT_ROOT}/check-SUITE-TIME).",
)
@pass_context
def check_command(
    ctx: Context,
    suite: str,
    trials: int,
    tasks: str | None,
    jobs: int | None,
    backend: str,
    ray_address: str | None,
    retry_infra: int,
    as_json: bool,
    out: Path | None,
) -> None:
    """Prove SUITE: every task's oracle passes every trial and doing nothing fails every
    trial (a failed check, not an error). Exit code 0 when every task is proved, 1 if not."""
    settings = ctx.settings
    try:
        loaded = load_suite(suite)
        chosen = loaded.select(tasks)
        no_oracle = [t.id for t in chosen if not t.oracle]
        root = out or DEFAULT_ROOT / f"check-{loaded.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        runs = {}
        for policy in ("oracle", "noop"):
            plan = Plan(loaded, chosen, PolicySpec(policy), trials, retry_infra)
            runs[policy] = _execute(settings, plan, root / policy, backend=backend, jobs=jobs,
                                    address=ray_address, resume=False)  # fmt: skip
    except DeskpilotError as exc:
        fail(exc)
    verdict = prove(runs["oracle"], runs["noop"], no_oracle)
    for row in verdict["tasks"]:
        mark = "✓" if row["proved"] else "✗"
        click.echo(
            f"{mark} {row['id']:<32} oracle {' '.join(row['oracle'])}  ·  noop "
            f"{' '.join(row['noop'])}",
            err=True,
        )
    bad = [r["id"] for r in verdict["tasks"] if not r["proved"]]
    click.echo(
        f"{len(verdict['tasks']) - len(bad)}/{len(verdict['tasks'])} tasks proved · runs in {root}",
        err=True,
    )
    if as_json:
        click.echo(json.dumps(verdict, indent=2))
    sys.exit(0 if not bad else 1)


def prove(oracle: dict[str, Any], noop: dict[str, Any], no_oracle: list[str]) -> dict[str, Any]:
    """Per task: proved when the oracle passed every trial and noop failed every trial."""
    rows = []
    noop_by_id = {t["id"]: t for t in noop["tasks"]}
    for t in oracle["tasks"]:
        n = noop_by_id[t["id"]]
        proved = (
            t["id"] not in no_oracle
            and t["done"] == t["trials"]
            and all(s == "passed" for s in t["statuses"])
            and n["done"] == n["trials"]
            and all(s == "failed" for s in n["statuses"])
        )
        rows.append(
            {"id": t["id"], "oracle": t["statuses"], "noop": n["statuses"], "proved": proved,
             "no_oracle": t["id"] in no_oracle}
        )  # fmt: skip
    return {"proved": all(r["proved"] for r in rows), "tasks": rows}


@eval_group.command("report")
@click.argument("run", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="The summary as JSON.")
def report_command(run: Path, as_json: bool) -> None:
    """Rebuild and print the report of RUN (a run directory)."""
    if not (run / MANIFEST).is_file():
        fail(EvalError(f"{run} is not a run directory (no {MANIFEST})"))
    summary = write_report(run)
    click.echo(json.dumps(brief(summary), indent=2) if as_json else markdown(summary))


@eval_group.command("list")
@click.argument("suite", required=False)
def list_command(suite: str | None) -> None:
    """The suites shipped with deskpilot, or SUITE's tasks with their goals."""
    if suite is None:
        for name, path in packaged_suites().items():
            count = len(load_suite(path).tasks)
            click.echo(f"{name:<16} {count} tasks  ({path})")
        return
    try:
        loaded = load_suite(suite)
    except DeskpilotError as exc:
        fail(exc)
    for task in loaded.tasks:
        oracle = f"{len(task.oracle)} oracle steps" if task.oracle else "no oracle"
        click.echo(f"{task.id:<32} [{task.family}; {oracle}] {task.goal}")


COMMANDS: list[click.Command] = [eval_group]
