"""``make bench`` (second part): what a task of the starter suite costs.

For every task, in the same run and on this machine, one desktop at a time:

* the **oracle** policy (the task done by its scripted tool calls): seconds per task (the
  whole trial: sandbox, setup, the calls, the checks, teardown), the agent's part of them,
  tool calls and steps per task;
* the **noop** policy (nothing done): the harness's own cost per trial — the baseline; the
  ratio ``oracle_s / noop_s`` is what doing the task adds to setting it up and checking it;
* the oracle **without the per-step screenshots** (the trajectory's frame of the window after
  each step, on in every trial): ``frames_ratio`` = oracle seconds with them / without them,
  for the agent's part (where the frames are taken) and the whole trial;
* with ``--model PROVIDER:MODEL``: the model's trials too, with tokens in and out per task.

Writes ``bench/results/eval-cost.json`` and prints a table::

    python -m bench.eval_cost [--tasks GLOB] [--trials N] [--model M] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from deskpilot.config import load_settings
from deskpilot.eval.driver import Plan, execute
from deskpilot.eval.local import LocalBackend
from deskpilot.eval.policies import PolicySpec
from deskpilot.eval.store import final_attempts, read_results
from deskpilot.eval.suite import load_suite

RESULTS = Path(__file__).parent / "results"


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def measure(
    run: Path,
    policy: PolicySpec,
    args: argparse.Namespace,
    console: Console,
    *,
    frames: bool = True,
) -> dict[str, dict[str, Any]]:
    """Per task: medians over its trials of time, agent time, tool calls, steps, tokens."""
    settings = load_settings()
    suite = load_suite(args.suite)
    plan = Plan(suite, suite.select(args.tasks), policy, args.trials, frames=frames)
    backend = LocalBackend(run, 1, dict(settings.environ))
    execute(plan, run, backend, progress=lambda line: console.print(line, markup=False))
    rows: dict[str, list[dict[str, Any]]] = {}
    for key, row in final_attempts(read_results(run), 1).items():
        rows.setdefault(key.task, []).append(row)
    out = {}
    for task, trials in sorted(rows.items()):
        out[task] = {
            "passed": sum(r["status"] == "passed" for r in trials),
            "trials": len(trials),
            "s": _median([r["time"].get("total", 0.0) for r in trials]),
            "agent_s": _median([r["time"].get("agent", 0.0) for r in trials]),
            "tool_calls": _median([r["tool_calls"] for r in trials]),
            "steps": _median([r["steps"] for r in trials]),
            "tokens_in": _median([r["tokens_in"] for r in trials]),
            "tokens_out": _median([r["tokens_out"] for r in trials]),
        }
    return out


def _frames(with_: dict[str, dict[str, Any]], without: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the trajectory's screenshot per step costs: the same oracle trials, with and without
    (tasks that passed both ways only, so a failing run does not skew it)."""
    both = [t for t in with_ if t in without and with_[t]["passed"] and without[t]["passed"]]

    def total(rows: dict[str, dict[str, Any]], field: str) -> float:
        return round(sum(rows[t][field] or 0.0 for t in both), 3)

    agent_with, agent_without = total(with_, "agent_s"), total(without, "agent_s")
    s_with, s_without = total(with_, "s"), total(without, "s")
    return {
        "tasks": both,
        "tool_calls": sum(with_[t]["tool_calls"] for t in both),
        "agent_s_with": agent_with,
        "agent_s_without": agent_without,
        "agent_ratio": round(agent_with / agent_without, 2) if agent_without else None,
        "s_with": s_with,
        "s_without": s_without,
        "ratio": round(s_with / s_without, 2) if s_without else None,
        "per_task": {
            t: {"agent_s_with": with_[t]["agent_s"], "agent_s_without": without[t]["agent_s"]}
            for t in both
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="starter")
    parser.add_argument("--tasks", default=None)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--model", default=None, help="also measure this model (tokens)")
    parser.add_argument("--out", type=Path, default=RESULTS / "eval-cost.json")
    args = parser.parse_args(argv)
    console = Console(stderr=True, width=max(120, Console(stderr=True).width))
    policies = [PolicySpec("oracle"), PolicySpec("noop")]
    if args.model:
        policies.append(PolicySpec("model", args.model))
    with tempfile.TemporaryDirectory(prefix="deskpilot-bench-eval-") as tmp:
        measured = {p.label: measure(Path(tmp) / p.kind, p, args, console) for p in policies}
        bare = measure(Path(tmp) / "oracle-no-frames", policies[0], args, console, frames=False)
    oracle, noop = measured["oracle"], measured["noop"]
    table = Table(title="deskpilot eval: cost per task (one desktop at a time)")
    for column in ("task", "oracle s", "noop s", "oracle/noop", "agent s", "tool calls", "steps"):
        table.add_column(column, justify="left" if column == "task" else "right")
    model = measured.get(args.model or "", {})
    if model:
        for column in ("model s", "model passed", "tokens in", "tokens out"):
            table.add_column(column, justify="right")
    report: dict[str, Any] = {"tasks": {}, "model": args.model}
    for task, o in oracle.items():
        base = noop.get(task, {}).get("s") or None
        ratio = round(o["s"] / base, 2) if base and o["s"] else None
        entry = {"oracle": o, "noop": noop.get(task), "oracle_over_noop": ratio}
        cells = [
            task,
            f"{o['s']:.2f}",
            f"{base:.2f}" if base else "–",
            f"{ratio or '–'}",
            f"{o['agent_s']:.2f}",
            f"{o['tool_calls']:g}",
            f"{o['steps']:g}",
        ]
        if model:
            m = model.get(task, {})
            entry["model"] = m
            cells += [
                f"{m.get('s', 0):.1f}",
                f"{m.get('passed', 0)}/{m.get('trials', 0)}",
                f"{m.get('tokens_in', 0):g}",
                f"{m.get('tokens_out', 0):g}",
            ]
        report["tasks"][task] = entry
        table.add_row(*cells)
    totals = {
        "oracle_s": round(sum(o["s"] for o in oracle.values()), 2),
        "noop_s": round(sum(n["s"] for n in noop.values()), 2),
        "tool_calls": sum(o["tool_calls"] for o in oracle.values()),
        "oracle_passed": sum(o["passed"] for o in oracle.values()),
        "tasks": len(oracle),
    }
    report["totals"] = totals
    report["frames"] = _frames(oracle, bare)
    console.print(table)
    console.print(
        f"{totals['tasks']} tasks: oracle {totals['oracle_s']} s in all "
        f"({totals['oracle_passed']} passed), noop {totals['noop_s']} s, "
        f"{totals['tool_calls']:g} tool calls. oracle s: the whole trial (sandbox, setup, calls, "
        "checks, teardown); noop s: the same without the calls (the baseline)."
    )
    f = report["frames"]
    console.print(
        f"per-step screenshots: the oracle's agent part {f['agent_s_with']} s with them, "
        f"{f['agent_s_without']} s without (ratio {f['agent_ratio']}); whole trials "
        f"{f['s_with']} s vs {f['s_without']} s (ratio {f['ratio']}), {f['tool_calls']:g} steps"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
