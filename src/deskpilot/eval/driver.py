"""The driver: plans trials, hands them to a backend, is the one writer of their results.

It retries attempts that ended in an *infrastructure* error (a dead sandbox, a lost Ray
worker, a provider outage) up to ``retries`` times, and nothing else: a failure, a timeout, a
setup or checker error is the trial's result. Heavy tasks (LibreOffice, Chromium) go first so
the tail of the run is short.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from deskpilot.eval.attempt import Attempt
from deskpilot.eval.local import Backend
from deskpilot.eval.policies import PolicySpec
from deskpilot.eval.report import markdown, summarize
from deskpilot.eval.store import (
    MANIFEST,
    RunStore,
    TrialKey,
    final_attempts,
    read_results,
    write_json,
)
from deskpilot.eval.suite import Suite
from deskpilot.eval.task import Task

Progress = Callable[[str], None]
#: written when a run is interrupted: when, and the trials it cut short
INTERRUPTED = "interrupted.json"


@dataclass(frozen=True)
class Plan:
    suite: Suite
    tasks: list[Task]
    policy: PolicySpec
    trials: int
    retries: int = 1
    isolation: str = "bwrap"
    #: a screenshot of the window after every step (the trajectory); off only to measure it
    frames: bool = True

    def manifest(self, backend: str) -> dict[str, Any]:
        return {
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "deskpilot": _version(),
            "suite": self.suite.name,
            "suite_path": str(self.suite.root),
            "suite_digest": self.suite.digest,
            "tasks": [t.id for t in self.tasks],
            "versions": {t.id: t.version for t in self.tasks},
            "trials": self.trials,
            "retries": self.retries,
            "policy": self.policy.to_dict(),
            "policy_label": self.policy.label,
            "backend": backend,
            "isolation": self.isolation,
        }

    def spec(self, task: Task) -> dict[str, Any]:
        return {
            "task": task.model_dump(mode="json", by_alias=True),
            "policy": self.policy.to_dict(),
            "policy_label": self.policy.label,
            "suite_root": str(self.suite.root),
            "isolation": self.isolation,
            "frames": self.frames,
        }


def _version() -> str:
    """deskpilot's version, and the git commit it runs from when that is known."""
    version = metadata.version("deskpilot")
    here = Path(__file__).resolve().parent
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "-C", str(here), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip():
            version += f" ({done.stdout.strip()})"
    return version


def _line(done: int, total: int, attempt: Attempt, result: dict[str, Any], retry: bool) -> str:
    mark = {"passed": "✓", "failed": "✗"}.get(result["status"], "!")
    took = result.get("time", {}).get("total")
    extra = f" {took:.1f}s" if isinstance(took, int | float) else ""
    extra += f" · {result.get('tool_calls', 0)} calls"
    if result.get("tokens_in") or result.get("tokens_out"):
        extra += f" · {result['tokens_in']}/{result['tokens_out']} tokens"
    if result["status"] != "passed" and result.get("detail"):
        extra += f" · {str(result['detail'])[:100]}"
    again = " → retrying" if retry else ""
    tries = f" (attempt {attempt.number})" if attempt.number > 1 else ""
    width = len(str(total))
    return (
        f"[{done:>{width}}/{total}] {mark} {result['status']:<13} "
        f"{attempt.key.label()}{tries}{extra}{again}"
    )


def execute(
    plan: Plan,
    run: Path,
    backend: Backend,
    *,
    resume: bool = False,
    progress: Progress = lambda _line: None,
) -> dict[str, Any]:
    """Run (or resume) the plan in ``run``; return the summary (also written to the run)."""
    manifest = plan.manifest(backend.name)
    store = RunStore(run)
    running: dict[TrialKey, Attempt] = {}
    try:
        existing = store.open(manifest, resume=resume)
        (run / INTERRUPTED).unlink(missing_ok=True)
        manifest = {**manifest, **_read_manifest(run)}
        done = final_attempts(existing, plan.retries)
        tried: dict[TrialKey, int] = {}
        for r in existing:
            key = TrialKey(r["task"], int(r["trial"]))
            tried[key] = max(tried.get(key, 0), int(r["attempt"]))
        queue: list[Attempt] = [
            Attempt(TrialKey(t.id, k), tried.get(TrialKey(t.id, k), 0) + 1, plan.spec(t))
            for t in sorted(plan.tasks, key=lambda t: not t.heavy)
            for k in range(1, plan.trials + 1)
            if TrialKey(t.id, k) not in done
        ]
        total = len(plan.tasks) * plan.trials
        count = len(done)
        progress(
            f"{len(queue)} trial(s) to run of {total} ({len(plan.tasks)} task(s) × {plan.trials}, "
            f"policy {plan.policy.label}) on {backend.describe()} → {run}"
            + (f"; {count} already done" if count else "")
        )
        _loop(plan, store, backend, queue, count, total, progress, running)
    except BaseException as exc:
        backend.close(kill=True)
        if isinstance(exc, KeyboardInterrupt) and (run / MANIFEST).is_file():
            # Ctrl-C, SIGTERM: what finished is kept (results.jsonl is fsynced line by
            # line); the trials cut short are named in the report, and run on --resume
            write_json(
                run / INTERRUPTED,
                {
                    "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "trials": sorted(k.label() for k in running),
                },
            )
            store.close()
            write_report(run)
        raise
    else:
        backend.close()
    finally:
        store.close()
    return write_report(run)


def _loop(
    plan: Plan,
    store: RunStore,
    backend: Backend,
    queue: list[Attempt],
    count: int,
    total: int,
    progress: Progress,
    running: dict[TrialKey, Attempt],
) -> None:
    while queue or running:
        while queue and backend.ready > 0:
            attempt = queue.pop(0)
            backend.submit(attempt)
            running[attempt.key] = attempt
        if not running:  # every slot is recovering from a lost worker
            backend.wait(timeout=1.0)
            continue
        for attempt, result in backend.wait(timeout=1.0):
            running.pop(attempt.key, None)
            result["attempt"] = attempt.number
            store.append(result)
            retry = result["status"] == "infra_error" and attempt.number <= plan.retries
            if retry:
                queue.insert(0, Attempt(attempt.key, attempt.number + 1, attempt.spec))
            else:
                count += 1
            progress(_line(count, total, attempt, result, retry))


def _read_manifest(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "run.json").read_text(encoding="utf-8"))
    return data


def write_report(run: Path) -> dict[str, Any]:
    """Summarize ``run`` from its results; write summary.json and summary.md."""
    manifest = _read_manifest(run)
    final = final_attempts(read_results(run), int(manifest.get("retries", 1)))
    summary = summarize(run, manifest, final)
    with contextlib.suppress(OSError, ValueError):
        summary["interrupted"] = json.loads((run / INTERRUPTED).read_text(encoding="utf-8"))
    write_json(run / "summary.json", summary)
    (run / "summary.md").write_text(markdown(summary), encoding="utf-8")
    return summary
