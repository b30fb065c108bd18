"""``deskpilot eval``: run task suites on real apps, prove them, report on runs."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from deskpilot.cli.common import Context, fail, pass_context
from deskpilot.config import Settings
from deskpilot.errors import ConfigError, DeskpilotError, EvalError
from deskpilot.eval.osworld_store import fetch_lines
from deskpilot.eval.osworld_store import missing as store_missing
from deskpilot.eval.report import brief, markdown
from deskpilot.eval.store import MANIFEST, latest_run
from deskpilot.eval.suite import Suite, broken_message, load_suite, packaged_suites
from deskpilot.eval.task import Task
from deskpilot.eval.validate import needed_apps

if TYPE_CHECKING:
    # the commands that run trials import these when they run: the policies bring the agent
    # and every provider with them, which `eval list`, `report` and `osworld` never use
    from deskpilot.eval.driver import Plan
    from deskpilot.eval.local import Backend
    from deskpilot.eval.policies import PolicySpec

#: programs an OSWorld task's commands find in its trial (deskpilot.eval.vm_shims)
VM_PROGRAMS = frozenset(
    {"python", "python3", "sudo", "google-chrome", "google-chrome-stable", "pkill", "killall"}
)

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
        click.option(
            "--tasks",
            metavar="GLOB[,GLOB]",
            default=None,
            help="Only tasks whose id matches (e.g. 'mousepad.*,web.signup').",
        ),
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(1, 256),
            default=None,
            help="Sandbox desktops at once (local; default 1), or at most this many "
            "Ray slots (default: every desktop the cluster offers).",
        ),
        click.option(
            "--backend",
            type=click.Choice(["local", "ray"]),
            default="local",
            show_default=True,
            help="local: this machine. ray: a Ray cluster "
            "(ray.init() honours RAY_ADDRESS; see --ray-address).",
        ),
        click.option(
            "--ray-address",
            metavar="ADDR",
            default=None,
            help="Ray cluster to join (HOST:6379, auto, ray://HOST:10001).",
        ),
        click.option(
            "--retry-infra",
            type=click.IntRange(0, 10),
            default=1,
            show_default=True,
            help="Retries of a trial that ended in an infrastructure error.",
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Print the summary as JSON on stdout (progress stays on stderr).",
        ),
        click.option(
            "--isolation",
            type=click.Choice(["bwrap", "none"]),
            default="bwrap",
            show_default=True,
            help="bwrap: each trial in its own namespaces (the "
            "host read-only, its own home and temp; bubblewrap). none: trials share "
            "the host's file system (only for machines without user namespaces).",
        ),
        click.option(
            "--skip-broken",
            is_flag=True,
            help="Run the tasks that load and list the task files that do not (the "
            "exit code is still non-zero). Default: refuse to start.",
        ),
    ]
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
    from deskpilot.eval.policies import PolicySpec

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


def _preflight(tasks: list[Task], settings: Settings) -> None:
    """Refuse to start when this machine lacks an app a task needs (also those its setup
    commands start), or a file of the OSWorld file store (local runs)."""
    missing: dict[str, list[str]] = {}
    for task in tasks:
        for app in needed_apps(task):
            if "/" not in app and app in VM_PROGRAMS and "osworld" in task.tags:
                continue  # provided in the trial (see deskpilot.eval.vm_shims)
            if app.startswith("./"):
                continue  # a script the task puts in its home first
            if shutil.which(app) is None and not (
                task.base_dir and (Path(task.base_dir) / app).is_file()
            ):
                missing.setdefault(app, []).append(task.id)
    if missing:
        lines = "; ".join(f"{app} (for {', '.join(ids[:3])})" for app, ids in missing.items())
        raise EvalError(
            f"not installed here: {lines} — install them (scripts/apt-packages.txt) or skip "
            "those tasks with --tasks"
        )
    urls = [u for t in tasks for u in t.downloads]
    absent = store_missing(settings.osworld_store, urls)
    if absent:
        raise EvalError(
            f"{len(absent)} file(s) the tasks download are not in the OSWorld file store "
            f"{settings.osworld_store} (e.g. {absent[0]}): list them with `deskpilot eval "
            "osworld fetch-list SUITE`, or set DESKPILOT_OSWORLD_STORE"
        )


def _backend(
    name: str, run: Path, jobs: int | None, settings: Settings, suite: Suite, address: str | None
) -> Backend:
    env = dict(settings.environ)
    if name == "ray":
        from deskpilot.eval.ray_backend import RayBackend

        return RayBackend(run, jobs, env, suite, address or settings.ray_address)
    from deskpilot.eval.local import LocalBackend

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
    from deskpilot.eval.driver import execute

    if backend == "local":
        _preflight(plan.tasks, settings)
        if plan.isolation == "bwrap":  # a machine that cannot isolate is said so at once
            from deskpilot.eval.isolation import isolation_command

            isolation_command(["true"], writable=[], readable=[])
    # stdout is for --json alone: what libraries print there (Ray's worker notices) goes to
    # stderr with the progress
    with contextlib.redirect_stdout(sys.stderr):
        back = _backend(backend, run, jobs, settings, plan.suite, address)
    try:
        with contextlib.redirect_stdout(sys.stderr), _interruptible():
            return execute(plan, run, back, resume=resume, progress=_progress)
    except KeyboardInterrupt:
        click.secho(
            f"deskpilot: interrupted: the trials running were stopped, those that "
            f"finished are kept (report: {run / 'summary.md'}); continue with --out "
            f"{run} --resume",
            fg="yellow",
            err=True,
        )
        sys.exit(130)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the run at once (KeyboardInterrupt in the driver, which ends
    the running trials and writes the report); a second signal during that teardown is
    ignored, so the teardown is not cut short in turn."""

    def stop(signum: int, _frame: object) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@eval_group.command("run", epilog=STATUS_HELP)
@click.argument("suite")
@click.option(
    "--model",
    metavar="PROVIDER:MODEL",
    default=None,
    help="The model under test: openai:, anthropic:, gemini:, compatible:, "
    "scripted:FILE (default: the configured model).",
)
@click.option(
    "--policy",
    type=click.Choice(["oracle", "noop"]),
    default=None,
    help="Instead of a model: each task's oracle, or doing nothing.",
)
@click.option("--base-url", metavar="URL", default=None, help="API endpoint (compatible:).")
@click.option(
    "--tool-protocol",
    type=click.Choice(["native", "text"]),
    default=None,
    help="native function calling (default) or the @@TOOL@@ text protocol.",
)
@click.option(
    "--trials", type=click.IntRange(1, 1000), default=1, show_default=True, help="Trials per task."
)
@_common
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"Run directory (default: {DEFAULT_ROOT}/SUITE-POLICY-TIME).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue the run in --out (default: the latest one): finished trials "
    "are kept, the others run.",
)
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
    isolation: str,
    skip_broken: bool,
    out: Path | None,
    resume: bool,
) -> None:
    """Run SUITE (a directory of task files, a task file, or a shipped suite's name).

    Each trial gets a fresh sandbox desktop; the agent reaches it only through deskpilot's
    tools. Writes RUN/summary.md and RUN/summary.json, one results.jsonl line per attempt,
    and each trial's files (its transcript: the audit-log run) under RUN/trials/.
    """
    from deskpilot.eval.driver import Plan

    settings = ctx.settings
    try:
        loaded = _load(suite, skip_broken)
        chosen = loaded.select(tasks)
        spec = _policy(settings, policy, model, base_url, tool_protocol)
        run = _out(out, resume, loaded, spec.label)
        plan = Plan(loaded, chosen, spec, trials, retry_infra, isolation)
        summary = _execute(
            settings, plan, run, backend=backend, jobs=jobs, address=ray_address, resume=resume
        )
    except DeskpilotError as exc:
        fail(exc)
    _finish(summary, run, as_json)
    if loaded.broken:
        _say_broken(loaded)
        sys.exit(1)


def _load(suite: str, skip_broken: bool) -> Suite:
    loaded = load_suite(suite, skip_broken=skip_broken)
    if loaded.broken:
        _say_broken(loaded)
    return loaded


def _say_broken(loaded: Suite) -> None:
    click.secho(
        broken_message(list(loaded.broken), len(loaded.broken) + len(loaded.tasks), True)
        + f"\n(skipped: {len(loaded.broken)} broken task file(s); the exit code says so)",
        fg="yellow",
        err=True,
    )


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
@click.option(
    "--trials",
    type=click.IntRange(1, 100),
    default=3,
    show_default=True,
    help="Trials per task and policy.",
)
@click.option(
    "--noop-trials",
    type=click.IntRange(1, 100),
    default=None,
    help="Trials of doing nothing per task (default: --trials). Doing nothing "
    "starts from the same state each time: one trial often proves it fails.",
)
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
    noop_trials: int | None,
    tasks: str | None,
    jobs: int | None,
    backend: str,
    ray_address: str | None,
    retry_infra: int,
    as_json: bool,
    isolation: str,
    skip_broken: bool,
    out: Path | None,
) -> None:
    """Prove SUITE: every task's oracle passes every trial and doing nothing fails every
    trial (a failed check, not an error). A task without an oracle cannot be proved: it is
    said so, and only doing nothing runs for it. Exit code 0 when every task is proved, 1 if
    not (or when a task file does not load)."""
    from deskpilot.eval.driver import Plan
    from deskpilot.eval.policies import PolicySpec

    settings = ctx.settings
    try:
        loaded = _load(suite, skip_broken)
        chosen = loaded.select(tasks)
        with_oracle = [t for t in chosen if t.oracle]
        root = out or DEFAULT_ROOT / f"check-{loaded.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        runs: dict[str, dict[str, Any]] = {"oracle": {"tasks": []}}
        for policy, todo in (("oracle", with_oracle), ("noop", chosen)):
            if not todo:
                continue
            n = trials if policy == "oracle" else (noop_trials or trials)
            plan = Plan(loaded, todo, PolicySpec(policy), n, retry_infra, isolation)  # type: ignore[arg-type]
            runs[policy] = _execute(
                settings,
                plan,
                root / policy,
                backend=backend,
                jobs=jobs,
                address=ray_address,
                resume=False,
            )
    except DeskpilotError as exc:
        fail(exc)
    no_oracle = [t.id for t in chosen if not t.oracle]
    verdict = prove(runs["oracle"], runs["noop"], no_oracle)
    for row in verdict["tasks"]:
        mark = "✓" if row["proved"] else "✗"
        oracle = "no oracle (cannot be proved)" if row["no_oracle"] else " ".join(row["oracle"])
        click.echo(
            f"{mark} {row['id']:<32} oracle {oracle}  ·  noop {' '.join(row['noop'])}", err=True
        )
    bad = [r["id"] for r in verdict["tasks"] if not r["proved"]]
    click.echo(
        f"{len(verdict['tasks']) - len(bad)}/{len(verdict['tasks'])} tasks proved · runs in {root}",
        err=True,
    )
    if loaded.broken:
        _say_broken(loaded)
        verdict["broken"] = [str(b.path) for b in loaded.broken]
    if as_json:
        click.echo(json.dumps(verdict, indent=2))
    sys.exit(0 if not bad and not loaded.broken else 1)


def prove(oracle: dict[str, Any], noop: dict[str, Any], no_oracle: list[str]) -> dict[str, Any]:
    """Per task: proved when the oracle passed every trial and noop failed every trial; a
    task without an oracle is not proved (its oracle statuses are empty)."""
    rows = []
    oracle_by_id = {t["id"]: t for t in oracle["tasks"]}
    for n in noop["tasks"]:
        t = oracle_by_id.get(n["id"])
        proved = (
            t is not None
            and t["done"] == t["trials"]
            and all(s == "passed" for s in t["statuses"])
            and n["done"] == n["trials"]
            and all(s == "failed" for s in n["statuses"])
        )
        rows.append(
            {
                "id": n["id"],
                "oracle": t["statuses"] if t else [],
                "noop": n["statuses"],
                "proved": proved,
                "no_oracle": n["id"] in no_oracle,
            }
        )
    return {"proved": all(r["proved"] for r in rows), "tasks": rows}


@eval_group.command("report")
@click.argument("run", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="The summary as JSON.")
def report_command(run: Path, as_json: bool) -> None:
    """Rebuild and print the report of RUN (a run directory)."""
    if not (run / MANIFEST).is_file():
        fail(EvalError(f"{run} is not a run directory (no {MANIFEST})"))
    from deskpilot.eval.driver import write_report

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
        loaded = load_suite(suite, skip_broken=True)
    except DeskpilotError as exc:
        fail(exc)
    for task in loaded.tasks:
        oracle = f"{len(task.oracle)} oracle steps" if task.oracle else "no oracle"
        click.echo(f"{task.id:<32} [{task.family}; {oracle}] {task.goal}")
    if loaded.broken:
        _say_broken(loaded)


@eval_group.group("osworld")
def osworld_group() -> None:
    """OSWorld task files: the files they download, and which of them load here.

    \b
    OSWorld tasks download their documents and gold files from the web; trials run offline
    and read them from a local file store (DESKPILOT_OSWORLD_STORE, or osworld_store in the
    config file; default DATA_DIR/osworld-files), a directory keyed by URL:
      deskpilot eval osworld fetch-list ./osworld/examples --script | sh   # fill it once
      deskpilot eval ./osworld/examples --policy noop --skip-broken        # then run
    """


@osworld_group.command("fetch-list")
@click.argument("suite")
@click.option("--all", "show_all", is_flag=True, help="Every file, also those already there.")
@click.option("--script", is_flag=True, help="Print curl commands that fill the store.")
@pass_context
def fetch_list_command(ctx: Context, suite: str, show_all: bool, script: bool) -> None:
    """Print the URLs SUITE's tasks download and where each goes in the file store
    (``URL<TAB>PATH``), the missing ones only unless --all. Broken task files are skipped
    (their URLs are not listed)."""
    try:
        loaded = load_suite(suite, skip_broken=True)
    except DeskpilotError as exc:
        fail(exc)
    store = ctx.settings.osworld_store
    urls = list(dict.fromkeys(u for t in loaded.tasks for u in t.downloads))
    chosen = urls if show_all else store_missing(store, urls)
    for line in fetch_lines(store, chosen, script=script):
        click.echo(line)
    click.echo(
        f"{len(chosen)} of {len(urls)} file(s) listed · store {store}"
        + (f" · {len(loaded.broken)} task file(s) do not load" if loaded.broken else ""),
        err=True,
    )


@osworld_group.command("survey")
@click.argument("suite")
@click.option("--json", "as_json", is_flag=True, help="The figures as JSON.")
def survey_command(suite: str, as_json: bool) -> None:
    """Which task files of SUITE load, why the others do not (counted by reason), and which
    programs the loaded ones need that this machine lacks."""
    try:
        loaded = load_suite(suite, skip_broken=True)
    except DeskpilotError as exc:
        fail(exc)
    from deskpilot.eval.survey import survey

    figures = survey(loaded)
    if as_json:
        click.echo(json.dumps(figures, indent=2))
        return
    total = figures["files"]
    click.echo(f"{figures['loaded']} of {total} task files load")
    for reason, count in figures["reasons"].items():
        click.echo(f"  {count:>4}  {reason}")
    runnable = figures["runnable"]
    click.echo(f"{runnable} of the loaded tasks have every program they need here")
    for app, count in figures["missing_apps"].items():
        click.echo(f"  {count:>4}  need {app}")


COMMANDS: list[click.Command] = [eval_group]
