"""A run killed mid-suite, resumed: every trial done exactly once, nothing lost."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from deskpilot._wait import wait_for
from tests.eval_runs import Eval, trial_processes

TASKS = "zenity.entry,zenity.question,mousepad.append-line"


def lines(run: Path) -> list[str]:
    path = run / "results.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def test_a_killed_run_resumes_without_losing_or_repeating_a_trial(
    deskpilot_eval: Eval, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    args = [
        "starter",
        "--policy",
        "oracle",
        "--tasks",
        TASKS,
        "--trials",
        "2",
        "-j",
        "1",
        "--out",
        str(run),
    ]
    driver = subprocess.Popen(
        deskpilot_eval.command(*args),
        env=deskpilot_eval.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # killed while a trial runs: two results written, the third trial under way
        wait_for(lambda: len(lines(run)) >= 2, timeout=120, what="two finished trials")
        wait_for(lambda: trial_processes(str(run)) or None, timeout=60, what="a running trial")
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        assert driver.stderr is not None
        driver.stderr.close()
    before = lines(run)
    assert 2 <= len(before) < 6
    # the running trial saw its driver die and went away with its desktop
    wait_for(lambda: not trial_processes(str(run)), timeout=30, what="orphaned trials to exit")

    summary = deskpilot_eval.run(*args, "--resume")
    after = lines(run)
    assert after[: len(before)] == before  # what was written is kept as it was
    rows = [json.loads(x) for x in after]
    keys = [(r["task"], r["trial"]) for r in rows]
    assert sorted(keys) == sorted({(t, k) for t in TASKS.split(",") for k in (1, 2)})
    assert len(keys) == len(set(keys)) == 6  # each trial once
    assert all(r["status"] == "passed" for r in rows)
    assert summary["complete"] and summary["overall"]["passed"] == 6
    assert json.loads((run / "run.json").read_text())["resumed"]
