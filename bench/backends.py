"""``make bench``: the same operations on the same app, per desktop backend, in one run.

One sandbox of each kind runs at once — X11 (Xvfb + openbox, the ``x11`` backend) and sway
(headless, the ``wlroots`` backend); a GNOME column joins when the registry has a ``gnome``
backend (see ``COLUMNS``), else the run prints ``gnome: not built``. Each runs the GTK 4 probe
app (tests/fixtures/apps/gtk4_probe.py: an entry, a button and a check box; it logs what
happened to it to a file, the channel effects are confirmed through). Every operation goes
through the ToolSet (``ToolSet.call``), as a model's call would; the rounds alternate the
backends' order, so a busy machine slows both alike:

* ``cold read`` — ``read_screen_ax`` of the window on a desktop opened for it (a new
  accessibility connection: nothing cached), the read alone;
* ``warm read`` — ``read_screen_ax`` again on a long-lived desktop, nothing changed;
* ``click`` — ``perform`` click on "Greet", until the app's log shows the click;
* ``typing`` — ``perform`` type of 12 characters into "Name" (emptied first, not timed), until
  the log shows the whole text;
* ``screenshot`` — ``computer_use_screenshot`` of the window (the PNG the model gets).

Prints medians (ms) and each backend's ratio to X11; writes bench/results/backends.json with
every sample. Usage: ``python -m bench.backends [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings, load_settings
from deskpilot.desktop import registry
from deskpilot.desktop.base import OpenedDesktop, WindowInfo
from deskpilot.events import discard
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext

RESULTS = Path(__file__).parent / "results"
PROBE = Path(__file__).parents[1] / "tests" / "fixtures" / "apps" / "gtk4_probe.py"
PYTHON = "/usr/bin/python3"  # Debian's, with PyGObject
TEXT = "typed abc 12"
OPERATIONS = ("cold read", "warm read", "click", "typing", "screenshot")
#: (column, backend name in the registry, sandbox kind); the first is the baseline
COLUMNS = (("x11", "x11", "x11"), ("sway", "wlroots", "sway"), ("gnome", "gnome", "gnome"))


@dataclass
class Column:
    name: str
    sandbox: Sandbox
    settings: Settings
    desktop: OpenedDesktop
    window: WindowInfo
    log: Path
    session: Session = field(default_factory=Session)
    ids: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)

    def ctx(self, desktop: OpenedDesktop | None = None) -> ToolContext:
        return ToolContext(
            desktop=desktop or self.desktop,
            settings=self.settings,
            audit=discard,
            session=self.session,
            approver=AllowAll(),
        )

    async def call(
        self, name: str, args: dict[str, Any], ctx: ToolContext | None = None
    ) -> ToolResult:
        result = await computer_use_tools().call(name, args, ctx or self.ctx())
        if result.is_error:
            raise RuntimeError(f"{self.name}: {name} failed: {result.text}")
        return result

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@contextlib.asynccontextmanager
async def column(name: str, backend: str, kind: str, home: Path) -> AsyncIterator[Column]:
    """A sandbox of ``kind`` with the probe app up, and the ``backend`` desktop on it."""
    with Sandbox(kind=kind, width=1280, height=800) as sb:
        assert sb.info is not None
        env = sb.app_env()
        env["DESKPILOT_SANDBOX"] = sb.info.runtime_dir
        env["DESKPILOT_HOME"] = str(home / name)
        settings = load_settings(env=env).with_overrides(confirm="none", backend=backend)
        desktop = await registry.open_resolved(settings)
        try:
            log = Path(sb.info.runtime_dir, "probe.log")
            sb.spawn([PYTHON, str(PROBE), str(log)], log="probe.out")

            async def window() -> WindowInfo | None:
                return next(
                    (w for w in await desktop.list_windows() if w.title == "GTK 4 probe"), None
                )

            found = await async_wait_for(window, timeout=60, what=f"the probe on {name}")
            await desktop.wait_tree_ready(found, 60)
            col = Column(name, sb, settings, desktop, found, log)
            text = (await col.call("read_screen_ax", {"windowID": found.stable_id})).text
            for role, label in (("textbox", "Name"), ("button", "Greet")):
                line = next(ln for ln in text.splitlines() if f'{role} "{label}"' in ln)
                col.ids[label] = line.rsplit("@", 1)[1]
            yield col
        finally:
            await desktop.close()


async def timed(op: Callable[[], Awaitable[None]]) -> float:
    start = time.perf_counter()
    await op()
    return (time.perf_counter() - start) * 1000


async def cold_read(col: Column) -> float:
    fresh = await registry.open_resolved(col.settings)
    try:
        wid = col.window.stable_id
        return await timed(
            lambda: _ok(col.call("read_screen_ax", {"windowID": wid}, col.ctx(fresh)))
        )
    finally:
        await fresh.close()


async def warm_read(col: Column) -> float:
    wid = col.window.stable_id
    await col.call("read_screen_ax", {"windowID": wid})  # nothing changed since
    return await timed(lambda: _ok(col.call("read_screen_ax", {"windowID": wid})))


async def click(col: Column) -> float:
    before = col.lines().count(f"greeted {_entry(col)}")

    async def op() -> None:
        await col.call(
            "perform",
            {"windowID": col.window.stable_id, "action": "click", "elementID": col.ids["Greet"]},
        )
        await async_wait_for(
            lambda: _at_least(col, f"greeted {_entry(col)}", before + 1),
            timeout=10,
            what="the click in the log",
        )

    return await timed(op)


async def typing(col: Column) -> float:
    wid = col.window.stable_id
    await col.call(
        "perform_sequence",
        {
            "windowID": wid,
            "steps": [
                {"action": "click", "elementID": col.ids["Name"]},
                {"action": "shortcut", "shortcut": "ctrl+a"},
                {"action": "shortcut", "shortcut": "backspace"},
            ],
        },
    )
    await async_wait_for(lambda: _empty(col), timeout=10, what="the field emptied")

    async def op() -> None:
        await col.call("perform", {"windowID": wid, "action": "type", "text": TEXT})
        await async_wait_for(
            lambda: _last(col, f"name={TEXT}"), timeout=10, what="the typed text in the log"
        )

    return await timed(op)


async def screenshot(col: Column) -> float:
    wid = col.window.stable_id
    return await timed(lambda: _ok(col.call("computer_use_screenshot", {"windowID": wid})))


async def _ok(result: Awaitable[ToolResult]) -> None:
    await result


async def _at_least(col: Column, line: str, count: int) -> bool:
    return col.lines().count(line) >= count


async def _last(col: Column, line: str) -> bool:
    names = [ln for ln in col.lines() if ln.startswith("name=")]
    return bool(names) and names[-1] == line


async def _empty(col: Column) -> bool:
    return _entry(col) == ""


def _entry(col: Column) -> str:
    names = [ln for ln in col.lines() if ln.startswith("name=")]
    return names[-1].removeprefix("name=") if names else ""


MEASURES: dict[str, Callable[[Column], Awaitable[float]]] = {
    "cold read": cold_read,
    "warm read": warm_read,
    "click": click,
    "typing": typing,
    "screenshot": screenshot,
}


async def run(rounds: int) -> dict[str, Any]:
    known = {b.name for b in registry.backends()}
    built = [(n, b, k) for n, b, k in COLUMNS if b in known]
    missing = [n for n, b, _k in COLUMNS if b not in known]
    home = Path(tempfile.mkdtemp(prefix="bench-backends-"))
    try:
        async with contextlib.AsyncExitStack() as stack:
            cols = [await stack.enter_async_context(column(n, b, k, home)) for n, b, k in built]
            for op, measure in MEASURES.items():
                for i in range(rounds):
                    for col in cols if i % 2 == 0 else list(reversed(cols)):
                        col.samples.setdefault(op, []).append(await measure(col))
            return {
                "meta": {
                    "rounds": rounds,
                    "cpus": os.cpu_count(),
                    "load": os.getloadavg(),
                    "not_built": missing,
                    "app": "tests/fixtures/apps/gtk4_probe.py",
                },
                "backends": {
                    c.name: {
                        op: {
                            "median_ms": round(statistics.median(s), 1),
                            "samples_ms": [round(v, 1) for v in s],
                        }
                        for op, s in c.samples.items()
                    }
                    for c in cols
                },
            }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def report(console: Console, data: dict[str, Any]) -> None:
    backends = data["backends"]
    names = list(backends)
    table = Table(title=f"per backend: medians of {data['meta']['rounds']} rounds (ms)")
    table.add_column("operation")
    for name in names:
        table.add_column(name, justify="right")
    for name in names[1:]:
        table.add_column(f"{name}/{names[0]}", justify="right")
    for op in OPERATIONS:
        medians = [backends[n][op]["median_ms"] for n in names]
        ratios = [f"{m / medians[0]:.2f}×" if medians[0] else "–" for m in medians[1:]]
        table.add_row(op, *(f"{m:.1f}" for m in medians), *ratios)
    console.print(table)
    for name in data["meta"]["not_built"]:
        console.print(f"{name}: not built")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.backends", description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="samples per operation and backend")
    args = parser.parse_args(argv)
    data = asyncio.run(run(args.rounds))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "backends.json").write_text(json.dumps(data, indent=2) + "\n")
    report(Console(), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
