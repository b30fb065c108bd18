"""``make bench``: a LibreOffice Calc sheet read by deskpilot, beside OSWorld's way.

One sandbox desktop, Calc on ``fixtures/calc-sheet.fods`` (201 rows × 5 columns: more than a
screen shows). Each measure starts with a soffice that answers and reports the wall time, what
it read and soffice's resident memory (VmRSS) before and after — and whether soffice still
answered a small call (``GetState`` on its frame, from a separate bus connection) afterwards:

* ``deskpilot`` — ``read_window`` (the body of ``read_screen_ax``): a first read, then
  ``--reads`` more; the time is their median;
* ``osworld`` — bench/pyatspi_walk.py ``--osworld`` under Debian's /usr/bin/python3: the frame
  walked as OSWorld's server walks it (at most 1,024 children a node, the sheet's showing cells
  asked one index at a time), once, bounded by ``--timeout``;
* ``walk`` — the same walk enumerating every child a node reports (what a generic AT-SPI
  reader does; the sheet reports 2^31 - 1), bounded by ``--timeout``.

A walk that does not finish in time is killed and reported as ``timed out``; a soffice that no
longer answers (or was left growing) is killed and started again for the next measure. Writes
bench/results/calc.json and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.apps import AppSpec, Launched, bench_env, launch
from bench.make_fixtures import CALC_FILE, write_all
from bench.snapshot import SYSTEM_PYTHON, WALKER, _clean_env
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.sandbox import Sandbox
from deskpilot.tools.context import ToolContext
from deskpilot.tools.screen import read_window

RESULTS = Path(__file__).parent / "results"
MEASURES = ("deskpilot", "osworld", "walk")

CALC = AppSpec(
    "libreoffice-calc",
    lambda run: ["soffice", "--norestore", "--nologo", "--nodefault", str(run / CALC_FILE.name)],
    lambda w: "calc-sheet" in w.title,
)


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


class Calc:
    """The running Calc: (re)started on demand, probed from a separate bus connection."""

    def __init__(self, sb: Sandbox, desktop: DesktopFacade, probe: AtspiBus, run: Path) -> None:
        self.sb, self.desktop, self.probe, self.run = sb, desktop, probe, run
        self.app: Launched | None = None
        self.frame: tuple[str, str] | None = None
        self.restarts = 0

    async def ensure(self) -> Launched:
        if self.app is not None and await self.answers():
            return self.app
        if self.app is not None:
            await self.kill()
            self.restarts += 1
        shutil.copy(CALC_FILE, self.run / CALC_FILE.name)  # a fresh copy: no lock file
        self.app = await launch(CALC, self.sb, self.desktop, self.run, timeout=120.0)
        located = await self.desktop.ports.a11y.trees.locate(self.app.window)  # type: ignore[attr-defined]
        self.frame = (located[0], located[1]) if located else None
        return self.app

    async def answers(self, timeout: float = 5.0) -> bool:
        if self.frame is None:
            return False
        try:
            await self.probe.call(*self.frame, "Accessible", "GetState", timeout=timeout)
        except Exception:  # a timeout or a dead peer alike: it does not answer
            return False
        return True

    async def kill(self) -> None:
        if self.app is None:
            return
        pid = self.app.window.pid
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # a hung soffice ignores SIGTERM
        await self.app.close()
        self.app, self.frame = None, None


async def measure_deskpilot(ctx: ToolContext, app: Launched, reads: int) -> dict[str, Any]:
    times: list[float] = []
    chars = 0
    for _ in range(reads + 1):
        start = time.perf_counter()
        got = await read_window(ctx, app.window, chrome=True)
        times.append((time.perf_counter() - start) * 1000)
        chars = len(got.body)
    return {
        "ms": round(statistics.median(times[1:]), 1),
        "first_ms": round(times[0], 1),
        "reads": reads + 1,
        "chars": chars,
        "cells": len(re.findall(r"\b[A-Z]{1,3}[0-9]+ \"", got.body)),  # addressed cells
        "partial": got.snap.partial,
    }


async def measure_walk(
    env: dict[str, str], app: Launched, frame: str, osworld: bool, timeout: float
) -> dict[str, Any]:
    window = app.window
    argv = [SYSTEM_PYTHON, str(WALKER), "--pid", str(window.pid), "--title", window.title]
    argv += ["--path", frame, "--runs", "1"]
    if osworld:
        argv.append("--osworld")
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # files, not pipes: a walk's JSON is larger than a pipe holds until it exits
        proc = subprocess.Popen(
            argv, env=_clean_env(env), stdout=out, stderr=err, text=True, start_new_session=True
        )
        peak = rss_mb(app.window.pid) or 0.0
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            peak = max(peak, rss_mb(app.window.pid) or 0.0)
            await asyncio.sleep(0.25)  # sampling soffice's memory while the walk runs
        wall = (time.perf_counter() - start) * 1000
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return {"ms": None, "timed_out": True, "peak_rss_mb": peak, "wall_ms": round(wall)}
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        lines = stderr.strip().splitlines() or ["(no message)"]
        return {"ms": None, "error": lines[-1][-200:], "wall_ms": round(wall)}
    data = json.loads(stdout)
    return {
        "ms": round(statistics.median(data["walk_ms"]), 1),
        "wall_ms": round(wall),  # with the process start and the text of shown nodes
        "nodes": len(data["nodes"]),
        "cells": sum(1 for n in data["nodes"] if n["role"] == "table cell"),
        "timed_out": False,
        "peak_rss_mb": peak,
    }


async def run_all(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    out: dict[str, Any] = {}
    started = time.monotonic()
    with Sandbox(width=1280, height=800) as sb, tempfile.TemporaryDirectory() as home:
        env, settings = bench_env(sb, home)
        assert sb.info is not None
        run = Path(sb.info.runtime_dir) / "bench-calc"
        run.mkdir(parents=True, exist_ok=True)
        write_all()
        desktop = await open_resolved(settings)
        probe = await AtspiBus.connect(settings.session_bus)
        calc = Calc(sb, desktop, probe, run)
        ctx = ToolContext(desktop=desktop, settings=settings, audit=discard)
        try:
            for name in args.measures:
                with console.status(f"[bold]{name}: starting Calc (if needed), then reading"):
                    app = await calc.ensure()
                    pid = app.window.pid
                    before = rss_mb(pid)
                    if name == "deskpilot":
                        got = await measure_deskpilot(ctx, app, args.reads)
                    else:
                        frame = calc.frame[1] if calc.frame else ""
                        got = await measure_walk(env, app, frame, name == "osworld", args.timeout)
                    got["rss_before_mb"] = before
                    got["rss_after_mb"] = rss_mb(pid)
                    got["answers_after"] = await calc.answers()
                out[name] = got
                console.log(f"{name}: {got}")
                if not got["answers_after"] or got.get("timed_out"):
                    await calc.kill()  # the next measure gets a fresh soffice
        finally:
            await calc.kill()
            await probe.close()
            await desktop.close()
    out["meta"] = {
        "duration_s": round(time.monotonic() - started, 1),
        "timeout_s": args.timeout,
        "soffice_restarts": calc.restarts,
        "cpus": os.cpu_count(),
        "load_average": [round(v, 2) for v in os.getloadavg()],
    }
    return out


def print_table(console: Console, results: dict[str, Any]) -> None:
    table = Table(title="LibreOffice Calc, a 201×5 sheet: one read (soffice VmRSS in MB)")
    for col in ("reader", "time", "soffice before", "after", "peak", "answers after", "read"):
        table.add_column(col)
    for name in MEASURES:
        r = results.get(name)
        if r is None:
            continue
        if r.get("timed_out"):
            when = f"timed out ({results['meta']['timeout_s']:.0f} s), killed"
        elif r.get("ms") is None:
            when = f"failed: {r.get('error', '')[:60]}"
        else:
            when = f"{r['ms']:.1f} ms"
        if name == "deskpilot":
            what = f"{r['chars']} chars, {r['cells']} cells"
        elif "nodes" in r:
            what = f"{r['nodes']} nodes, {r['cells']} cells"
        else:
            what = "—"
        table.add_row(
            name,
            when,
            str(r.get("rss_before_mb")),
            str(r.get("rss_after_mb")),
            str(r.get("peak_rss_mb", "—")),
            "yes" if r["answers_after"] else "NO",
            what,
        )
    console.print(table)
    console.print(
        "deskpilot: median of the reads after the first (read_window, as read_screen_ax). "
        "osworld: OSWorld's server walk (≤1,024 children a node, the sheet's showing cells by "
        "index). walk: every child a node reports. Walks: one, under /usr/bin/python3 + "
        "pyatspi, their own time; 'answers after': soffice answered GetState within 5 s."
    )


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.calc", description=__doc__.split("\n")[0])
    p.add_argument("--measures", default=",".join(MEASURES), help=", ".join(MEASURES))
    p.add_argument("--reads", type=int, default=20, help="deskpilot reads after the first")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds a walk may take")
    p.add_argument("--out", type=Path, default=RESULTS / "calc.json")
    args = p.parse_args(argv)
    args.measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    if not args.measures or any(m not in MEASURES for m in args.measures):
        p.error(f"--measures: choose from {', '.join(MEASURES)}")
    if args.reads < 1 or args.timeout <= 0:
        p.error("--reads must be ≥ 1 and --timeout > 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    console = Console(width=max(Console().width, 140))
    results = asyncio.run(run_all(args, console))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print_table(console, results)
    console.print(f"wrote {args.out} in {results['meta']['duration_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
