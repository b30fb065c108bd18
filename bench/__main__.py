"""``make bench``: every benchmark, one after another, each in a process of its own.

A benchmark that fails does not stop the others: each runs to its end (its output passes
through as it comes), and a table at the end says which passed and which failed, with the
reason each failure gave (the last error line it printed: what it waited for and what it saw
instead). The exit status is 1 when any failed, 0 when all ran.

Usage::

    python -m bench                     # all of them, in the order below
    python -m bench console frames      # only these
    python -m bench --skip eval_cost    # all but these
    python -m bench --list
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO

#: Every benchmark (a module of this package with a ``main``), in the order ``make bench`` runs.
BENCHMARKS = (
    "snapshot",
    "calc",
    "cli_latency",
    "web",
    "actions",
    "eval_cost",
    "console",
    "frames",
    "judging",
    "pages",
    "backends",
)

#: An exception line of a traceback ("deskpilot._wait.WaitTimeout: timed out ..."), or an
#: error a benchmark prints itself ("error: ...", "FAILED ...").
ERROR_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit|Failed|Interrupt)\b.*"
    r"|(?:error|ERROR|FAILED|failed)\b.*)$"
)
TAIL = 60


@dataclass
class Outcome:
    name: str
    code: int
    seconds: float
    reason: str

    @property
    def ok(self) -> bool:
        return self.code == 0


def reason_from(lines: list[str], code: int) -> str:
    """Why a benchmark failed, from the end of what it printed on stderr."""
    for line in reversed(lines):
        text = line.strip()
        if ERROR_LINE.match(text):
            return text
    if code < 0:
        return f"killed by signal {-code}"
    last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
    return f"exit status {code}" + (f"; its last words: {last}" if last else "")


def _pump(stream: IO[str], out: IO[str], keep: collections.deque[str]) -> None:
    for line in stream:
        out.write(line)
        out.flush()
        keep.append(line.rstrip("\n"))


def run_one(module: str, python: str = sys.executable) -> Outcome:
    """Run ``python -m MODULE``: its stdout and stderr pass through; stderr's tail is kept."""
    name = module.rsplit(".", 1)[-1]
    print(f"\n=== {module} ===", file=sys.stderr, flush=True)
    start = time.monotonic()
    kept: collections.deque[str] = collections.deque(maxlen=TAIL)
    try:
        proc = subprocess.Popen(
            [python, "-m", module],
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    except OSError as exc:
        return Outcome(name, 127, 0.0, f"could not start: {exc}")
    assert proc.stderr is not None
    pump = threading.Thread(target=_pump, args=(proc.stderr, sys.stderr, kept), daemon=True)
    pump.start()
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise
    pump.join(timeout=10)
    proc.stderr.close()
    seconds = time.monotonic() - start
    reason = "" if code == 0 else reason_from(list(kept), code)
    return Outcome(name, code, seconds, reason)


def run_all(modules: list[str]) -> list[Outcome]:
    """Run each module in turn, whatever the ones before did."""
    return [run_one(module) for module in modules]


def report(outcomes: list[Outcome], out: IO[str]) -> None:
    width = max(len(o.name) for o in outcomes)
    failed = [o for o in outcomes if not o.ok]
    print(
        "\nmake bench: "
        + (
            f"{len(failed)} of {len(outcomes)} benchmarks failed"
            if failed
            else f"all {len(outcomes)} benchmarks ran"
        ),
        file=out,
    )
    for o in outcomes:
        mark = "ok    " if o.ok else "FAILED"
        line = f"  {mark} {o.name:<{width}}  {o.seconds:6.0f} s"
        if not o.ok:
            line += f"  {o.reason}"
        print(line, file=out)
    out.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="NAME",
        help="leave this benchmark out (repeatable)",
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(BENCHMARKS))
        return 0
    unknown = [n for n in [*args.names, *args.skip] if n not in BENCHMARKS]
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)}; there are: {', '.join(BENCHMARKS)}")
    names = [n for n in (args.names or BENCHMARKS) if n not in args.skip]
    outcomes = run_all([f"bench.{name}" for name in names])
    report(outcomes, sys.stdout)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
