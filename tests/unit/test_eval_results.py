"""Results: Wilson intervals, which attempt stands for a trial, one writer, torn lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deskpilot.errors import EvalError
from deskpilot.eval.report import brief, markdown, summarize, wilson
from deskpilot.eval.store import RunStore, TrialKey, final_attempts, read_results


def test_wilson_interval_matches_known_values() -> None:
    low, high = wilson(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.49, 0.943)
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(3, 3)
    assert round(low, 3) == 0.439 and high == 1.0
    low, high = wilson(0, 3)
    assert low == 0.0 and round(high, 3) == 0.561


def result(task: str, trial: int, attempt: int, status: str) -> dict[str, Any]:
    return {"task": task, "trial": trial, "attempt": attempt, "status": status, "time": {}}


def test_only_infrastructure_errors_leave_a_trial_open_until_retries_are_used() -> None:
    rows = [
        result("a", 0, 1, "infra_error"),
        result("a", 0, 2, "passed"),
        result("a", 1, 1, "infra_error"),  # one retry left: open
        result("b", 0, 1, "checker_error"),  # final: never retried
        result("b", 1, 1, "infra_error"),
        result("b", 1, 2, "infra_error"),  # retries used up: final
    ]
    done = final_attempts(rows, retries=1)
    assert done[TrialKey("a", 0)]["status"] == "passed" and done[TrialKey("a", 0)]["attempts"] == 2
    assert TrialKey("a", 1) not in done
    assert done[TrialKey("b", 0)]["status"] == "checker_error"
    assert done[TrialKey("b", 1)]["attempts"] == 2


MANIFEST = {
    "created": "t0",
    "suite_digest": "d",
    "tasks": ["a", "b"],
    "trials": 2,
    "policy": {"kind": "oracle"},
    "policy_label": "oracle",
    "suite": "s",
    "backend": "local",
    "retries": 1,
}


def test_the_store_is_single_writer_drops_torn_lines_and_checks_resumes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as store:
        store.open(MANIFEST, resume=False)
        store.append(result("a", 0, 1, "passed"))
        with pytest.raises(EvalError, match="being written by another"):
            RunStore(run).open(MANIFEST, resume=True)
    with (run / "results.jsonl").open("a") as fh:
        fh.write('{"task": "a", "trial": 1, "att')  # killed mid-write
    assert len(read_results(run)) == 1
    with pytest.raises(EvalError, match="add --resume"):
        RunStore(run).open(MANIFEST, resume=False)
    with pytest.raises(EvalError, match="its trials differ"):
        RunStore(run).open({**MANIFEST, "trials": 3}, resume=True)
    with RunStore(run) as store:
        assert [r["task"] for r in store.open({**MANIFEST, "created": "t1"}, resume=True)] == ["a"]
        store.append(result("a", 1, 1, "failed"))
    lines = (run / "results.jsonl").read_text().splitlines()
    assert [json.loads(x)["trial"] for x in lines] == [0, 1]  # the torn line is gone
    assert json.loads((run / "run.json").read_text())["resumed"] == ["t1"]
    with pytest.raises(EvalError, match="nothing to resume"):
        RunStore(tmp_path / "empty").open(MANIFEST, resume=True)


def test_summary_counts_errors_apart_from_failures(tmp_path: Path) -> None:
    final = final_attempts(
        [
            result("a", 1, 1, "passed"),
            result("a", 2, 1, "failed"),
            result("b", 1, 1, "setup_error"),
            result("b", 2, 1, "infra_error"),
            result("b", 2, 2, "timeout"),
        ],
        retries=1,
    )
    summary = summarize(tmp_path, MANIFEST, final)
    o = summary["overall"]
    assert (o["passed"], o["scored"], o["total"], o["retried"]) == (1, 3, 4, 1)
    assert o["counts"] == {"passed": 1, "failed": 1, "timeout": 1, "setup_error": 1}
    short = brief(summary)
    assert short["overall"]["passed"] == 1 and short["overall"]["total"] == 4
    assert [(t["id"], t["statuses"]) for t in short["tasks"]] == [
        ("a", ["passed", "failed"]),
        ("b", ["setup_error", "timeout"]),
    ]
    text = markdown(summary)
    assert "**1/3 passed**" in text and "after 1 retry" in text
    assert "trials/b/t2-a2/transcript.md" in text


def test_pass_at_k_pass_hat_k_and_the_clustered_interval() -> None:
    from deskpilot.eval.report import clustered, pass_at, pass_hat

    assert pass_at(3, 1, 1) == pytest.approx(1 / 3) and pass_hat(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at(3, 1, 3) == 1.0 and pass_hat(3, 1, 3) == 0.0
    assert pass_at(4, 2, 2) == pytest.approx(1 - 1 / 6) and pass_hat(4, 2, 2) == pytest.approx(
        1 / 6
    )
    assert pass_at(2, 1, 3) is None  # k beyond the trials run
    # the same 50% from tasks that all pass or all fail is less certain than from tasks that
    # each pass half their trials: clustering by task says so, a trial count would not
    rate, low, high = clustered([(4, 4), (0, 4), (4, 4), (0, 4)])
    rate2, low2, high2 = clustered([(2, 4), (2, 4), (2, 4), (2, 4)])
    assert rate == rate2 == 0.5 and high - low > high2 - low2 and low2 == high2 == 0.5


def test_families_and_trial_numbers_in_the_report(tmp_path: Path) -> None:
    rows = [
        result(t, k, 1, s)
        for t, k, s in [
            ("w.a", 1, "passed"),
            ("w.a", 2, "passed"),
            ("w.b", 1, "failed"),
            ("w.b", 2, "checker_error"),
            ("z.c", 1, "passed"),
            ("z.c", 2, "failed"),
        ]
    ]
    for r in rows:
        r["family"] = r["task"].split(".")[0]
    manifest = {**MANIFEST, "tasks": ["w.a", "w.b", "z.c"], "trials": 2}
    summary = summarize(tmp_path, manifest, final_attempts(rows, retries=1))
    fams = {f["family"]: f for f in summary["families"]}
    assert (fams["w"]["passed"], fams["w"]["scored"], fams["w"]["tasks"]) == (2, 3, 2)
    assert fams["w"]["counts"]["checker_error"] == 1
    assert fams["z"]["pass@k"]["2"] == 1.0 and fams["z"]["pass^k"]["2"] == 0.0
    # w.b has one scored trial (the other is a checker error): it has no pass^2
    assert summary["overall"]["pass^k"]["2"] == pytest.approx((1 + 0) / 2)
    text = markdown(summary)
    assert "## Families" in text and "## Errors by status" in text
    assert "| w | 0 | 1 | 0 | 0 |" in text  # setup, checker, infra errors, retried
    # trial numbers: the same in results, folders and the report
    assert "w.b #2: **checker_error**" in text and "(trials/w.b/t2-a1/transcript.md)" in text


def test_a_task_without_an_oracle_is_not_proved_and_says_so() -> None:
    from deskpilot.cli.eval_cmd import prove

    noop = {
        "tasks": [
            {"id": "a", "statuses": ["failed"], "done": 1, "trials": 1},
            {"id": "b", "statuses": ["failed"], "done": 1, "trials": 1},
        ]
    }
    oracle = {"tasks": [{"id": "a", "statuses": ["passed"], "done": 1, "trials": 1}]}
    verdict = prove(oracle, noop, ["b"])
    rows = {r["id"]: r for r in verdict["tasks"]}
    assert rows["a"]["proved"] and not rows["b"]["proved"] and not verdict["proved"]
    assert rows["b"]["no_oracle"] and rows["b"]["oracle"] == []  # not "oracle failed"
