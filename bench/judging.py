"""``make bench`` (part): what judging by effect costs a call, beside the same call unjudged.

On one sandbox desktop, the safety suite's local webmail page (``tests/fixtures/safety``) is
open in the agent browser. Each harmless call below runs ``--runs`` times (default 9) through
``ToolSet.call`` with ``confirm = consequential`` (the door judges its effect) and, alternating
with it, with ``confirm = none`` (the baseline: nothing judged); the table shows the medians
and their ratio. The calls are those a task makes all the time:

* a click on an element whose name says it all (the "To" field: no tree read);
* a click on a generic button judged by its place ("Save draft": the window's tree is read);
* a fill of a field (no tree read);
* text typed to the focused field (the tree is read: is the focus a password field?).

Writes ``bench/results/judging.json``::

    python -m bench.judging [--runs N]
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
from tests.desktop.site import Site

from deskpilot.config import Settings, load_settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext

RESULTS = Path(__file__).parent / "results"


def element(read: str, role: str, name: str) -> str:
    found = re.search(rf'^\s*{role} "{re.escape(name)}".* @(\S+)$', read, re.M)
    if found is None:
        raise RuntimeError(f"no {role} {name!r} in the read:\n{read}")
    return found[1]


async def measure(desktop: DesktopFacade, settings: Settings, runs: int) -> dict[str, Any]:
    tools = computer_use_tools()
    session = Session()
    contexts = {
        mode: ToolContext(
            desktop=desktop,
            settings=settings.with_overrides(confirm=mode),
            audit=discard,
            session=session,
            approver=AllowAll(),
        )
        for mode in ("consequential", "none")
    }
    base = contexts["none"]
    read = (await tools.call("read_screen_ax", {}, base)).text
    calls = {
        "click, named": {"elementID": element(read, "textbox", "To")},
        "click, by place": {"elementID": element(read, "button", "Save draft")},
        "fill": {
            "action": "fill",
            "elementID": element(read, "textbox", "Subject"),
            "text": "Lunch",
        },
        "type to the focus": {"action": "type", "text": "a"},
    }
    results: dict[str, Any] = {}
    for what, args in calls.items():
        times: dict[str, list[float]] = {"consequential": [], "none": []}
        for _ in range(runs):
            for mode, ctx in contexts.items():
                start = time.perf_counter()
                result = await tools.call("perform", args, ctx)
                times[mode].append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    raise RuntimeError(f"{what}: {result.text}")
        judged, plain = statistics.median(times["consequential"]), statistics.median(times["none"])
        results[what] = {
            "judged_ms": round(judged, 1),
            "baseline_ms": round(plain, 1),
            "ratio": round(judged / plain, 2) if plain else None,
        }
    return results


async def run(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="deskpilot-judging-") as home, Sandbox() as sb:
        assert sb.info is not None
        env = {**sb.app_env(), "DESKPILOT_SANDBOX": sb.info.runtime_dir, "DESKPILOT_HOME": home}
        settings = load_settings(env=env)
        desktop = await open_resolved(settings)
        try:
            with Site() as site:
                await desktop.open_urls([site.page("mail", autofocus_subject="autofocus")])
                return await measure(desktop, settings, runs)
        finally:
            await desktop.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.judging", description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--out", type=Path, default=RESULTS / "judging.json")
    args = p.parse_args(argv)
    console = Console(width=max(Console().width, 100))
    results = asyncio.run(run(args.runs))
    table = Table(title="Judging by effect: perform with confirm=consequential vs none (median)")
    for col in ("call", "judged ms", "baseline ms", "ratio"):
        table.add_column(col, justify="left" if col == "call" else "right")
    for what, r in results.items():
        table.add_row(what, f"{r['judged_ms']:.1f}", f"{r['baseline_ms']:.1f}", f"{r['ratio']}")
    console.print(table)
    meta = {"load": os.getloadavg(), "cpus": os.cpu_count(), "runs": args.runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "calls": results}, indent=2) + "\n")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
