"""``make bench``: deskpilot's window reads against OSWorld's pyatspi walk, side by side.

One sandbox desktop; for each app (gnome-calculator, mousepad with a 200-line file, gtk3-demo,
gtk4-demo, LibreOffice Writer with a 5-page document, Chromium on a 1,500-element page), one at
a time: start it, wait until its tree settles, then measure

* ``warm_ms`` — median of N back-to-back reads in this long-lived process, after a first one
  and the full reads a web engine's window gets after a visual change (``until_warm``);
* ``cold_ms`` — median over fresh processes of the first read after ``open_resolved``
  (bench/cold_read.py);
* ``baseline_ms`` — median of pyatspi walks of the same window (bench/pyatspi_walk.py, Debian's
  /usr/bin/python3), and ``speedup_cold``/``speedup_warm`` = baseline / deskpilot;
* sizes and coverage (bench/measure.py, bench/osworld.py),

then close it. A read is the body of ``read_screen_ax`` (``read_window``: snapshot + render).
Writes bench/results/snapshot.json (the table) and bench/results/snapshot-details.json (what
deskpilot missed, its heaviest lines, both texts, all samples), and prints the table.

Options: ``--apps a,b`` ``--cold-runs`` ``--warm-runs`` ``--baseline-runs`` ``--out`` ``--details``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from bench import report
from bench.apps import APPS, AppSpec, Launched, bench_env, launch, prepare_inputs
from bench.measure import Sizes, measure
from deskpilot.config import Settings
from deskpilot.desktop.base import Rect
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.sandbox import Sandbox
from deskpilot.tools.context import ToolContext
from deskpilot.tools.screen import header, read_window

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results"
WALKER = Path(__file__).parent / "pyatspi_walk.py"
SYSTEM_PYTHON = "/usr/bin/python3"

FIELDS = (
    "nodes", "cold_ms", "warm_ms", "baseline_ms", "speedup_cold", "speedup_warm", "chars",
    "baseline_chars", "widgets", "covered", "baseline_covered", "coverage",
    "baseline_coverage", "chars_per_widget", "baseline_chars_per_widget", "size_ratio",
)  # fmt: skip

Log = Callable[[str], None]

#: A read of an unchanged window that asks at most this many calls is a warm one (its
#: liveness call and the frame's children: 2).
WARM_CALLS = 10
#: How long the benchmark reads a window until a read is a warm one, at most (seconds).
WARM_WAIT_S = 10.0


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def row(
    nodes: int, cold: float, warm: float, baseline: float, sizes: Sizes
) -> dict[str, float | int | None]:
    """One app's object in snapshot.json: exactly FIELDS, in that order."""
    out: dict[str, float | int | None] = {
        "nodes": nodes,
        "cold_ms": round(cold, 1),
        "warm_ms": round(warm, 2),
        "baseline_ms": round(baseline, 1),
        "speedup_cold": round(baseline / cold, 1),
        "speedup_warm": round(baseline / warm, 1),
        "chars": sizes.chars,
        "baseline_chars": sizes.baseline_chars,
        "widgets": sizes.widgets,
        "covered": sizes.covered,
        "baseline_covered": sizes.baseline_covered,
        "coverage": round(sizes.coverage, 4),
        "baseline_coverage": round(sizes.baseline_coverage, 4),
        "chars_per_widget": _rounded(sizes.chars_per_widget, 1),
        "baseline_chars_per_widget": _rounded(sizes.baseline_chars_per_widget, 1),
        "size_ratio": _rounded(sizes.size_ratio, 3),
    }
    assert tuple(out) == FIELDS
    return out


def _clean_env(env: dict[str, str]) -> dict[str, str]:
    """The sandbox env without the venv's Python variables (for Debian's python3)."""
    return {k: v for k, v in env.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def run_walker(env: dict[str, str], pid: int, title: str, path: str, runs: int) -> dict[str, Any]:
    done = subprocess.run(
        [
            SYSTEM_PYTHON,
            str(WALKER),
            "--pid",
            str(pid),
            "--title",
            title,
            "--path",
            path,
            "--runs",
            str(runs),
        ],
        env=_clean_env(env),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pyatspi walk failed: {done.stderr.strip()[-800:]}")
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def run_cold(env: dict[str, str], xid: int, *flags: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.cold_read", str(xid), *flags],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cold read failed: {done.stderr.strip()[-800:]}")
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


class Bench:
    def __init__(
        self,
        sb: Sandbox,
        desktop: DesktopFacade,
        settings: Settings,
        env: dict[str, str],
        run: Path,
        args: argparse.Namespace,
        log: Log,
        step: Log,
    ) -> None:
        self.sb, self.desktop, self.settings, self.env = sb, desktop, settings, env
        self.run, self.args, self.log, self.step = run, args, log, step
        self.ctx = ToolContext(desktop=desktop, settings=settings, audit=discard)

    async def timed_read(self, launched: Launched) -> tuple[float, Any]:
        start = time.perf_counter()
        got = await read_window(self.ctx, launched.window, chrome=True)
        return (time.perf_counter() - start) * 1000, got

    async def until_warm(self, launched: Launched) -> int:
        """Read until a read is a warm one (at most WARM_CALLS calls): a web engine's window
        is read in full for 1.5 s after its pixels last changed (skills/pixels.py), and the
        launch's settle ends within that; once reads took 170 ms, few of the warm samples fell
        in it, at 60-90 ms most did. Returns the full reads it took (in the details)."""
        a11y = self.desktop.ports.a11y
        full = 0
        deadline = time.monotonic() + WARM_WAIT_S
        while time.monotonic() < deadline:
            sent = a11y.bus.sent  # type: ignore[attr-defined]
            await self.timed_read(launched)
            if a11y.bus.sent - sent <= WARM_CALLS:  # type: ignore[attr-defined]
                break
            full += 1
        return full

    async def app(self, spec: AppSpec) -> tuple[dict[str, Any], dict[str, Any]]:
        a = self.args
        self.step(f"{spec.name}: starting, waiting for its tree to settle")
        launched = await launch(spec, self.sb, self.desktop, self.run)
        try:
            return await self._measure(spec, launched, a)
        finally:
            self.step(f"{spec.name}: closing")
            await launched.close()

    async def _measure(
        self, spec: AppSpec, launched: Launched, a: argparse.Namespace
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        window = launched.window
        self.log(f"{spec.name}: window {window.title!r} {window.geometry}")
        self.step(f"{spec.name}: warm reads ({a.warm_runs} in this process)")
        first_ms, _ = await self.timed_read(launched)
        full = await self.until_warm(launched)
        warm = [(await self.timed_read(launched))[0] for _ in range(a.warm_runs)]
        cold: list[dict[str, Any]] = []
        for i in range(a.cold_runs):
            self.step(f"{spec.name}: cold read {i + 1}/{a.cold_runs} (fresh process)")
            cold.append(run_cold(self.env, window.handle))
        self.step(f"{spec.name}: traced cold and warm reads (phases and D-Bus calls)")
        traces = {
            "cold": run_cold(self.env, window.handle, "--trace"),
            "warm": run_cold(self.env, window.handle, "--trace", "--warm"),
        }
        self.step(f"{spec.name}: baseline — {a.baseline_runs} pyatspi walks (/usr/bin/python3)")
        located = await self.desktop.ports.a11y.trees.locate(window)  # type: ignore[attr-defined]
        frame = located[1] if located else ""
        walk = run_walker(self.env, window.pid, window.title, frame, a.baseline_runs)
        self.step(f"{spec.name}: coverage and sizes")
        _, got = await self.timed_read(launched)
        body, snap, ids = got.body, got.snap, got.ids
        width, height = await self.desktop.screen_size()
        screen = Rect(0, 0, width, height)
        head = header(window)
        sizes = measure(
            walk, window, screen, head, body, ids, snap.root, self.settings.read_budget_chars
        )
        cold_ms = statistics.median(c["ms"] for c in cold)
        warm_ms = statistics.median(warm)
        baseline_ms = statistics.median(walk["walk_ms"])
        result = row(len(snap.nodes()), cold_ms, warm_ms, baseline_ms, sizes)
        self.log(
            f"{spec.name}: {result['nodes']} nodes · cold {cold_ms:.1f} ms · warm "
            f"{warm_ms:.2f} ms · walk {baseline_ms:.0f} ms · coverage {sizes.covered}/"
            f"{sizes.widgets} (OSWorld {sizes.baseline_covered}) · {sizes.chars} vs "
            f"{sizes.baseline_chars} chars"
        )
        details = {
            "window": {
                "title": window.title,
                "geometry": list(_rect(window.geometry)),
                "pid": window.pid,
                "frame": frame,
            },
            "toolkit": f"{walk.get('toolkit')} {walk.get('toolkit_version')}",
            "baseline_nodes": len(walk["nodes"]),
            "baseline_rows": sizes.baseline_rows,
            "partial": snap.partial,
            "problems": snap.problems,
            "first_read_in_process_ms": round(first_ms, 2),
            "full_reads_before_warm": full,
            "warm_samples_ms": [round(v, 2) for v in warm],
            "cold_samples_ms": [round(c["ms"], 1) for c in cold],
            "cold_snapshot_ms": [round(c["snapshot_ms"], 1) for c in cold],
            "cold_open_ms": [round(c["open_ms"], 1) for c in cold],
            "cold_nodes": [c["nodes"] for c in cold],
            "cold_coverage": [round(sizes.coverage_of(c["keys"]), 4) for c in cold],
            "baseline_samples_ms": [round(v, 1) for v in walk["walk_ms"]],
            "traces": {k: {f: v for f, v in t.items() if f != "keys"} for k, t in traces.items()},
            "matched_by_fallback": sizes.matched_by_fallback,
            "matched_by_wrapper": sizes.matched_by_wrapper,
            "missing": sizes.missing,
            "baseline_missing_roles": sizes.baseline_missing_roles,
            "widget_lines": sizes.widget_lines,
            "widget_line_chars": sizes.widget_line_chars,
            "other_lines": sizes.other_lines,
            "other_line_chars": sizes.other_line_chars,
            "heavy_lines": sizes.heavy_lines,
            "text": head + "\n" + body,
            "baseline_text": _tsv(walk),
        }
        return result, details


def _rect(r: Rect) -> tuple[int, int, int, int]:
    return (r.x, r.y, r.width, r.height)


def _tsv(walk: dict[str, Any]) -> str:
    from bench import osworld

    return osworld.linearize(osworld.filter_nodes(walk["nodes"]))


async def run_all(
    args: argparse.Namespace, console: Console
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    names = args.apps
    results: dict[str, Any] = {}
    details: dict[str, Any] = {}
    errors: dict[str, str] = {}
    started = time.monotonic()
    with console.status("starting the sandbox desktop") as status:

        def step(text: str) -> None:
            status.update(f"[bold]{text}")

        def log(text: str) -> None:
            console.log(text)

        with Sandbox(width=1280, height=800) as sb, tempfile.TemporaryDirectory() as home:
            env, settings = bench_env(sb, home)
            assert sb.info is not None
            run = Path(sb.info.runtime_dir) / "bench"
            step("preparing inputs (soffice --convert-to odt)")
            prepare_inputs(sb, run, writer="libreoffice-writer" in names)
            desktop = await open_resolved(settings)
            try:
                bench = Bench(sb, desktop, settings, env, run, args, log, step)
                for name in names:
                    try:
                        results[name], details[name] = await bench.app(APPS[name])
                    except (RuntimeError, TimeoutError, OSError, KeyError, ValueError) as exc:
                        errors[name] = f"{type(exc).__name__}: {exc}"
                        console.log(f"[red]{name}: failed — {errors[name]}")
            finally:
                await desktop.close()
    meta = {
        "duration_s": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "runs": {"cold": args.cold_runs, "warm": args.warm_runs, "baseline": args.baseline_runs},
        "commit": _commit(),
        "errors": errors,
        "definitions": report.FOOTER,
    }
    return results, details, meta


def _commit() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.snapshot", description=__doc__.split("\n")[0])
    p.add_argument("--apps", default=",".join(APPS), help="comma-separated: " + ", ".join(APPS))
    p.add_argument("--cold-runs", type=int, default=5)
    p.add_argument("--warm-runs", type=int, default=20)
    p.add_argument("--baseline-runs", type=int, default=5)
    p.add_argument("--out", type=Path, default=RESULTS / "snapshot.json")
    p.add_argument("--details", type=Path, default=RESULTS / "snapshot-details.json")
    args = p.parse_args(argv)
    if min(args.cold_runs, args.warm_runs, args.baseline_runs) < 1:
        p.error("every --*-runs must be at least 1")
    args.apps = [n.strip() for n in args.apps.split(",") if n.strip()]
    unknown = [n for n in args.apps if n not in APPS]
    if unknown or not args.apps:  # before anything runs or results are overwritten
        p.error(f"--apps: unknown or no app ({', '.join(unknown)}); known: {', '.join(APPS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    console = Console(width=max(Console().width, 180))
    results, details, meta = asyncio.run(run_all(args, console))
    meta["notes"] = report.notes(results, details)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    args.details.parent.mkdir(parents=True, exist_ok=True)
    args.details.write_text(
        json.dumps({"meta": meta, "apps": details}, indent=2, ensure_ascii=False) + "\n"
    )
    report.print_table(console, results, meta)
    console.print(f"wrote {args.out} and {args.details} in {meta['duration_s']:.0f} s")
    return 1 if meta["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
