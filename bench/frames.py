"""``make bench`` (part): what a step frame costs a call, beside the same call without one.

Console sessions record a small JPEG of their window after every call that took no picture
(``ToolContext.step_frames``, :mod:`deskpilot.tools.frames`). On one sandbox desktop with
gnome-calculator open, each call below runs ``--runs`` times (default 9) through
``ToolSet.call`` into a real audit log, with frames on and, alternating with it, off (the
baseline); the table shows the medians, their ratio and the frames' size.

Writes ``bench/results/frames.json``::

    python -m bench.frames [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from deskpilot.audit import AuditLog
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.apps import resolve_app
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext

RESULTS = Path(__file__).parent / "results"


def button(read: str, name: str) -> str:
    found = re.search(rf'^\s*button "{re.escape(name)}".* @(\S+)$', read, re.M)
    if found is None:
        raise RuntimeError(f"no button {name!r} in the read:\n{read}")
    return found[1]


async def measure(
    desktop: DesktopFacade, settings: Settings, log: AuditLog, runs: int
) -> dict[str, Any]:
    tools = computer_use_tools()
    session = Session()
    contexts = {
        frames: ToolContext(
            desktop=desktop,
            settings=settings,
            audit=log,
            session=session,
            approver=AllowAll(),
            run_id=f"bench-frames-{frames}",
            step_frames=frames,
        )
        for frames in (True, False)
    }
    read = (await tools.call("read_screen_ax", {}, contexts[False])).text
    calls = {
        "list_windows": ("list_windows", {}),
        "read_screen_ax": ("read_screen_ax", {}),
        "perform (click)": ("perform", {"elementID": button(read, "1")}),
    }
    results: dict[str, Any] = {}
    for what, (tool, args) in calls.items():
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(runs):
            for frames, ctx in contexts.items():
                start = time.perf_counter()
                result = await tools.call(tool, args, ctx)
                times[frames].append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    raise RuntimeError(f"{what}: {result.text}")
        on, off = statistics.median(times[True]), statistics.median(times[False])
        results[what] = {
            "with_frame_ms": round(on, 1),
            "baseline_ms": round(off, 1),
            "ratio": round(on / off, 2) if off else None,
        }
    sizes = [
        len(img.data)
        for e in log.run_events("bench-frames-True")
        if e.kind == "tool.frame"
        for img in e.images
    ]
    results["_frames"] = {"count": len(sizes), "median_bytes": int(statistics.median(sizes))}
    return results


async def run(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="deskpilot-frames-") as home, Sandbox() as sb:
        assert sb.info is not None
        env = {**sb.app_env(), "DESKPILOT_SANDBOX": sb.info.runtime_dir, "DESKPILOT_HOME": home}
        settings = load_settings(env=env)
        desktop = await open_resolved(settings)
        try:
            await desktop.launch(resolve_app("Calculator", await desktop.apps()))
            with AuditLog(Path(home) / "audit.sqlite3") as log:
                return await measure(desktop, settings, log, runs)
        finally:
            await desktop.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.frames", description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--out", type=Path, default=RESULTS / "frames.json")
    args = p.parse_args(argv)
    console = Console(width=max(Console().width, 100))
    results = asyncio.run(run(args.runs))
    frames = results.pop("_frames")
    table = Table(title="Step frames: a call with its frame vs the same call without (median)")
    for col in ("call", "with frame ms", "baseline ms", "ratio"):
        table.add_column(col, justify="left" if col == "call" else "right")
    for what, r in results.items():
        table.add_row(what, f"{r['with_frame_ms']:.1f}", f"{r['baseline_ms']:.1f}", f"{r['ratio']}")
    console.print(table)
    console.print(f"{frames['count']} frames, median {frames['median_bytes']} bytes each")
    meta = {"load": os.getloadavg(), "cpus": os.cpu_count(), "runs": args.runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"meta": meta, "calls": results, "frames": frames}, indent=2) + "\n"
    )
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
