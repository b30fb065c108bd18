"""A writer killed by SIGKILL mid-run leaves a log that verifies and holds all it reported."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from deskpilot.audit import AuditLog
from deskpilot.events import Event

# Records events forever, printing "<seq> <call_id>" once each one is recorded.
WRITER = """
import sys
from deskpilot.audit import AuditLog
from deskpilot.events import Event, Image

log = AuditLog(sys.argv[1])
run = log.start_run("killed mid-way", "scripted:kill-test")
print("run", run, flush=True)
i = 0
while True:
    i += 1
    shot = (Image(b"screenshot-%d" % (i % 7), width=i),) if i % 3 == 0 else ()
    data = {"tool": "click", "call_id": f"c{i}", "ok": True, "summary": f"step {i}",
            "text": "x" * (i % 97)}
    seq = log.record(Event("tool.result", data, run_id=run, images=shot))
    print(seq, f"c{i}", flush=True)
"""


def run_and_kill(db: Path, after: int) -> tuple[str, list[tuple[int, str]]]:
    """Start a writer, SIGKILL it after ``after`` reported events; return everything reported."""
    env = dict(os.environ)
    with subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True, env=env
    ) as proc:
        assert proc.stdout is not None
        try:
            first = proc.stdout.readline().split()
            assert first[0] == "run", first
            reported = []
            while len(reported) < after:
                line = proc.stdout.readline()
                assert line, "the writer died before it was killed"
                seq, call_id = line.split()
                reported.append((int(seq), call_id))
        finally:
            proc.send_signal(signal.SIGKILL)
        rest = proc.stdout.read()  # lines written before the kill count as reported too
        assert proc.wait() == -signal.SIGKILL
    for line in rest.split("\n")[:-1]:  # whole lines only: a cut one was never reported
        seq, call_id = line.split()
        reported.append((int(seq), call_id))
    return first[1], reported


@pytest.mark.parametrize("after", [1, 40, 300])
def test_sigkill_loses_no_reported_event(tmp_path: Path, after: int) -> None:
    db = tmp_path / "audit.sqlite3"
    run_id, reported = run_and_kill(db, after)
    assert len(reported) >= after

    with AuditLog(db) as log:
        report = log.verify()
        assert report.ok, report.problems
        stored = {e.data["call_id"]: e for e in log.run_events(run_id) if e.kind == "tool.result"}
        head_seq, _ = log.head()
    for seq, call_id in reported:
        assert call_id in stored, f"reported event {call_id} (#{seq}) is missing"
        assert stored[call_id].data["summary"] == f"step {call_id[1:]}"
    assert head_seq >= reported[-1][0]


def test_the_log_keeps_growing_after_a_kill(tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite3"
    first_run, first = run_and_kill(db, 25)
    second_run, second = run_and_kill(db, 25)
    assert second[0][0] > first[-1][0]  # the second writer continues the same chain
    with AuditLog(db) as log:
        log(Event("model.text", {"text": "a third writer"}, run_id="after"))
        report = log.verify()
        assert report.ok, report.problems
        ids = {r.id for r in log.list_runs()}
        assert {first_run, second_run, "after"} <= ids
        assert all(r.outcome is None for r in log.list_runs() if r.id != "after")
