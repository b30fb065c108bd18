"""``make bench`` (page side): page-tool latency on a kept browser connection vs a fresh one.

One sandbox desktop; deskpilot opens its agent browser (Debian's Chromium with the page-rules
extension) on a loopback page. Through the real door (``ToolSet.call``), alternately in the
same run:

* **fresh**: a context that keeps nothing, as ``deskpilot tool`` (one process per call) and a
  hand-made ToolContext do — every call starts Playwright's driver and attaches over CDP;
* **kept**: a session's context (``ctx.resources``, what ``open_session`` gives chat, MCP and
  agent runs) — one connection, health-checked before each call.

Measured per tool (``query_page`` on a 40-comment article, ``set_temp_pane_code`` on an open
CSS pane): the median and p90 of ``--runs`` calls each, and ``fresh / kept`` (the ratio is what
to compare across runs; the machine's other load shows in both). Prints the table and writes
bench/results/pages.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from deskpilot.config import load_settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.sandbox import Sandbox
from deskpilot.tools.builtin import all_tools
from deskpilot.tools.context import SessionResources, ToolContext

RESULTS = Path(__file__).parent / "results"
COMMENTS = "".join(f'<div class="comment">Comment {i}: {"words " * 20}</div>' for i in range(40))
PAGE = (
    "<!doctype html><title>Bench article</title><main><h1>Post</h1>"
    f'<section class="comments"><h2>Comments</h2>{COMMENTS}</section></main>'
).encode()


class Site:
    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(PAGE)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/article"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def timed(ctx: ToolContext, name: str, args: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    result = await all_tools().call(name, args, ctx)
    ms = (time.perf_counter() - t0) * 1000
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.text}")
    return ms


async def measure(runs: int, console: Console) -> dict[str, Any]:
    site = Site()
    try:
        with Sandbox(width=1280, height=800) as sb, tempfile.TemporaryDirectory() as home:
            assert sb.info is not None
            env = sb.app_env()
            env["DESKPILOT_SANDBOX"] = sb.info.runtime_dir
            env["DESKPILOT_HOME"] = home
            settings = load_settings(env=env)
            desktop = await open_resolved(settings)
            try:
                console.log("opening the agent browser")
                await desktop.open_urls([site.url])
                return await _calls(desktop, settings, runs, console)
            finally:
                await desktop.close()
    finally:
        site.close()


async def _calls(desktop: DesktopFacade, settings: Any, runs: int, console: Console) -> Any:
    fresh = ToolContext(desktop, settings, audit=discard, surface="python")
    resources = SessionResources()
    kept = ToolContext(desktop, settings, audit=discard, surface="python", resources=resources)
    samples: dict[str, dict[str, list[float]]] = {}
    try:
        opened = await all_tools().call("open_temp_pane", {"kind": "css"}, kept)
        pane = (opened.data or {}).get("pane_id", "css")
        calls = {
            "query_page": {"selector": ".comment"},
            "set_temp_pane_code": {"pane": pane, "code": ".comment{color: rgb(1, 2, 3)}"},
        }
        for name, args in calls.items():
            await timed(kept, name, args)  # the kept connection is made here, not measured
            await timed(fresh, name, args)  # warm the page and the caches alike
            got: dict[str, list[float]] = {"fresh": [], "kept": []}
            console.log(f"{name}: {runs} calls each way, alternating")
            for _ in range(runs):
                got["fresh"].append(await timed(fresh, name, args))
                got["kept"].append(await timed(kept, name, args))
            samples[name] = got
        await all_tools().call("close_temp_pane", {"pane": pane}, kept)
    finally:
        await resources.close()
    rows = {}
    for name, got in samples.items():
        f, k = statistics.median(got["fresh"]), statistics.median(got["kept"])
        rows[name] = {
            "fresh_ms": round(f, 1),
            "fresh_p90_ms": round(quantile(got["fresh"], 0.9), 1),
            "kept_ms": round(k, 1),
            "kept_p90_ms": round(quantile(got["kept"], 0.9), 1),
            "fresh_over_kept": round(f / k, 1) if k else None,
        }
    return {"tools": rows, "samples": samples}


def print_table(console: Console, out: dict[str, Any]) -> None:
    table = Table(title="page tools: a kept browser connection vs a fresh one (same run)")
    for col in ("tool", "fresh ms", "fresh p90", "kept ms", "kept p90", "fresh / kept"):
        table.add_column(col, justify="left" if col == "tool" else "right")
    for name, r in out["tools"].items():
        table.add_row(
            name,
            f"{r['fresh_ms']:.0f}",
            f"{r['fresh_p90_ms']:.0f}",
            f"{r['kept_ms']:.0f}",
            f"{r['kept_p90_ms']:.0f}",
            f"{r['fresh_over_kept']}×",
        )
    console.print(table)
    meta = out["meta"]
    console.print(
        f"medians of {meta['runs']} calls each way; load average {meta['load_average']} on "
        f"{meta['cpus']} CPUs. fresh = what deskpilot tool pays per call in-process (Playwright "
        "driver start + connect_over_cdp + detach); kept = chat, MCP and agent runs."
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.pages", description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--out", type=Path, default=RESULTS / "pages.json")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    console = Console(width=max(Console().width, 120))
    started = time.monotonic()
    out = asyncio.run(measure(args.runs, console))
    out["meta"] = {
        "runs": args.runs,
        "duration_s": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
        "load_average": [round(v, 2) for v in os.getloadavg()],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print_table(console, out)
    console.print(f"wrote {args.out} in {out['meta']['duration_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
