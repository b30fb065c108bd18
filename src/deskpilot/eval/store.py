"""A run directory and its results: one writer, nothing lost, nothing done twice.

::

    RUN/
      run.json          the manifest: suite (path, content hash), tasks, policy, trials, …
      results.jsonl     one line per finished attempt, appended and fsynced by the driver
      summary.json      the report (deskpilot eval report RUN rewrites it)
      summary.md
      trials/<task>/t<N>-a<attempt>/   result.json, transcript.md, http.jsonl, trial.log, …
      trials/<task>/.specs/t<N>-a<attempt>.json   what the trial ran (the task, its checks)
      .lock             held (flock) by the one driver writing this run

A run killed at any point resumes (``--resume``): a torn last line is dropped, and every trial
whose attempts already reached a final status is skipped; an attempt that was running when
the run died left no line and runs again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from deskpilot._files import write_atomic
from deskpilot.errors import EvalError

STATUSES = ("passed", "failed", "timeout", "setup_error", "checker_error", "infra_error")
#: statuses that say something about the agent (scored); the others are the harness's
SCORED = ("passed", "failed", "timeout")
MANIFEST = "run.json"
RESULTS = "results.jsonl"
#: manifest keys that must match for --resume to continue a run
SAME_FOR_RESUME = ("suite_digest", "tasks", "trials", "policy")


@dataclass(frozen=True, order=True)
class TrialKey:
    task: str
    trial: int  # 1, 2, … — the same number in results.jsonl, folders and reports

    def label(self) -> str:
        return f"{self.task} #{self.trial}"


def trial_dir(run: Path, key: TrialKey, attempt: int) -> Path:
    return run / "trials" / key.task / f"t{key.trial}-a{attempt}"


def read_results(run: Path) -> list[dict[str, Any]]:
    """Every complete line of results.jsonl (a torn last line is ignored)."""
    path = run / RESULTS
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            item = json.loads(line)
            if isinstance(item, dict) and "task" in item:
                out.append(item)
    return out


def final_attempts(results: list[dict[str, Any]], retries: int) -> dict[TrialKey, dict[str, Any]]:
    """The attempt that stands for each trial that is done: its first non-infra attempt, or
    its last infra attempt once the retries are used up."""
    by_key: dict[TrialKey, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_key[TrialKey(r["task"], int(r["trial"]))].append(r)
    done: dict[TrialKey, dict[str, Any]] = {}
    for key, attempts in by_key.items():
        attempts.sort(key=lambda r: int(r["attempt"]))
        final = next((a for a in attempts if a["status"] != "infra_error"), None)
        if final is None and len(attempts) > retries:
            final = attempts[-1]
        if final is not None:
            done[key] = {**final, "attempts": len(attempts)}
    return done


class RunStore:
    """The driver's handle on a run directory: the only writer of results.jsonl."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock: IO[str] | None = None
        self._out: IO[str] | None = None

    def open(self, manifest: dict[str, Any], *, resume: bool) -> list[dict[str, Any]]:
        """Create (or, with ``resume``, continue) the run; return the results so far."""
        try:
            return self._open(manifest, resume)
        except BaseException:
            self.close()
            raise

    def _open(self, manifest: dict[str, Any], resume: bool) -> list[dict[str, Any]]:
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.path / ".lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EvalError(f"{self.path} is being written by another deskpilot eval") from None
        old = self.path / MANIFEST
        if old.exists():
            if not resume:
                raise EvalError(
                    f"{self.path} already holds a run: add --resume to continue it, or choose "
                    "another --out"
                )
            before = json.loads(old.read_text(encoding="utf-8"))
            changed = [k for k in SAME_FOR_RESUME if before.get(k) != manifest.get(k)]
            if changed:
                raise EvalError(
                    f"cannot resume {self.path}: its {', '.join(changed)} differ from this "
                    "command's (same suite, --tasks, --trials and model are needed)"
                )
            manifest = {**before, "resumed": [*before.get("resumed", []), manifest["created"]]}
        elif resume:
            raise EvalError(f"nothing to resume in {self.path}: it holds no run")
        write_json(self.path / MANIFEST, manifest)
        self._truncate_torn()
        self._out = open(self.path / RESULTS, "a", encoding="utf-8")  # noqa: SIM115
        return read_results(self.path)

    def _truncate_torn(self) -> None:
        path = self.path / RESULTS
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            with path.open("r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)

    def append(self, result: dict[str, Any]) -> None:
        assert self._out is not None
        self._out.write(json.dumps(result, sort_keys=True, default=str) + "\n")
        self._out.flush()
        os.fsync(self._out.fileno())

    def close(self) -> None:
        for fh in (self._out, self._lock):
            if fh is not None:
                fh.close()
        self._out = self._lock = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write atomically: a reader sees the old file or the whole new one, never a part."""
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str))


def latest_run(root: Path) -> Path | None:
    runs = [p for p in root.glob("*") if (p / MANIFEST).is_file()] if root.is_dir() else []
    return max(runs, key=lambda p: (p / MANIFEST).stat().st_mtime) if runs else None
