"""The desktop's reads and actions, two code trees in one run: ratios, not absolute times.

``python -m bench.ports_ab --base /tmp/ports-base/src`` starts one sandbox desktop with
gnome-calculator, mousepad (a 200-line file) and Chromium (the benchmark page), then runs a
worker process per round against each code tree in turn (alternating which goes first), every
worker opening the desktop afresh through its tree's own API (the registry's, or the old
``LinuxDesktop.open``). Each worker measures, on the same windows:

* ``cold_*`` — the first read of each window in a fresh process;
* ``warm_*`` — the median of repeated reads;
* actions — ``press_keys`` (Escape), ``click_element`` (a calculator button, by its action),
  ``type_text`` (one digit), ``element_point`` + ``point_at`` (a pointer click on a button),
  ``fill_element`` (the editor's text), ``scroll`` (the page, judged by what moved); each
  timed from apps at rest (no AT-SPI event for QUIET_S), the median of ``--actions``.

It prints, per figure, the median over rounds of each tree, the ratio of those medians, and the
median of the rounds' own ratios (this tree / base, the two workers of a round run back to
back): on a shared, noisy machine only ratios taken in one run mean anything, and the paired
one is the least moved by the load drifting between rounds.
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
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
#: Quiet (no AT-SPI event from any app) before each timed action.
QUIET_S = 0.3
SRC = HERE.parent.parent / "src"


# -- the worker (runs against either tree: only the Desktop API both share) ------------------


async def _open(settings: Any) -> Any:
    try:
        from deskpilot.desktop.registry import open_resolved
    except ImportError:  # the tree before the ports
        from deskpilot.desktop.linux import LinuxDesktop

        return await LinuxDesktop.open(settings)
    return await open_resolved(settings)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


async def _timed(coro: Any) -> float:
    start = time.perf_counter()
    await coro
    return _ms(start)


def _bus(desktop: Any) -> Any:
    """The AT-SPI bus of either tree's desktop (the ports' accessibility, or the old one's)."""
    ports = getattr(desktop, "ports", None)
    return ports.a11y.bus if ports is not None else desktop.a11y.bus


async def _quiet(desktop: Any, quiet: float = QUIET_S, limit: float = 2.0) -> None:
    """Wait until no app has sent an AT-SPI event for ``quiet`` seconds (at most ``limit``):
    each action is timed from an app at rest, not while it still handles the previous one
    (a GTK 4 button's action takes effect 250 ms later; a click timed inside that tail
    measured the app, 5 or 25 ms by chance)."""
    bus = _bus(desktop)
    end = time.monotonic() + limit
    while time.monotonic() < end:
        last = max(bus.last_event.values(), default=0.0)
        if time.monotonic() - last >= quiet:
            return
        await asyncio.sleep(0.01)


def _label(node: Any) -> str:
    """A button's label: its name, else its labelling text, else its first named part (GTK 4
    names a button after its class and puts the label in a child)."""
    for text in (node.name, node.label):
        if text and not text.startswith("Gtk"):
            return str(text)
    for part in node.walk()[1:]:
        if part.name and not part.name.startswith("Gtk"):
            return str(part.name)
    return ""


async def worker(reads: int, actions: int) -> dict[str, float]:
    from deskpilot.config import load_settings

    desktop = await _open(load_settings())
    out: dict[str, float] = {}
    try:
        windows = await desktop.list_windows()
        calc = next(w for w in windows if "alculator" in w.title)
        editor = next(w for w in windows if "mousepad-200" in w.title)
        page = next(w for w in windows if "Benchmark page" in w.title)
        named = {"calc": calc, "mousepad": editor, "chromium": page}
        for name, window in named.items():
            out[f"cold_{name}"] = await _timed(desktop.snapshot(window))
        for name, window in named.items():
            out[f"warm_{name}"] = statistics.median(
                [await _timed(desktop.snapshot(window)) for _ in range(reads)]
            )
        snap = await desktop.snapshot(calc)
        buttons = {
            _label(n).split(" ")[0]: n for n in snap.nodes() if n.role in ("push-button", "button")
        }
        digit = next((buttons[k] for k in ("1", "2", "3") if k in buttons), None)
        other = next((buttons[k] for k in ("7", "8", "9") if k in buttons), None)
        if digit is None or other is None:
            raise SystemExit(f"no digit buttons among {sorted(buttons)[:40]}")
        times: dict[str, list[float]] = {}
        for _ in range(actions):
            for label, act in (
                ("press_keys", lambda: desktop.press_keys(calc, ["Escape"])),
                ("click_element", lambda: desktop.click_element(calc, digit.key)),
                ("type_text", lambda: desktop.type_text(calc, "4")),
            ):
                await _quiet(desktop)
                times.setdefault(label, []).append(await _timed(act()))
            await _quiet(desktop)
            start = time.perf_counter()
            x, y = await desktop.element_point(calc, other.key)
            await desktop.point_at(calc, x, y)
            times.setdefault("point_at", []).append(_ms(start))
        text = next(n for n in (await desktop.snapshot(editor)).nodes() if n.editable)
        for i in range(actions):
            await _quiet(desktop)
            filled = desktop.fill_element(editor, text.key, f"line {i}\n" * 3)
            times.setdefault("fill_element", []).append(await _timed(filled))
        for i in range(max(2, actions // 2)):
            await _quiet(desktop)
            way = "down" if i % 2 == 0 else "up"
            times.setdefault("scroll", []).append(
                await _timed(desktop.scroll(page, way, 3))  # type: ignore[arg-type]
            )
        out.update({k: statistics.median(v) for k, v in times.items()})
    finally:
        await desktop.close()
    return out


# -- the driver ------------------------------------------------------------------------------


def run_worker(src: Path, env: dict[str, str], reads: int, actions: int) -> dict[str, float]:
    full = {**env, "PYTHONPATH": str(src)}
    argv = [sys.executable, str(HERE), "--worker", f"--reads={reads}", f"--actions={actions}"]
    done = subprocess.run(argv, env=full, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"worker on {src} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


async def start_apps(env: dict[str, str], box: Any, run: Path) -> None:
    """The three apps, each waited for until its window shows (read through this tree)."""
    from bench.make_fixtures import PAGE_FILE, TEXT_FILE, write_all
    from deskpilot._wait import async_wait_for
    from deskpilot.config import load_settings
    from deskpilot.desktop.a11yenv import chromium_flags

    write_all(run)
    box.spawn(["gnome-calculator"], log="calc.log")
    box.spawn(["mousepad", str(run / TEXT_FILE.name)], log="mousepad.log")
    box.spawn(
        ["chromium", *chromium_flags(), f"--user-data-dir={run / 'profile'}", PAGE_FILE.as_uri()],
        log="chromium.log",
    )
    desktop = await _open(load_settings(env=env))
    try:

        async def up() -> bool:
            titles = [w.title for w in await desktop.list_windows()]
            wanted = ("alculator", "mousepad-200", "Benchmark page")
            return all(any(t in title for title in titles) for t in wanted)

        await async_wait_for(up, timeout=120, what="the three apps' windows")
        for w in await desktop.list_windows():
            await desktop.wait_tree_ready(w, 60)
    finally:
        await desktop.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="src directory of the tree to compare with")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--reads", type=int, default=21)
    parser.add_argument("--actions", type=int, default=8)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(asyncio.run(worker(args.reads, args.actions))))
        return 0
    if args.base is None:
        parser.error("--base is required")
    from deskpilot.sandbox import Sandbox

    trees = {"base": args.base.resolve(), "this": SRC}
    rounds: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
    with Sandbox(width=1280, height=800) as box, tempfile.TemporaryDirectory() as tmp:
        assert box.info is not None
        env = box.app_env()
        env["DESKPILOT_SANDBOX"] = box.info.runtime_dir
        env["DESKPILOT_HOME"] = str(Path(tmp) / "home")
        asyncio.run(start_apps(env, box, Path(tmp)))
        for r in range(args.rounds):
            order = ["base", "this"] if r % 2 == 0 else ["this", "base"]
            for name in order:
                rounds[name].append(run_worker(trees[name], env, args.reads, args.actions))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    figures = {}
    print(f"{'figure':<16}{'base ms':>10}{'this ms':>10}{'ratio':>8}{'paired':>8}")
    for key in rounds["base"][0]:
        base = statistics.median(r[key] for r in rounds["base"])
        this = statistics.median(r[key] for r in rounds["this"])
        pairs = [t[key] / b[key] for b, t in zip(rounds["base"], rounds["this"], strict=True)]
        paired = statistics.median(pairs)
        ratio = this / base if base else 0.0
        figures[key] = {"base_ms": base, "this_ms": this, "ratio": ratio, "paired": paired}
        print(f"{key:<16}{base:>10.1f}{this:>10.1f}{ratio:>8.2f}{paired:>8.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rounds": rounds, "figures": figures}, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
