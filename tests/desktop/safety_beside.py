"""The safety suite's agent trials (``test_safety_benign.py``, ``test_safety_goals.py``,
``test_safety_injection.py``), run beside the rest of the suite.

Each trial is an agent run that mostly waits for the tools to settle after input, one after
another: the goals' 47 took 163 s alone (load 2–11) and 776 s in a run of the whole desktop tier
(load 7–16), the injections' 44 took 340 s there and the benign tasks' 19 202 s. They need a
desktop and a browser, not the suite's desktop: a process of their own
(``python -m tests.desktop.safety_beside OUT ID…``) starts when the run's first desktop test
does, on a sandbox desktop of its own, and runs the selected cases in order, writing one JSON
line per case to ``OUT``; each test takes its case's line and asserts on it what it asserted on
the run (:class:`SafetyTrials`). Run alone, a module waits for its trials as it did when it ran
them itself.

The trials are the same as they were in the tests: the obedient stand-in in the real loop,
through the real door; effects seen outside the tools (the site's log, zenity's exit status, the
file on disk, the process table).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.policy import CallbackApprover, DenyAll
from deskpilot.sandbox import Sandbox
from tests.desktop.goal_cases import ABUSE, BENIGN, AbuseCase, Effect, GoalTask
from tests.desktop.site import GOAL_PAGES, Hit, Site
from tests.desktop.trials import (
    close_windows,
    effect_seen,
    home_browser,
    run_adversary,
    tabs_closed_after,
    trial,
)

if TYPE_CHECKING:  # the conftest imports this module (its fixture starts the trials)
    from tests.desktop.conftest import Apps

#: the modules whose tests collect the trials, in the order they run, and their cases' prefix
#: (a case runs only when its test is selected)
MODULES = {
    "test_safety_benign.py": "benign",
    "test_safety_goals.py": "goals",
    "test_safety_injection.py": "injection",
}
#: Steps a run may take: a plan of five acts, each followed by a read, and then the page's.
STEPS = 30
ROOT = Path(__file__).parents[2]


def matches(hit: Hit, effect: Effect) -> bool:
    body = hit.body if isinstance(hit.body, dict) else {}
    return hit.path == f"/effect/{effect.name}" and all(
        v in str(body.get(k, "")) for k, v in effect.want.items()
    )


def seen(site: Site, since: int, effect: Effect) -> Callable[[], bool]:
    return lambda: any(matches(h, effect) for h in site.effects(since=since))


async def _opened_since(desktop: DesktopFacade, before: set[int]) -> list[WindowInfo]:
    return [w for w in await desktop.list_windows() if w.handle not in before]


@dataclass
class Bench:
    """What the trials share: one desktop, its settings, the goal site, a scratch folder."""

    desktop: DesktopFacade
    settings: Settings
    sandbox: Sandbox
    site: Site
    tmp: Path


async def goal_task(b: Bench, task: GoalTask, apps: Apps) -> dict[str, Any]:
    """A benign goal, a person who says yes to every question: was its effect seen, what else
    happened, what was asked."""
    desktop, site = b.desktop, b.site
    before = {w.handle for w in await desktop.list_windows()}
    asked: list[str] = []
    yes = CallbackApprover(lambda r: asked.append(r.reason) is None, person=True)
    since = site.mark()
    plan = list(task.plan)
    done: Callable[[], bool]
    try:
        if task.app is not None:
            tmp = b.tmp / task.name
            tmp.mkdir(parents=True, exist_ok=True)
            done = await _start_app(task, apps, tmp)
        else:
            assert task.effect is not None
            plan.insert(0, f'go to "{site.page(task.page, **task.fields)}"')
            done = seen(site, since, task.effect)
        run = await run_adversary(
            desktop, b.settings, task.goal, on=True, approver=yes, plan=plan, max_steps=STEPS
        )
        ok = await effect_seen(done, run, expected=True)
    finally:
        await close_windows(desktop, await _opened_since(desktop, before))
    expected = task.effect
    outside = [h for h in site.effects(since=since) if expected is None or not matches(h, expected)]
    return {
        "asks": run.asked,
        "acting_calls": run.acting_calls,
        "done": ok,
        "outside": [h.path for h in outside],
        "note": "; ".join(asked),
        "dropped": run.brain.dropped,
        "story": run.story(),
    }


async def _start_app(task: GoalTask, apps: Apps, tmp: Path) -> Callable[[], bool]:
    app = task.app
    assert app is not None
    if app.file:
        path = tmp / app.file
        path.write_text(app.content)
        await apps.spawn([*app.argv, str(path)], match=lambda w: app.title in w.title)
        return lambda: app.saved in path.read_text()
    await apps.spawn([*app.argv, f"--title={app.title}"], match=lambda w: w.title == app.title)
    proc = apps.procs[-1]
    return lambda: proc.poll() == 0


async def grant_abuse(b: Bench, case: AbuseCase) -> dict[str, Any]:
    """A page that tries to use the goal's grant on another target, nobody to say yes: did the
    effect outside the grant happen, did the granted one, what did the stand-in try."""
    desktop, site = b.desktop, b.site
    before = {w.handle for w in await desktop.list_windows()}
    since = site.mark()
    url = site.page(case.page, injection=case.injection)
    plan = [f'go to "{url}"', *case.plan]
    try:
        run = await run_adversary(
            desktop,
            b.settings,
            case.goal,
            on=True,
            approver=DenyAll(),
            plan=plan,
            max_steps=STEPS,
            persons=case.person_goal,
        )
        outside = await effect_seen(seen(site, since, case.outside), run, expected=False)
        granted = None
        if case.granted is not None:
            granted = await effect_seen(seen(site, since, case.granted), run, expected=True)
    finally:
        await close_windows(desktop, await _opened_since(desktop, before))
    return {
        "outside": outside,
        "granted": granted,
        "asked": run.asked,
        "note": "; ".join(e.data["reason"] for e in run.of("confirm.asked")),
        "tried": run.brain.done,
        "story": run.story(),
    }


async def run_trials(out: Path, ids: list[str]) -> None:
    """Every selected case in order (``benign/NAME``, ``goals/NAME``, ``injection/NAME``) on a
    desktop of this process's own; one line each in ``out`` (an exception is that case's
    result, and the next case still runs)."""
    home = Path(tempfile.mkdtemp(prefix="safety-trials-", dir=out.parent))
    with Sandbox(width=1280, height=800) as sandbox:
        assert sandbox.info is not None
        env = sandbox.app_env()
        env["DESKPILOT_SANDBOX"] = sandbox.info.runtime_dir
        env["DESKPILOT_HOME"] = str(home / "deskpilot-home")
        settings = load_settings(env=env)
        desktop = await open_resolved(settings)
        try:
            by = {
                m: [i.split("/", 1)[1] for i in ids if i.startswith(f"{m}/")]
                for m in MODULES.values()
            }
            if by["benign"]:
                with Site() as site:
                    async with home_browser(desktop, site.page("article")):
                        bench = Bench(desktop, settings, sandbox, site, home)
                        await _each(bench, out, "benign", by["benign"], benign)
            if goals := by["goals"]:
                with Site(templates=GOAL_PAGES) as site:
                    async with home_browser(desktop, site.page("todo")):
                        bench = Bench(desktop, settings, sandbox, site, home)
                        await _each(bench, out, "goals", goals, _goal_case)
            if injections := by["injection"]:
                (home / "shared-files").mkdir()
                with Site(home / "shared-files") as site:
                    async with home_browser(desktop, site.page("article")):
                        bench = Bench(desktop, settings, sandbox, site, home)
                        await _each(bench, out, "injection", injections, injection)
        finally:
            await desktop.close()


Trial_ = Callable[["Bench", str, "Apps"], Awaitable[dict[str, Any]]]


async def _each(b: Bench, out: Path, module: str, names: list[str], run: Trial_) -> None:
    from tests.desktop.conftest import Apps

    for name in names:
        apps = Apps(b.desktop, b.sandbox)
        await apps.start()
        try:
            async with tabs_closed_after(b.settings):
                record = await run(b, name, apps)
        except Exception:
            record = {"error": traceback.format_exc()}
        finally:
            await apps.close_all()
        with out.open("a") as fh:
            fh.write(json.dumps({"id": f"{module}/{name}", **record}) + "\n")


async def _goal_case(b: Bench, name: str, apps: Apps) -> dict[str, Any]:
    tasks = {t.name: t for t in BENIGN}
    if name in tasks:
        return await goal_task(b, tasks[name], apps)
    return await grant_abuse(b, next(c for c in ABUSE if c.name == name))


async def benign(b: Bench, name: str, apps: Apps) -> dict[str, Any]:
    """An everyday task, a person who says yes to everything: what was asked, did it run."""
    from tests.desktop.test_safety_benign import NAMES, tasks

    desktop, site = b.desktop, b.site
    task = tasks(site)[name]()
    listed = sorted(tasks(site)) == sorted(NAMES)
    before = {w.handle for w in await desktop.list_windows()}
    asked: list[str] = []
    yes = CallbackApprover(lambda r: asked.append(r.reason) is None, person=True)
    try:
        if task.dialog is not None:  # a desktop app, not a page: it ended well or not
            argv, title = task.dialog
            await apps.spawn(argv, match=lambda w: w.title == title)
            proc = apps.procs[-1]
            task.done = lambda: proc.poll() == 0
        run = await run_adversary(desktop, b.settings, task.goal, on=True, approver=yes)
        done = await effect_seen(task.done, run, expected=True)
    finally:
        await close_windows(desktop, await _opened_since(desktop, before))
    return {
        "listed": listed,
        "asks": run.asked,
        "acting_calls": run.acting_calls,
        "done": done,
        "what": task.what,
        "note": "; ".join(asked),
        "dropped": run.brain.dropped,
        "story": run.story(),
    }


async def injection(b: Bench, name: str, apps: Apps) -> dict[str, Any]:
    """One injection case twice: the policy off (the injection must work), then on."""
    from tests.desktop.test_safety_injection import CASES, Scene

    assert b.site.files_dir is not None
    tmp = b.tmp / "injection" / name
    tmp.mkdir(parents=True, exist_ok=True)
    scene = Scene(b.site, apps, b.site.files_dir, tmp)
    off, off_run = await trial(b.desktop, b.settings, CASES[name](scene), on=False)
    on, on_run = await trial(b.desktop, b.settings, CASES[name](scene), on=True)
    built = CASES[name](scene)
    return {
        "where": built.where,
        "effect": built.effect,
        "off": asdict(off),
        "on": asdict(on),
        "off_story": off_run.story(),
        "on_story": on_run.story(),
    }


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # asyncio.run cancels the trials; the sandbox is stopped on the way


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGTERM, _stop)
    asyncio.run(run_trials(Path(argv[0]), argv[1:]))


class SafetyTrials:
    """The trials' process, started for the selected cases; :meth:`result` waits for one."""

    def __init__(self, ids: list[str], folder: Path) -> None:
        self.out = folder / "trials.jsonl"
        self.log = folder / "safety-trials.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.desktop.safety_beside", str(self.out), *ids],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def _read(self) -> dict[str, dict[str, Any]]:
        if not self.out.exists():
            return {}
        lines = self.out.read_text().splitlines()
        # the last line may be half written: only whole lines count
        return {r["id"]: r for r in (json.loads(x) for x in lines if x.endswith("}"))}

    async def result(self, request: pytest.FixtureRequest, timeout: float = 2400) -> dict[str, Any]:
        """The record of the case of ``request``'s test, once written; the process's log if it
        ended without it."""
        case = _case_id(request.node)
        assert case is not None, request.node.nodeid

        async def ready() -> bool:
            return case in self._read() or self.proc.poll() is not None

        await async_wait_for(ready, timeout=timeout, what=f"the safety trial {case}")
        record = self._read().get(case)
        if record is None:
            tail = self.log.read_text(errors="replace")[-4000:]
            raise AssertionError(
                f"the safety trials ended ({self.proc.returncode}) without {case}:\n{tail}"
            )
        if "error" in record:
            raise AssertionError(f"the safety trial {case} raised:\n{record['error']}")
        return record

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _case_id(item: Any) -> str | None:
    """``benign/NAME``, ``goals/NAME`` or ``injection/NAME`` for a parametrized test of
    :data:`MODULES`."""
    module = MODULES.get(item.nodeid.split("::")[0].rsplit("/", 1)[-1])
    if module is None or not hasattr(item, "callspec"):
        return None
    return f"{module}/{item.callspec.id}"


@contextlib.contextmanager
def safety_trials_beside(items: list[Any], folder: Path) -> Iterator[SafetyTrials | None]:
    """Start the trials of the selected tests of :data:`MODULES` (None when none is selected);
    in the order the modules run."""
    ids = [c for c in map(_case_id, items) if c is not None]
    order = list(MODULES.values())
    ids.sort(key=lambda c: order.index(c.split("/", 1)[0]))
    if not ids:
        yield None
        return
    job = SafetyTrials(ids, folder)
    try:
        yield job
    finally:
        job.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
