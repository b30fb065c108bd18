"""One attempt at a trial, as a process of its own with a hard deadline.

Both backends run attempts this way (the local one from a thread per desktop, the Ray one
inside an actor on a worker node): ``python -m deskpilot.eval.trial`` in a new session (its
own process group), with a pipe it watches so that it dies with whoever started it. When the
deadline passes, the group is killed (TERM, then KILL); the trial's sandbox is torn down by
its reaper. No ``result.json`` means the status comes from the last phase the trial reached.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deskpilot.eval.store import TrialKey, write_json

#: what the trial may take beyond the agent's time limit: setup, checks, teardown
SETUP_BUDGET_S = 180.0
CHECK_BUDGET_S = 90.0
KILL_GRACE_S = 5.0
#: a trial killed at its deadline in this phase gets this status
KILLED_IN = {
    "setup": "setup_error",
    "agent": "timeout",
    "postconfig": "setup_error",
    "check": "checker_error",
}


@dataclass(frozen=True)
class Attempt:
    key: TrialKey
    number: int  # 1, 2, … (attempts after an infrastructure failure)
    spec: dict[str, Any]  # the task as data, the policy; "out" is set where it runs

    @property
    def deadline_s(self) -> float:
        task = self.spec["task"]
        grace = 60.0 if self.spec["policy"]["kind"] == "model" else 0.0
        return SETUP_BUDGET_S + float(task["timeout"]) + grace + CHECK_BUDGET_S


def base_result(attempt: Attempt, status: str, detail: str) -> dict[str, Any]:
    task = attempt.spec["task"]
    return {
        "task": attempt.key.task,
        "version": task.get("version", 1),
        "family": task.get("family", ""),
        "trial": attempt.key.trial,
        "attempt": attempt.number,
        "policy": attempt.spec.get("policy_label", ""),
        "status": status,
        "detail": detail,
        "checks": [],
        "steps": 0,
        "tool_calls": 0,
        "tool_errors": 0,
        "tokens_in": 0,
        "tokens_out": 0,
        "time": {},
    }


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def run_attempt(
    attempt: Attempt,
    out: Path,
    env: dict[str, str] | None = None,
    *,
    deadline_s: float | None = None,
    started: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> dict[str, Any]:
    """Run the attempt in ``out``; return its result (always one, whatever happened).
    ``started`` is told the trial's process (so that whoever runs it can kill its group)."""
    shutil.rmtree(out, ignore_errors=True)  # what an attempt cut short by a dead driver left
    out.mkdir(parents=True, exist_ok=True)
    limit = deadline_s if deadline_s is not None else attempt.deadline_s
    with contextlib.ExitStack() as fds:
        spec, hidden, spec_fd = _private_spec(attempt, out, env, fds)
        command = [sys.executable, "-m", "deskpilot.eval.trial", f"/proc/self/fd/{spec_fd}"]
        if attempt.spec.get("isolation", "bwrap") == "bwrap":
            command = isolated(command, attempt, out, env, hidden)
        read_end, write_end = os.pipe()
        start = time.monotonic()
        with open(out / "trial.log", "ab") as log:
            try:
                proc = subprocess.Popen(
                    [*command, "--watch", str(read_end)],
                    pass_fds=(read_end, spec_fd, *spec["private_fds"]),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                    env=env,
                )
            finally:
                os.close(read_end)
                fds.close()  # the trial holds its own copies
            if started is not None:
                started(proc)
            killed = False
            try:
                proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                killed = True
                kill_group(proc)
            finally:
                os.close(write_end)
    return collect(attempt, out, proc.returncode, killed, limit, time.monotonic() - start)


def _private_spec(
    attempt: Attempt, out: Path, env: dict[str, str] | None, fds: contextlib.ExitStack
) -> tuple[dict[str, Any], list[Path], int]:
    """The trial's spec with the task's folder and the file store as ``/proc/self/fd/N`` of
    descriptors opened here (the trial's harness reads them; its apps cannot: they are
    masked in the trial); the folders to mask; the spec's own descriptor. The spec (the
    checks: the answer) is written beside the trial's folder, which the trial cannot see."""
    from deskpilot.config import load_settings

    def opened(path: Path, flags: int) -> int:
        fd = os.open(path, flags)
        fds.callback(os.close, fd)
        return fd

    spec = {
        **attempt.spec,
        "out": str(out),
        "trial": attempt.key.trial,
        "attempt": attempt.number,
        "private_fds": [],
    }
    task = dict(spec["task"])
    base = Path(task.get("base_dir") or ".").resolve()
    root = Path(spec.get("suite_root") or base).resolve()
    if root != base and root not in base.parents:
        root = base
    hidden = [root, out.parent.parent.parent]  # the suite; the run (its other trials)
    if base.is_dir():
        fd = opened(root, os.O_RDONLY | os.O_DIRECTORY)
        spec["private_fds"].append(fd)
        rel = base.relative_to(root)
        task["base_dir"] = f"/proc/self/fd/{fd}" + ("" if rel == Path(".") else f"/{rel}")
    spec["task"] = task
    store = load_settings(env=env).osworld_store
    if store.is_dir():
        fd = opened(store.resolve(), os.O_RDONLY | os.O_DIRECTORY)
        spec["private_fds"].append(fd)
        spec["store"] = f"/proc/self/fd/{fd}"
        hidden.append(store)
    private = out.parent / ".specs"
    private.mkdir(parents=True, exist_ok=True)
    spec_path = private / f"{out.name}.json"
    write_json(spec_path, spec)
    return spec, hidden, opened(spec_path, os.O_RDONLY)


def isolated(
    command: list[str],
    attempt: Attempt,
    out: Path,
    env: dict[str, str] | None,
    hidden: list[Path],
) -> list[str]:
    """The trial's command in its own namespaces (:mod:`deskpilot.eval.isolation`)."""
    from deskpilot.config import load_settings
    from deskpilot.eval.isolation import isolation_command

    settings = load_settings(env=env)
    readable = [settings.config_dir]
    model = str((attempt.spec.get("policy") or {}).get("model") or "")
    if model.startswith("scripted:"):  # a replay file the trial's model reads
        readable.append(Path(model.split(":", 1)[1]).expanduser())
    writable = [out, settings.data_dir, settings.state_dir]
    return isolation_command(command, writable=writable, readable=readable, hidden=hidden)


def collect(
    attempt: Attempt, out: Path, code: int | None, killed: bool, limit: float, took: float
) -> dict[str, Any]:
    """The attempt's result.json, or a result that says why there is none."""
    try:
        result: dict[str, Any] = json.loads((out / "result.json").read_text(encoding="utf-8"))
        result["attempt"] = attempt.number
        return result
    except (OSError, ValueError):
        pass
    phase = ""
    with contextlib.suppress(OSError):
        phase = (out / "phase").read_text().strip()
    if killed:
        status = KILLED_IN.get(phase, "infra_error")
        detail = f"killed at its deadline ({limit:.0f} s) during {phase or 'start-up'}"
    else:
        status = "infra_error"
        tail = ""
        with contextlib.suppress(OSError):
            tail = " | ".join((out / "trial.log").read_text(errors="replace").splitlines()[-2:])
        detail = f"the trial process exited with code {code} during {phase or 'start-up'}: {tail}"
    result = base_result(attempt, status, detail[:1000])
    result["time"] = {"total": round(took, 3)}
    return result
