"""Eval tests run ``deskpilot eval`` as users do: a subprocess of the real CLI, each trial a
process with its own sandbox desktop (these tests are about running many desktops).

``proof`` runs the CI proof of the starter suite once per session (every task: oracle 3/3
passed, noop 3/3 failed, at -j 2); other tests compare their runs with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
        done = subprocess.run(
            self.command(*args, "--json"),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"deskpilot eval {args} exited {done.returncode}:\n{done.stderr}")
        try:
            data: dict[str, Any] = json.loads(done.stdout)
        except ValueError as exc:
            raise AssertionError(f"no JSON on stdout:\n{done.stdout}\n{done.stderr}") from exc
        data["_stderr"] = done.stderr
        data["_code"] = done.returncode
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


@pytest.fixture(scope="session")
def proof(deskpilot_eval: Eval, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("proof")
    data = deskpilot_eval.run("check", "starter", "--trials", "3", "-j", "2", "--out", str(out),
                              check=False)  # fmt: skip
    data["_out"] = out
    return data


def statuses(summary: dict[str, Any]) -> dict[str, list[str]]:
    return {t["id"]: t["statuses"] for t in summary["tasks"]}


def trial_processes(marker: str) -> list[int]:
    """Live trial processes whose command line names ``marker`` (a run or slot directory)."""
    found = []
    for pid in _procfs.parents():
        cmd = _procfs.read(f"/proc/{pid}/cmdline")
        if b"deskpilot.eval.trial" in cmd and marker.encode() in cmd and not _procfs.is_zombie(pid):
            found.append(pid)
    return found
