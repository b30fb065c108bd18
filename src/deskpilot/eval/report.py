"""What a run found: per task and overall, with explicit statuses and Wilson intervals.

Success rate = passed / scored trials (passed, failed, timeout); trials that ended in a
setup, checker or infrastructure error are counted apart, never as the agent's failures.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deskpilot.eval.store import SCORED, STATUSES, TrialKey, trial_dir

Z95 = 1.959963984540054


def wilson(passed: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate (0..1); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = passed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    return low, 1.0 if passed == n else min(1.0, centre + half)


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _stats(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    statuses = Counter(r["status"] for r in results)
    scored = sum(statuses[s] for s in SCORED)
    passed = statuses["passed"]
    low, high = wilson(passed, scored)
    times = [float(r.get("time", {}).get("total", 0.0)) for r in results]
    return {
        "passed": passed,
        "total": len(results),
        "scored": scored,
        "rate": round(passed / scored, 4) if scored else None,
        "wilson95": [round(low, 4), round(high, 4)],
        "counts": {s: statuses[s] for s in STATUSES if statuses[s]},
        "retried": sum(1 for r in results if r.get("attempts", 1) > 1),
        "median_steps": _median([r.get("steps", 0) for r in results]),
        "median_tool_calls": _median([r.get("tool_calls", 0) for r in results]),
        "tool_errors": sum(r.get("tool_errors", 0) for r in results),
        "tokens_in": sum(r.get("tokens_in", 0) for r in results),
        "tokens_out": sum(r.get("tokens_out", 0) for r in results),
        "median_time_s": _median(times),
        "time_s": round(sum(times), 3),
    }


def summarize(
    run: Path, manifest: dict[str, Any], final: dict[TrialKey, dict[str, Any]]
) -> dict[str, Any]:
    tasks = []
    for task_id in manifest["tasks"]:
        rows = [final[k] for k in sorted(final) if k.task == task_id]
        per = _stats(rows)
        per.update(
            {
                "id": task_id,
                "trials": manifest["trials"],
                "done": len(rows),
                "statuses": [r["status"] for r in rows],
                "runs": [_link(run, k, r) for k, r in sorted(final.items()) if k.task == task_id],
            }
        )
        tasks.append(per)
    overall = _stats(list(final.values()))
    overall["planned"] = len(manifest["tasks"]) * manifest["trials"]
    return {
        "run": str(run),
        "suite": manifest.get("suite"),
        "policy": manifest.get("policy_label"),
        "backend": manifest.get("backend"),
        "complete": overall["total"] == overall["planned"],
        "overall": overall,
        "tasks": tasks,
    }


def _link(run: Path, key: TrialKey, r: dict[str, Any]) -> dict[str, Any]:
    folder = trial_dir(run, key, int(r["attempt"])).relative_to(run)
    return {
        "trial": key.trial + 1,
        "status": r["status"],
        "attempts": r.get("attempts", 1),
        "detail": r.get("detail", ""),
        "dir": str(folder),
        "audit_run": r.get("audit_run"),
        "node": r.get("node"),
    }


def _pct(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.0f}%"


def _ci(pair: Sequence[float]) -> str:
    return f"{100 * pair[0]:.0f}–{100 * pair[1]:.0f}%"


def markdown(summary: dict[str, Any]) -> str:
    o = summary["overall"]
    counts = ", ".join(f"{k} {v}" for k, v in o["counts"].items()) or "none"
    lines = [
        f"# deskpilot eval: {summary['suite']} · {summary['policy']}",
        "",
        f"**{o['passed']}/{o['scored']} passed** ({_pct(o['rate'])}, Wilson 95% "
        f"{_ci(o['wilson95'])}) · {o['total']} of {o['planned']} trials done · {counts} · "
        f"{o['retried']} retried after an infrastructure error · backend {summary['backend']}",
        "",
        "Errors (setup, checker, infrastructure) are not counted as failures: the rate is "
        "passed / (passed + failed + timeout).",
        "",
        "| task | passed | rate (95% CI) | statuses | steps | tool calls | tool errors "
        "| tokens in/out | s / trial |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in summary["tasks"]:
        lines.append(
            f"| {t['id']} | {t['passed']}/{t['scored']} | {_pct(t['rate'])} "
            f"({_ci(t['wilson95'])}) | {' '.join(t['statuses']) or '–'} | "
            f"{t['median_steps'] if t['median_steps'] is not None else '–'} | "
            f"{t['median_tool_calls'] if t['median_tool_calls'] is not None else '–'} | "
            f"{t['tool_errors']} | {t['tokens_in']}/{t['tokens_out']} | "
            f"{t['median_time_s'] if t['median_time_s'] is not None else '–'} |"
        )
    lines += ["", "## Trials", ""]
    for t in summary["tasks"]:
        for r in t["runs"]:
            retry = f" after {r['attempts'] - 1} retry" if r["attempts"] > 1 else ""
            audit = f" · audit run `{r['audit_run']}`" if r.get("audit_run") else ""
            detail = f" — {r['detail'][:160]}" if r["detail"] and r["status"] != "passed" else ""
            lines.append(
                f"- {t['id']} #{r['trial']}: **{r['status']}**{retry} · "
                f"[trial]({r['dir']}/) · [transcript]({r['dir']}/transcript.md){audit}{detail}"
            )
    lines.append("")
    lines.append("Show a run's audit trail with `deskpilot log show RUN_ID`.")
    return "\n".join(lines) + "\n"


def brief(summary: dict[str, Any]) -> dict[str, Any]:
    """What ``--json`` prints: per task id, trials, passed, statuses; overall passed, total."""
    o = summary["overall"]
    return {
        "run": summary["run"],
        "complete": summary["complete"],
        "overall": {k: o[k] for k in ("passed", "total", "scored", "rate", "wilson95", "counts")},
        "tasks": [
            {k: t[k] for k in ("id", "trials", "passed", "statuses", "rate", "wilson95")}
            for t in summary["tasks"]
        ],
    }
