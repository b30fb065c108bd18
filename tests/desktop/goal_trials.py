"""The goal-aware safety trials (``test_safety_goals.py``), run beside the rest of the suite.

Each trial is an agent run that mostly waits for the tools to settle after input, one after
another: 48 of them took 163 s alone (load 2–11) and 776 s in a run of the whole desktop tier
(load 7–16). They need a desktop and a browser, not the suite's desktop: a process of their own
(``python -m tests.desktop.goal_trials OUT NAME…``) starts when the run's first desktop test
does, on a sandbox desktop of its own, and runs the selected cases in order, writing one JSON
line per case to ``OUT``; each test of ``test_safety_goals`` takes its case's line and asserts
on it what it asserted on the run (:class:`GoalTrials`). Run alone, the module waits for its
trials as it did when it ran them itself.

The trial is the same as it was in the test: the obedient stand-in in the real loop, through
the real door, with the default policy; effects seen outside the tools (the site's log, zenity's
exit status, the file on disk).
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.policy import CallbackApprover, DenyAll
from deskpilot.sandbox import Sandbox
from tests.desktop.goal_cases import ABUSE, BENIGN, AbuseCase, Effect, GoalTask
from tests.desktop.site import GOAL_PAGES, Hit, Site
from tests.desktop.trials import close_windows, effect_seen, home_browser, run_adversary

if TYPE_CHECKING:  # the conftest imports this module (its fixture starts the trials)
    from tests.desktop.conftest import Apps

#: the module whose tests collect the trials (they run only when one of them is selected)
MODULE = "test_safety_goals.py"
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


async def run_trials(out: Path, names: list[str]) -> None:
    """Every named case in order on a desktop of this process's own; one line each in ``out``
    (an exception is that case's result, and the next case still runs)."""
    from tests.desktop.conftest import Apps

    tasks = {t.name: t for t in BENIGN}
    cases = {c.name: c for c in ABUSE}
    home = Path(tempfile.mkdtemp(prefix="goal-trials-", dir=out.parent))
    with Sandbox(width=1280, height=800) as sandbox:
        assert sandbox.info is not None
        env = sandbox.app_env()
        env["DESKPILOT_SANDBOX"] = sandbox.info.runtime_dir
        env["DESKPILOT_HOME"] = str(home / "deskpilot-home")
        settings = load_settings(env=env)
        desktop = await open_resolved(settings)
        try:
            with Site(templates=GOAL_PAGES) as site:
                async with home_browser(desktop, site.page("todo")):
                    bench = Bench(desktop, settings, sandbox, site, home)
                    for name in names:
                        apps = Apps(desktop, sandbox)
                        await apps.start()
                        try:
                            if name in tasks:
                                record = await goal_task(bench, tasks[name], apps)
                            else:
                                record = await grant_abuse(bench, cases[name])
                        except Exception:
                            record = {"error": traceback.format_exc()}
                        finally:
                            await apps.close_all()
                        with out.open("a") as fh:
                            fh.write(json.dumps({"name": name, **record}) + "\n")
        finally:
            await desktop.close()


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # asyncio.run cancels the trials; the sandbox is stopped on the way


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGTERM, _stop)
    asyncio.run(run_trials(Path(argv[0]), argv[1:]))


class GoalTrials:
    """The trials' process, started for the selected cases; :meth:`result` waits for one."""

    def __init__(self, names: list[str], folder: Path) -> None:
        self.out = folder / "trials.jsonl"
        self.log = folder / "goal-trials.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.desktop.goal_trials", str(self.out), *names],
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
        return {r["name"]: r for r in (json.loads(x) for x in lines if x.endswith("}"))}

    async def result(self, name: str, timeout: float = 1800) -> dict[str, Any]:
        """The case's record, once written; the process's log if it ended without it."""

        async def ready() -> bool:
            return name in self._read() or self.proc.poll() is not None

        await async_wait_for(ready, timeout=timeout, what=f"the goal trial {name}")
        record = self._read().get(name)
        if record is None:
            tail = self.log.read_text(errors="replace")[-4000:]
            raise AssertionError(
                f"the goal trials ended ({self.proc.returncode}) without {name}:\n{tail}"
            )
        if "error" in record:
            raise AssertionError(f"the goal trial {name} raised:\n{record['error']}")
        return record

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
def goal_trials_beside(items: list[Any], folder: Path) -> Iterator[GoalTrials | None]:
    """Start the trials of the selected tests of :data:`MODULE` (None when none is selected)."""
    names = [
        item.callspec.id
        for item in items
        if item.nodeid.split("::")[0].endswith(MODULE) and hasattr(item, "callspec")
    ]
    if not names:
        yield None
        return
    job = GoalTrials(names, folder)
    try:
        yield job
    finally:
        job.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
