"""The local backend: ``-j N`` sandbox desktops on this machine, one trial process each."""

from __future__ import annotations

import concurrent.futures as cf
import subprocess
import threading
from pathlib import Path
from typing import Any, Protocol

from deskpilot.eval.attempt import Attempt, base_result, kill_group, run_attempt
from deskpilot.eval.store import trial_dir


class Backend(Protocol):
    """Where attempts run. The driver keeps at most ``slots`` attempts submitted."""

    name: str
    slots: int

    @property
    def ready(self) -> int:
        """How many attempts it can take now (all its slots, less those recovering)."""
        ...

    def submit(self, attempt: Attempt) -> None: ...

    def wait(self, timeout: float) -> list[tuple[Attempt, dict[str, Any]]]:
        """Attempts finished since the last call (may be empty after ``timeout``)."""
        ...

    def describe(self) -> str: ...

    def close(self, *, kill: bool = False) -> None:
        """Release the backend; with ``kill``, end the attempts still running."""
        ...


class LocalBackend:
    name = "local"

    def __init__(self, run: Path, jobs: int, env: dict[str, str]) -> None:
        self.run, self.slots, self.env = run, jobs, env
        self._pool = cf.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="desktop")
        self._futures: dict[cf.Future[dict[str, Any]], Attempt] = {}
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    def _run(self, attempt: Attempt) -> dict[str, Any]:
        out = trial_dir(self.run, attempt.key, attempt.number)
        procs: list[subprocess.Popen[bytes]] = []

        def started(proc: subprocess.Popen[bytes]) -> None:
            procs.append(proc)
            with self._lock:
                self._live.add(proc)

        try:
            return run_attempt(attempt, out, self.env, started=started)
        finally:
            with self._lock:
                self._live.difference_update(procs)

    @property
    def ready(self) -> int:
        return self.slots - len(self._futures)

    def submit(self, attempt: Attempt) -> None:
        self._futures[self._pool.submit(self._run, attempt)] = attempt

    def wait(self, timeout: float) -> list[tuple[Attempt, dict[str, Any]]]:
        if not self._futures:
            return []
        done, _ = cf.wait(self._futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        out = []
        for future in done:
            attempt = self._futures.pop(future)
            try:
                out.append((attempt, future.result()))
            except Exception as exc:  # the driver's side failed (disk full, fork failed…)
                out.append((attempt, base_result(attempt, "infra_error", f"{exc!r}")))
        return out

    def describe(self) -> str:
        return f"{self.slots} local desktop{'s' if self.slots > 1 else ''}"

    def close(self, *, kill: bool = False) -> None:
        if kill:
            with self._lock:
                live = list(self._live)
            for proc in live:
                kill_group(proc)
        self._pool.shutdown(wait=True, cancel_futures=True)
