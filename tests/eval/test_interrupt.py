"""Ctrl-C (or SIGTERM) stops ``deskpilot eval run`` within seconds: the running trials and
every process they started end (sandboxes, apps, bubblewrap), what finished is kept, and the
report names the trials it cut short; ``--resume`` runs those."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from deskpilot import _procfs
from deskpilot._wait import wait_for
from tests.eval_runs import Eval

QUICK = """goal = "nothing"
[[check]]
kind = "file"
path = "~/never.txt"
exists = false
[[oracle]]
tool = "list_windows"
"""

#: a trial that is still setting up (its sandbox desktop up, an app running) when stopped
SLOW = """goal = "nothing"
timeout = 600
[[setup]]
launch = ["sh", "-c", "sleep 1000"]
ready = "none"
[[setup]]
run = ["sleep", "600"]
timeout = 600
[[check]]
kind = "file"
path = "~/never.txt"
exists = false
[[oracle]]
tool = "list_windows"
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_run_at_once_and_keeps_what_finished(
    deskpilot_eval: Eval, tmp_path: Path, sig: signal.Signals
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a-quick.toml").write_text(QUICK)
    (suite / "b-slow.toml").write_text(SLOW)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        deskpilot_eval.command(str(suite), "--policy", "oracle", "-j", "2", "--out", str(out)),
        env=deskpilot_eval.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        results = out / "results.jsonl"
        phase = out / "trials" / "b-slow" / "t1-a1" / "phase"
        wait_for(
            lambda: (
                results.is_file()
                and results.read_text().strip() != ""
                and phase.is_file()
                and phase.read_text() == "setup"
            ),
            timeout=300,
            what="the quick trial done and the slow one in its setup",
        )
        # the slow trial's processes: its bubblewrap, the trial, its desktop, the sleeps
        wait_for(
            lambda: any(
                b"sleep\x00600" in _procfs.read(f"/proc/{p}/cmdline")
                for p in _procfs.descendants([proc.pid])
            ),
            timeout=60,
            what="the slow trial's setup command running",
        )
        tree = _procfs.descendants([proc.pid]) - {proc.pid}
        assert len(tree) >= 4, tree
        start = time.monotonic()
        proc.send_signal(sig)
        _stdout, stderr = proc.communicate(timeout=60)
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert took < 15, f"took {took:.1f} s to stop"
    left = [p for p in tree if Path(f"/proc/{p}").exists() and not _procfs.is_zombie(p)]
    assert not left, [_procfs.read(f"/proc/{p}/cmdline") for p in left]
    assert "--resume" in stderr
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["task"], r["status"]) for r in lines] == [("a-quick", "passed")]  # kept
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"]["trials"] == ["b-slow #1"]
    assert "Interrupted" in (out / "summary.md").read_text()
    assert (deskpilot_eval.audit_db).is_file()  # the audit log is kept
