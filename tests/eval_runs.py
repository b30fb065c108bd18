"""The eval tests' fixtures: ``deskpilot eval`` run as users run it — a subprocess of the
real CLI, each trial a process with its own sandbox desktop (these tests are about running
many desktops).

``proof`` is the CI proof of the starter suite, run once per session (every task: the oracle
passes 3 of 3 trials, doing nothing fails its one, at -j 2); ``serial`` runs one task per
family at -j 1 beside it. Both start with the session when a selected test uses them
(:func:`trial_runs_beside`), so the suite does not wait for them; their tests collect them.
A plugin (``tests/conftest.py``), not tests/eval's conftest: an autouse fixture there would
start only with the first eval test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from deskpilot import _procfs


@dataclass
class Eval:
    """Runs ``deskpilot eval …`` with a private DESKPILOT_HOME."""

    home: Path
    env: dict[str, str]

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "deskpilot", "eval", *args]

    def run(self, *args: str, timeout: float = 1800, check: bool = True) -> dict[str, Any]:
        return self.finish(self.start(*args), timeout=timeout, check=check)

    def start(self, *args: str) -> subprocess.Popen[str]:
        """``deskpilot eval … --json`` started in the background; :meth:`finish` collects it."""
        return subprocess.Popen(
            self.command(*args, "--json"),
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    @staticmethod
    def finish(
        proc: subprocess.Popen[str], timeout: float = 1800, check: bool = True
    ) -> dict[str, Any]:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        if check and proc.returncode != 0:
            raise AssertionError(f"deskpilot eval {proc.args} exited {proc.returncode}:\n{stderr}")
        try:
            data: dict[str, Any] = json.loads(stdout)
        except ValueError as exc:
            raise AssertionError(f"no JSON on stdout:\n{stdout}\n{stderr}") from exc
        data["_stderr"] = stderr
        data["_code"] = proc.returncode
        return data

    @property
    def audit_db(self) -> Path:
        return self.home / "data" / "audit.sqlite3"


@pytest.fixture(scope="session")
def deskpilot_eval(tmp_path_factory: pytest.TempPathFactory) -> Eval:
    home = tmp_path_factory.mktemp("eval-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKPILOT_", "RAY_"))}
    env.update({"DESKPILOT_HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"})
    return Eval(home, env)


#: one task of each family of the starter suite (the -j 1 run)
J1_TASKS = (
    "gcalc.multiply",
    "zenity.question",
    "mousepad.append-line",
    "mousepad.save-copy",
    "multi.web-to-note",
    "osworld.todo-append",
    "web.discount-code",
    "web.search",
    "web.navigate",
    "writer.heading",
)


@pytest.fixture(scope="session")
def serial_started(
    deskpilot_eval: Eval, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[subprocess.Popen[str]]:
    """One task of each family of the starter suite at -j 1 (one trial of the oracle and of
    doing nothing each), started beside the -j 2 proof: the two runs share no desktop, and
    the suite's wall time does not pay for it twice. (One task per family: -j 1 is the
    same scheduler with one slot; every app kind still runs one desktop at a time.)"""
    out = tmp_path_factory.mktemp("j1")
    proc = deskpilot_eval.start(
        "check",
        "starter",
        "--trials",
        "1",
        "-j",
        "1",
        "--out",
        str(out),
        "--tasks",
        ",".join(J1_TASKS),
    )
    yield proc
    if proc.poll() is None:  # its test did not run: end it with its trials
        proc.terminate()
        proc.communicate(timeout=60)


@pytest.fixture(scope="session")
def serial(serial_started: subprocess.Popen[str]) -> dict[str, Any]:
    return Eval.finish(serial_started, check=False)


@pytest.fixture(scope="session")
def proof_started(
    deskpilot_eval: Eval, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """The proof of the starter suite, started in the background: the oracle 3 times (it
    must pass every time), doing nothing once (nothing acts, so each trial checks the same
    fresh setup; test_j1… runs it again, at -j 1, for a family), at -j 2."""
    out = tmp_path_factory.mktemp("proof")
    # read only when its tests collect it: what it prints (13 kB: a line a trial, the JSON
    # summary) fits in its pipes (64 kB), so it never stops to wait for a reader
    proc = deskpilot_eval.start(
        "check", "starter", "--trials", "3", "--noop-trials", "1", "-j", "2", "--out", str(out)
    )
    yield proc, out
    if proc.poll() is None:  # its tests did not run: end it with its trials
        proc.terminate()
        proc.communicate(timeout=60)


@pytest.fixture(scope="session")
def proof(proof_started: tuple[subprocess.Popen[str], Path]) -> dict[str, Any]:
    proc, out = proof_started
    data = Eval.finish(proc, check=False)
    data["_out"] = out
    return data


@pytest.fixture(scope="session", autouse=True)
def trial_runs_beside(request: pytest.FixtureRequest) -> None:
    """When a selected test uses the proof (or the -j 1 run), its ``deskpilot eval`` starts
    with the session's first test and goes on beside all the others; its tests collect it.
    Its trials mostly wait (apps starting, tools settling after input), so minutes of them
    overlap the rest of the suite instead of adding to it."""
    used = {name for item in request.session.items for name in getattr(item, "fixturenames", ())}
    for run in ("proof", "serial"):
        if run in used:
            request.getfixturevalue(f"{run}_started")


def statuses(summary: dict[str, Any]) -> dict[str, list[str]]:
    return {t["id"]: t["statuses"] for t in summary["tasks"]}


def trial_processes(marker: str) -> list[int]:
    """Live trial processes whose command line names ``marker`` (a run or slot directory):
    the outermost of each trial (its bubblewrap, when it runs isolated)."""
    links = _procfs.parents()
    found = []
    for pid in links:
        cmd = _procfs.read(f"/proc/{pid}/cmdline")
        if b"deskpilot.eval.trial" in cmd and marker.encode() in cmd and not _procfs.is_zombie(pid):
            found.append(pid)
    return sorted(p for p in found if links.get(p) not in found)
