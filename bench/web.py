"""``make bench`` (part): reads of the web fixture pages — chars and clickable coverage.

Each page of ``tests/fixtures/web`` (one per class of control) is served on loopback and
opened in the agent browser on one sandbox desktop. The page reports the elements a person
can click or focus (``data-person``, unobstructed, on screen); each is hit-tested on the
accessibility tree to the node a read must show for it. Then, for the same window:

* **deskpilot**: ``read_screen_ax``'s text (header + body), lean (the browser's controls as
  one line) and with ``chrome``; coverage = operable elements whose node carries an ``@ID``;
* **OSWorld**: the TSV its agents get (``bench/osworld.py`` over a pyatspi walk of the same
  frame); coverage = operable elements whose node is a TSV row (OSWorld acts by coordinates,
  so a row is what it can reach).

Writes ``bench/results/web.json`` and prints a table::

    python -m bench.web [--pages a.html,b.html]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tests.desktop.web import PAGES, PageServer, reached

from bench import osworld
from bench.snapshot import run_walker
from deskpilot.config import load_settings
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.screen import header, read_window

RESULTS = Path(__file__).parent / "results"
#: The pages measured (pointer.html has nothing to click until a right click opens its menu;
#: frame.html is shown inside components.html).
DEFAULT_PAGES = sorted(
    p.name for p in PAGES.glob("*.html") if p.name not in ("pointer.html", "frame.html")
)


async def measure_page(
    ctx: ToolContext, server: PageServer, page: str, env: dict[str, str]
) -> dict[str, Any]:
    tools = computer_use_tools()
    server.clear()
    opened = await tools.call("open_urls", {"urls": [server.url(page)]}, ctx)
    if opened.is_error:
        raise RuntimeError(opened.text)
    operables = (await server.wait_for("operables", page=f"/{page}"))["items"]
    window = next(w for w in await ctx.desktop.list_windows() if w.stable_id == ctx.session.target)
    lean = await read_window(ctx, window, chrome=False)
    full = await read_window(ctx, window, chrome=True)
    head = len(header(window)) + 1
    keys = {n.key for n in lean.ids.values()}
    targets = await reached(ctx.desktop, window, operables)
    where = ctx.desktop.ports.a11y.trees.cache.located[window.handle]  # type: ignore[attr-defined]
    walk = run_walker(env, window.pid, window.title, where.frame, 1)
    kept = osworld.filter_nodes(walk["nodes"])
    tsv = osworld.linearize(kept)
    rows = {n["path"] for n in kept}
    await tools.call("perform", {"action": "shortcut", "shortcut": "ctrl+w"}, ctx)
    n = len(targets)
    covered = sum(1 for _l, key, _w in targets if key in keys)
    baseline = sum(1 for _l, key, _w in targets if key is not None and key[1] in rows)
    return {
        "operable": n,
        "chars": head + len(lean.body),
        "chars_with_chrome": head + len(full.body),
        "ids": len(lean.ids),
        "covered": covered,
        "coverage": round(covered / n, 3) if n else None,
        "missing": [f"{label} ({w})" for label, key, w in targets if key not in keys],
        "baseline_chars": len(tsv),
        "baseline_covered": baseline,
        "baseline_coverage": round(baseline / n, 3) if n else None,
    }


async def run(pages: list[str], console: Console) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="deskpilot-web-bench-") as home, Sandbox() as sb:
        assert sb.info is not None
        env = {**sb.app_env(), "DESKPILOT_SANDBOX": sb.info.runtime_dir, "DESKPILOT_HOME": home}
        settings = load_settings(env=env).with_overrides(confirm="none")
        desktop = await open_resolved(settings)
        ctx = ToolContext(
            desktop=desktop,
            settings=settings,
            audit=discard,
            session=Session(),
            approver=AllowAll(),
        )
        try:
            with PageServer() as server:
                await desktop.open_urls(["about:blank"])  # the browser the pages open in
                for page in pages:
                    console.print(f"{page}…", markup=False)
                    try:
                        results[page] = await measure_page(ctx, server, page, env)
                    except Exception as exc:  # one page's failure is reported, not fatal
                        results[page] = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            await desktop.close()
    return results


def print_table(console: Console, results: dict[str, Any]) -> None:
    table = Table(title="Web fixture pages: deskpilot's read vs OSWorld's TSV, same window")
    for col in (
        "page",
        "operable",
        "chars",
        "chars+chrome",
        "coverage",
        "OSWorld chars",
        "OSWorld coverage",
    ):
        table.add_column(col, justify="left" if col == "page" else "right")
    for page, r in results.items():
        if "error" in r:
            table.add_row(page, r["error"][:60], "", "", "", "", "")
            continue
        table.add_row(
            page,
            str(r["operable"]),
            str(r["chars"]),
            str(r["chars_with_chrome"]),
            f"{r['covered']}/{r['operable']}",
            str(r["baseline_chars"]),
            f"{r['baseline_covered']}/{r['operable']}",
        )
    ok = [r for r in results.values() if "error" not in r]
    if ok:
        total = sum(r["operable"] for r in ok)
        table.add_row(
            "all",
            str(total),
            str(sum(r["chars"] for r in ok)),
            str(sum(r["chars_with_chrome"] for r in ok)),
            f"{sum(r['covered'] for r in ok)}/{total}",
            str(sum(r["baseline_chars"] for r in ok)),
            f"{sum(r['baseline_covered'] for r in ok)}/{total}",
        )
    console.print(table)
    for page, r in results.items():
        for miss in r.get("missing", []):
            console.print(f"  {page}: no ID for {miss}", markup=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.web", description=__doc__.split("\n")[0])
    p.add_argument("--pages", default=",".join(DEFAULT_PAGES))
    p.add_argument("--out", type=Path, default=RESULTS / "web.json")
    args = p.parse_args(argv)
    pages = [x.strip() for x in args.pages.split(",") if x.strip()]
    unknown = [x for x in pages if not (PAGES / x).is_file()]
    if unknown:
        p.error(f"--pages: no such fixture page: {', '.join(unknown)}")
    console = Console(width=max(Console().width, 120))
    results = asyncio.run(run(pages, console))
    print_table(console, results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"load": os.getloadavg(), "cpus": os.cpu_count()}
    args.out.write_text(json.dumps({"meta": meta, "pages": results}, indent=2) + "\n")
    console.print(f"wrote {args.out}")
    return 1 if any("error" in r for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
