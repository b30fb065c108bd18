"""The CI proof of the starter suite, and what every run leaves: reports and audit runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deskpilot.audit import AuditLog
from deskpilot.eval.suite import load_suite
from tests.eval_runs import Eval


def test_every_starter_task_passes_its_oracle_and_fails_doing_nothing(
    proof: dict[str, Any],
) -> None:
    rows = proof["tasks"]
    unproved = {r["id"]: (r["oracle"], r["noop"]) for r in rows if not r["proved"]}
    assert not unproved, f"{unproved}\n{proof['_stderr'][-3000:]}"
    assert len(rows) == len(load_suite("starter").tasks) >= 20
    assert all(r["oracle"] == ["passed"] * 3 and r["noop"] == ["failed"] for r in rows)
    assert proof["proved"] is True and proof["_code"] == 0


def test_each_trial_links_its_files_and_its_audit_run(
    proof: dict[str, Any], deskpilot_eval: Eval
) -> None:
    run: Path = proof["_out"] / "oracle"
    summary = json.loads((run / "summary.json").read_text())
    goals = {t.id: t.goal for t in load_suite("starter").tasks}
    md = (run / "summary.md").read_text()
    with AuditLog(deskpilot_eval.audit_db) as audit:
        assert audit.verify().ok
        for task in summary["tasks"]:
            assert task["median_tool_calls"] and task["median_tool_calls"] > 0
            for trial in task["runs"]:
                folder = run / trial["dir"]
                result = json.loads((folder / "result.json").read_text())
                assert result["status"] == "passed" and result["audit_run"] == trial["audit_run"]
                assert (folder / "transcript.md").is_file()
                assert f"({trial['dir']}/transcript.md)" in md
                events = audit.run_events(trial["audit_run"], images=False)
                kinds = [e.kind for e in events]
                assert kinds[0] == "run.started" and kinds[-1] == "run.finished"
                assert kinds.count("tool.call") == result["tool_calls"] > 0
                assert events[0].data["goal"].startswith(goals[task["id"]][:20])


def test_j1_finishes_the_suite_with_the_same_per_task_results_as_j2(
    proof: dict[str, Any], serial: dict[str, Any]
) -> None:
    """One task per family of the starter suite at -j 1 (one desktop at a time): one trial
    per task of the oracle and of doing nothing, each the same status as every trial of the
    -j 2 proof."""
    parallel = {r["id"]: (r["oracle"], r["noop"]) for r in proof["tasks"]}
    one_by_one = {r["id"]: (r["oracle"], r["noop"]) for r in serial["tasks"]}
    families = {t.family for t in load_suite("starter").tasks}
    assert {t.family for t in load_suite("starter").tasks if t.id in one_by_one} == families
    assert one_by_one == {t: (o[:1], n[:1]) for t, (o, n) in parallel.items() if t in one_by_one}, (
        serial["_stderr"]
    )
    assert all(len(set(o)) == len(set(n)) == 1 for o, n in parallel.values())  # all trials alike
    assert serial["proved"] is True and serial["_code"] == 0
