"""The benchmark's table: snapshot.json's columns with pass/fail marks against issue 6's targets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.apps import APPS

#: Ratio targets (issue 6), for the windows with timing targets (Chromium, LibreOffice).
COLD_SPEEDUP = 15.0
WARM_SPEEDUP = 100.0
SIZE_RATIO = 0.5

FOOTER = [
    "read = read_window() of tools/screen.py, the body of read_screen_ax: "
    "DesktopFacade.snapshot + Renderer.render (window already resolved).",
    "cold_ms: median over fresh processes (python -m bench.cold_read) of the first read after "
    "open_resolved; process start, imports and the bus connection are not included; the "
    "app is running and settled.",
    "warm_ms: median of back-to-back reads in the long-lived benchmark process, after a first "
    "read of the same unchanged window.",
    "baseline_ms: median of per-node pyatspi walks of the same frame (role, name, states, "
    "extents, children; Debian /usr/bin/python3 + python3-pyatspi) — fewer calls per node than "
    "OSWorld's server makes, so a lower bound of its cost.",
    "chars: the read_screen_ax header line + the rendered text; baseline_chars: OSWorld's TSV "
    "(header row + one row per node kept by its filter) of the same window.",
    "widgets: widget-role or EDITABLE nodes, SHOWING+VISIBLE (GTK 4: VISIBLE) under no hidden "
    "ancestor, non-zero bounds intersecting the screen, from the walk; covered: shown with an "
    "@ID (matched by bus+path); baseline_covered: kept as a TSV row.",
    "chars_per_widget = chars / covered; size_ratio = chars_per_widget / "
    "baseline_chars_per_widget ('—' where OSWorld covers no widget).",
    "Targets: cold ≤100 ms Chromium, ≤150 ms LibreOffice, ≥15× the walk; warm ≤10 ms, ≥100×; "
    "coverage 100%; size_ratio ≤0.5. ✓/✗ only where a target applies.",
]


def _mark(ok: bool | None) -> str:
    if ok is None:
        return ""
    return " [green]✓[/]" if ok else " [red]✗[/]"


def _num(value: Any, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def marks(name: str, r: Mapping[str, Any]) -> dict[str, bool | None]:
    """Which targets this app's row meets (None: no target for that column)."""
    spec = APPS.get(name)
    cold_t = spec.cold_target_ms if spec else None
    warm_t = spec.warm_target_ms if spec else None
    ratio = r["size_ratio"]
    return {
        "cold_ms": None if cold_t is None else r["cold_ms"] <= cold_t,
        "speedup_cold": None if cold_t is None else r["speedup_cold"] >= COLD_SPEEDUP,
        "warm_ms": None if warm_t is None else r["warm_ms"] <= warm_t,
        "speedup_warm": None if warm_t is None else r["speedup_warm"] >= WARM_SPEEDUP,
        "coverage": r["coverage"] >= 1.0,
        "size_ratio": None if ratio is None else ratio <= SIZE_RATIO,
    }


def notes(results: Mapping[str, Any], details: Mapping[str, Any]) -> list[str]:
    """Checks on the reads behind the numbers: cold reads that saw less than the settled read,
    and node counts that differ from the walk's."""
    out: list[str] = []
    for name, r in results.items():
        d = details.get(name, {})
        walk = d.get("baseline_nodes")
        if walk is not None and walk != r["nodes"]:
            out.append(f"{name}: deskpilot's snapshot has {r['nodes']} nodes, the walk {walk}")
        cold_nodes = sorted(d.get("cold_nodes", []))
        if cold_nodes and cold_nodes[len(cold_nodes) // 2] != r["nodes"]:
            out.append(
                f"{name}: cold reads returned {cold_nodes[len(cold_nodes) // 2]} nodes "
                f"(the settled read {r['nodes']})"
            )
        cold_cov = sorted(d.get("cold_coverage", []))
        if cold_cov and cold_cov[len(cold_cov) // 2] < r["coverage"]:
            out.append(
                f"{name}: cold reads showed {cold_cov[len(cold_cov) // 2]:.0%} of the widgets "
                f"with an @ID (the settled read {r['coverage']:.0%})"
            )
        if d.get("partial"):
            out.append(f"{name}: the read was partial: {'; '.join(d.get('problems', []))}")
    return out


def print_table(console: Console, results: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    table = Table(
        title="deskpilot reads vs OSWorld's pyatspi walk (same run, same windows)",
        caption="\n".join(FOOTER),
        caption_justify="left",
    )
    columns = [
        ("app", "left"),
        ("nodes", "right"),
        ("cold\nms", "right"),
        ("warm\nms", "right"),
        ("baseline\nms", "right"),
        ("speedup\ncold", "right"),
        ("speedup\nwarm", "right"),
        ("chars", "right"),
        ("baseline\nchars", "right"),
        ("widgets", "right"),
        ("covered", "right"),
        ("baseline\ncovered", "right"),
        ("coverage", "right"),
        ("baseline\ncoverage", "right"),
        ("chars/\nwidget", "right"),
        ("baseline\nchars/\nwidget", "right"),
        ("size\nratio", "right"),
    ]
    for title, justify in columns:
        table.add_column(title, justify=justify)  # type: ignore[arg-type]
    met = total = 0
    for name, r in results.items():
        m = marks(name, r)
        for ok in m.values():
            if ok is not None:
                total += 1
                met += ok
        table.add_row(
            name,
            str(r["nodes"]),
            _num(r["cold_ms"], ".1f") + _mark(m["cold_ms"]),
            _num(r["warm_ms"], ".2f") + _mark(m["warm_ms"]),
            _num(r["baseline_ms"], ".0f"),
            _num(r["speedup_cold"], ".1f") + "×" + _mark(m["speedup_cold"]),
            _num(r["speedup_warm"], ".0f") + "×" + _mark(m["speedup_warm"]),
            str(r["chars"]),
            str(r["baseline_chars"]),
            str(r["widgets"]),
            str(r["covered"]),
            str(r["baseline_covered"]),
            f"{r['coverage']:.0%}" + _mark(m["coverage"]),
            f"{r['baseline_coverage']:.0%}",
            _num(r["chars_per_widget"], ".1f"),
            _num(r["baseline_chars_per_widget"], ".1f"),
            _num(r["size_ratio"], ".2f") + _mark(m["size_ratio"]),
        )
    console.print(table)
    runs = meta.get("runs", {})
    console.print(
        f"targets met: {met}/{total} · runs: cold {runs.get('cold')}, warm {runs.get('warm')}, "
        f"baseline {runs.get('baseline')} · {meta.get('cpus')} CPUs, load "
        f"{meta.get('load_average')} · commit {meta.get('commit')}"
    )
    for note in meta.get("notes", []):
        console.print(f"[yellow]⚠ {note}")
    for name, err in (meta.get("errors") or {}).items():
        console.print(f"[red]{name}: {err}")
