"""The cost-per-task benchmark runs and writes its figures (timings are never asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.eval_cost import main

from tests.eval_runs import Eval


def test_cost_per_task_is_measured_against_the_noop_baseline(
    deskpilot_eval: Eval, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESKPILOT_HOME", str(deskpilot_eval.home))
    out = tmp_path / "cost.json"
    main(["--tasks", "zenity.question", "--out", str(out)])
    report = json.loads(out.read_text())
    entry = report["tasks"]["zenity.question"]
    assert entry["oracle"]["passed"] == 1 and entry["noop"]["passed"] == 0
    assert entry["oracle"]["tool_calls"] >= 2 and entry["oracle"]["s"] > 0
    assert entry["oracle_over_noop"] is not None
    assert report["totals"]["tasks"] == 1
    frames = report["frames"]  # the per-step screenshots, with vs without, in the same run
    assert frames["tasks"] == ["zenity.question"] and frames["agent_ratio"] is not None
