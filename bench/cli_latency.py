"""``make bench`` (part): how long the command line takes, beside ``python -c pass``.

On one sandbox desktop with a calculator open, each command is run as a fresh process, the
way a script or a model's shell runs it, ``--runs`` times (default 7); the table shows the
median wall time of each, its ratio to ``python -c pass`` measured in the same run, and the
targets of issue 9 (``--version`` ≤ 150 ms, one ``deskpilot tool`` call ≤ 350 ms, end to end
on a 2-core machine). With ``--imports``, the slowest imports of each command are listed
(``python -X importtime``), which is where the time goes when a target is missed.

Before timing, deskpilot's own modules are byte-compiled (``compileall``), as an installed
package is: a process started with ``PYTHONDONTWRITEBYTECODE`` (set on some CI and agent
machines) would otherwise compile ~100 modules from source on every run (≈80 ms of CPU).
Beside the wall time, the CPU time of each command (user + system, from ``getrusage``) is
shown: on a loaded machine the wall time grows, the CPU time much less.

Writes ``bench/results/cli-latency.json``::

    python -m bench.cli_latency [--runs N] [--imports]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox

RESULTS = Path(__file__).parent / "results"
PY = sys.executable
CASES: list[tuple[str, list[str], float | None]] = [
    ("python -c pass", [PY, "-c", "pass"], None),
    ("deskpilot --version", [PY, "-m", "deskpilot", "--version"], 150.0),
    ("deskpilot tool list_windows", [PY, "-m", "deskpilot", "tool", "list_windows"], 350.0),
    ("deskpilot tool read_screen_ax", [PY, "-m", "deskpilot", "tool", "read_screen_ax"], 350.0),
]


def cpu_ms() -> float:
    """CPU time (user + system) of the finished child processes so far, in ms."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def run_once(argv: list[str], env: dict[str, str], cpu: list[float] | None = None) -> float:
    start, cpu_start = time.perf_counter(), cpu_ms()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if cpu is not None:
        cpu.append(cpu_ms() - cpu_start)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[2:])} failed ({done.returncode}): {done.stderr[-400:]}")
    return elapsed


def byte_compile() -> None:
    """Compile deskpilot's modules, as installing the package does."""
    import deskpilot

    compileall.compile_dir(Path(deskpilot.__file__).parent, quiet=1)


def slowest_imports(argv: list[str], env: dict[str, str], top: int = 8) -> list[tuple[str, int]]:
    """The modules with the largest cumulative import time (µs) in one run of ``argv``."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((parts[2].rstrip(), int(parts[1])))
    return sorted(rows, key=lambda r: -r[1])[:top]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.cli_latency", description=__doc__.split("\n")[0]
    )
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--imports", action="store_true", help="list each command's slowest imports")
    p.add_argument("--out", type=Path, default=RESULTS / "cli-latency.json")
    args = p.parse_args(argv)
    console = Console()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="deskpilot-cli-bench-") as home, Sandbox() as sb:
        assert sb.info is not None
        env = {**sb.app_env(), "DESKPILOT_SANDBOX": sb.info.runtime_dir, "DESKPILOT_HOME": home}
        run_once([PY, "-m", "deskpilot", "tool", "open_app", '{"bundleId": "Calculator"}'], env)
        wait_for(lambda: run_once(CASES[3][1], env) > 0, timeout=30, what="a first read")
        byte_compile()
        for name, cmd, target in CASES:
            cpu: list[float] = []
            times = [run_once(cmd, env, cpu) for _ in range(args.runs)]
            results[name] = {
                "median_ms": round(statistics.median(times), 1),
                "min_ms": round(min(times), 1),
                "target_ms": target,
                "cpu_median_ms": round(statistics.median(cpu), 1),
            }
            if args.imports and name != "python -c pass":
                results[name]["slowest_imports_us"] = slowest_imports(cmd, env)
    base = results["python -c pass"]["median_ms"]
    table = Table(title=f"CLI latency, median of {args.runs} runs (load {os.getloadavg()[0]:.1f})")
    for col in ("command", "median ms", "min ms", "cpu ms", "× python -c pass", "target", ""):
        table.add_column(col, justify="right" if col != "command" else "left")
    for name, r in results.items():
        target = r["target_ms"]
        mark = "" if target is None else ("✓" if r["median_ms"] <= target else "✗")
        table.add_row(
            name,
            f"{r['median_ms']:.0f}",
            f"{r['min_ms']:.0f}",
            f"{r['cpu_median_ms']:.0f}",
            f"{r['median_ms'] / base:.1f}",
            "" if target is None else f"≤{target:.0f}",
            mark,
        )
    console.print(table)
    if args.imports:
        for name, r in results.items():
            for module, us in r.get("slowest_imports_us", []):
                console.print(f"  {name}: {module.strip()} {us / 1000:.0f} ms", markup=False)
    meta = {"runs": args.runs, "load": os.getloadavg(), "cpus": os.cpu_count()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "commands": results}, indent=2) + "\n")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
