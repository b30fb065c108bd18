"""What a run found, in figures a paper can use.

- Success rate = passed / scored trials (passed, failed, timeout); trials that ended in a
  setup, checker or infrastructure error are counted apart (an errors table by status),
  never as the agent's failures.
- Per task and per family: pass@1 with its Wilson 95% interval; over the trials of a task,
  pass@k (at least one of k trials passes) and pass^k (all k pass), each the unbiased
  estimator from the task's n trials (k ≤ n), averaged over tasks for a family or the suite.
- For the suite: a 95% interval clustered by task (trials of one task are not independent:
  the standard error comes from the spread of per-task results, not from the trial count).
- Trial numbers are the same in results.jsonl, the trial folders and the report; each trial
  links its folder and its trajectory (transcript.md: the steps with their screenshots).
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


def pass_at(n: int, c: int, k: int) -> float | None:
    """P(at least one of k trials passes), unbiased from c passes in n trials."""
    if k > n or n == 0:
        return None
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat(n: int, c: int, k: int) -> float | None:
    """P(all k trials pass) — pass^k — unbiased from c passes in n trials."""
    if k > n or n == 0:
        return None
    return math.comb(c, k) / math.comb(n, k)


def clustered(rows: Sequence[tuple[int, int]], z: float = Z95) -> tuple[float, float, float]:
    """(rate, low, high) over tasks given (passed, scored) per task, with a cluster-robust
    standard error (tasks are the clusters)."""
    total = sum(n for _, n in rows)
    if total == 0:
        return 0.0, 0.0, 1.0
    rate = sum(c for c, _ in rows) / total
    se = math.sqrt(sum((c - rate * n) ** 2 for c, n in rows)) / total
    if len(rows) > 1:
        se *= math.sqrt(len(rows) / (len(rows) - 1))  # small-sample correction
    return rate, max(0.0, rate - z * se), min(1.0, rate + z * se)


def _ks(trials: int) -> list[int]:
    return sorted({k for k in (1, 2, 3, 5, 10, trials) if 1 <= k <= trials})


def _per_k(tasks: Sequence[dict[str, Any]], trials: int) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {"pass@k": {}, "pass^k": {}}
    for k in _ks(trials):
        for name, func in (("pass@k", pass_at), ("pass^k", pass_hat)):
            values = [func(t["scored"], t["passed"], k) for t in tasks]
            known = [v for v in values if v is not None]
            out[name][str(k)] = round(statistics.fmean(known), 4) if known else None
    return out


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
        per["family"] = (
            next((r.get("family") for r in rows if r.get("family")), "")
            or (task_id.split(".", 1)[0])
        )
        per.update(_per_k([per], manifest["trials"]))
        tasks.append(per)
    overall = _stats(list(final.values()))
    overall["planned"] = len(manifest["tasks"]) * manifest["trials"]
    overall.update(_per_k(tasks, manifest["trials"]))
    _rate, low, high = clustered([(t["passed"], t["scored"]) for t in tasks])
    overall["clustered95"] = [round(low, 4), round(high, 4)]
    families = []
    for family in sorted({t["family"] for t in tasks}):
        mine = [t for t in tasks if t["family"] == family]
        rows_f = [r for r in final.values() if (r.get("family") or "") == family] or [
            r for k, r in final.items() if any(t["id"] == k.task for t in mine)
        ]
        fam = _stats(rows_f)
        fam.update({"family": family, "tasks": len(mine)})
        fam.update(_per_k(mine, manifest["trials"]))
        _r, lo, hi = clustered([(t["passed"], t["scored"]) for t in mine])
        fam["clustered95"] = [round(lo, 4), round(hi, 4)]
        families.append(fam)
    return {
        "run": str(run),
        "suite": manifest.get("suite"),
        "policy": manifest.get("policy_label"),
        "backend": manifest.get("backend"),
        "complete": overall["total"] == overall["planned"],
        "overall": overall,
        "families": families,
        "tasks": tasks,
    }


def _link(run: Path, key: TrialKey, r: dict[str, Any]) -> dict[str, Any]:
    folder = trial_dir(run, key, int(r["attempt"])).relative_to(run)
    return {
        "trial": key.trial,
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


def _k_cells(stats: dict[str, Any], ks: list[str]) -> str:
    return " | ".join(
        f"{_pct(stats['pass@k'].get(k))} / {_pct(stats['pass^k'].get(k))}" for k in ks
    )


def _interrupted(summary: dict[str, Any]) -> list[str]:
    cut = summary.get("interrupted")
    if not cut:
        return []
    names = ", ".join(cut.get("trials", [])) or "none running"
    return [
        f"**Interrupted** at {cut.get('at', '?')}: the report covers the trials that "
        f"finished; cut short (not counted, run again by --resume): {names}.",
        "",
    ]


def markdown(summary: dict[str, Any]) -> str:
    o = summary["overall"]
    counts = ", ".join(f"{k} {v}" for k, v in o["counts"].items()) or "none"
    ks = list(o.get("pass@k", {}))
    lines = [
        f"# deskpilot eval: {summary['suite']} · {summary['policy']}",
        "",
        f"**{o['passed']}/{o['scored']} passed** ({_pct(o['rate'])}; Wilson 95% "
        f"{_ci(o['wilson95'])}; clustered by task 95% {_ci(o.get('clustered95', [0, 1]))}) · "
        f"{o['total']} of {o['planned']} trials done · {counts} · "
        f"{o['retried']} retried after an infrastructure error · backend {summary['backend']}",
        "",
        *_interrupted(summary),
        "Errors (setup, checker, infrastructure) are not counted as failures: the rate is "
        "passed / (passed + failed + timeout). pass@k: at least one of k trials passes; "
        "pass^k: all k pass (unbiased estimates from each task's trials, averaged over tasks).",
        "",
        "## Families",
        "",
        "| family | tasks | passed | pass@1 (Wilson 95%) | clustered 95% | "
        + " | ".join(f"pass@{k} / pass^{k}" for k in ks)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(ks),
    ]
    for f in summary.get("families", []):
        lines.append(
            f"| {f['family']} | {f['tasks']} | {f['passed']}/{f['scored']} | "
            f"{_pct(f['rate'])} ({_ci(f['wilson95'])}) | {_ci(f['clustered95'])} | "
            f"{_k_cells(f, ks)} |"
        )
    lines.append(
        f"| **all** | {len(summary['tasks'])} | {o['passed']}/{o['scored']} | "
        f"{_pct(o['rate'])} ({_ci(o['wilson95'])}) | "
        f"{_ci(o.get('clustered95', [0, 1]))} | {_k_cells(o, ks)} |"
    )
    errors = [s for s in STATUSES if s not in SCORED]
    lines += [
        "",
        "## Errors by status",
        "",
        "| family | " + " | ".join(errors) + " | retried |",
        "|---|" + "---|" * (len(errors) + 1),
    ]
    for f in summary.get("families", []):
        lines.append(
            f"| {f['family']} | "
            + " | ".join(str(f["counts"].get(e, 0)) for e in errors)
            + f" | {f['retried']} |"
        )
    lines.append(
        "| **all** | "
        + " | ".join(str(o["counts"].get(e, 0)) for e in errors)
        + f" | {o['retried']} |"
    )
    lines += [
        "",
        "## Tasks",
        "",
        "| task | family | passed | pass@1 (95% CI) | statuses | steps | tool calls | "
        "tool errors | tokens in/out | s / trial |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in summary["tasks"]:
        lines.append(
            f"| {t['id']} | {t.get('family', '')} | {t['passed']}/{t['scored']} | "
            f"{_pct(t['rate'])} ({_ci(t['wilson95'])}) | {' '.join(t['statuses']) or '–'} | "
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
                f"[trajectory]({r['dir']}/transcript.md) · [trial]({r['dir']}/){audit}{detail}"
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
        "overall": {
            k: o[k]
            for k in (
                "passed",
                "total",
                "scored",
                "rate",
                "wilson95",
                "counts",
                "clustered95",
                "pass@k",
                "pass^k",
            )
            if k in o
        },
        "families": [
            {
                k: f[k]
                for k in (
                    "family",
                    "tasks",
                    "passed",
                    "scored",
                    "rate",
                    "wilson95",
                    "clustered95",
                    "pass@k",
                    "pass^k",
                    "counts",
                )
            }
            for f in summary.get("families", [])
        ],
        "tasks": [
            {
                k: t[k]
                for k in (
                    "id",
                    "family",
                    "trials",
                    "passed",
                    "statuses",
                    "rate",
                    "wilson95",
                    "pass@k",
                    "pass^k",
                )
            }
            for t in summary["tasks"]
        ],
    }
