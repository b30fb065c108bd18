"""A cold deskpilot read in a fresh process: ``python -m bench.cold_read XID [--trace] [--warm]``.

Connects (``open_resolved``, untimed), finds the X window, then times the first read of it
in this process — ``read_window`` from tools/screen.py, the body of ``read_screen_ax``:
``DesktopFacade.snapshot`` + ``Renderer.render`` — and prints one JSON line. Settings come from
the environment the benchmark passes (``DESKPILOT_SANDBOX``, ``DESKPILOT_HOME``, DISPLAY, …).

``--trace`` (for the analysis, never for the timings) also reports where the read spent its
time: wall time per reader phase and the number of D-Bus calls per method. ``--warm`` reads
the window once untimed first, so that the traced read is a warm one.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from deskpilot.ax.render import Renderer
from deskpilot.config import load_settings
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.details import DetailReader
from deskpilot.desktop.atspi.frames import WindowTrees
from deskpilot.desktop.atspi.tree import TreeReader
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.tools.context import ToolContext
from deskpilot.tools.screen import header, read_window

#: (class, method) pairs timed by --trace.
TRACED: tuple[tuple[type, str], ...] = (
    (WindowTrees, "locate"),
    (TreeReader, "read_app"),
    (TreeReader, "_get_items"),
    (TreeReader, "_repair"),
    (DetailReader, "fill_extents"),
    (DetailReader, "fill_text"),
    (DetailReader, "fill_labels"),
)


class Trace:
    """Wall time per traced coroutine method and D-Bus calls per member (patched in place:
    this process is thrown away after one read)."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self.calls: Counter[str] = Counter()

    def install(self) -> None:
        for cls, name in TRACED:
            setattr(cls, name, self._timed(f"{cls.__name__}.{name}", getattr(cls, name)))
        original = AtspiBus.request
        calls = self.calls

        @functools.wraps(original)
        def request(
            bus: AtspiBus, dest: str, path: str, iface: str, member: str, *args: Any, **kwargs: Any
        ) -> Any:
            what = member
            if member in ("Get", "GetAll") and args and len(args) > 1:
                what = f"{member}({args[1][-1]})"
            calls[f"{iface.rsplit('.', 1)[-1]}.{what}"] += 1
            return original(bus, dest, path, iface, member, *args, **kwargs)

        setattr(AtspiBus, "request", request)  # noqa: B010 (patched in a throwaway process)
        render = Renderer.render
        phases = self.phases

        @functools.wraps(render)
        def timed_render(self: Renderer, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return render(self, *args, **kwargs)
            finally:
                phases["Renderer.render"] = (
                    phases.get("Renderer.render", 0.0) + (time.perf_counter() - start) * 1000
                )

        setattr(Renderer, "render", timed_render)  # noqa: B010

    def _timed(
        self, label: str, fn: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        phases = self.phases

        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                phases[label] = phases.get(label, 0.0) + (time.perf_counter() - start) * 1000

        return timed


async def cold_read(xid: int, trace: Trace | None = None, warm: bool = False) -> dict[str, object]:
    settings = load_settings(env=dict(os.environ))
    start = time.perf_counter()
    desktop = await open_resolved(settings)
    open_ms = (time.perf_counter() - start) * 1000
    try:
        window = next((w for w in await desktop.list_windows() if w.handle == xid), None)
        if window is None:
            raise SystemExit(f"no window {xid}")
        ctx = ToolContext(desktop=desktop, settings=settings, audit=discard)
        if warm:
            await read_window(ctx, window, chrome=True)
        if trace is not None:
            trace.calls.clear()
            trace.phases.clear()
        start, cpu = time.perf_counter(), time.process_time()
        got = await read_window(ctx, window, chrome=True)
        body, snap, ids = got.body, got.snap, got.ids
        ms = (time.perf_counter() - start) * 1000
        cpu_ms = (time.process_time() - cpu) * 1000
    finally:
        await desktop.close()
    out: dict[str, object] = {
        "ms": ms,
        "cpu_ms": cpu_ms,
        "open_ms": open_ms,
        "snapshot_ms": snap.elapsed_ms,
        "nodes": len(snap.nodes()),
        "chars": len(header(window)) + 1 + len(body),
        "ids": len(ids),
        "partial": snap.partial,
        "keys": [list(n.key) for n in ids.values()],
    }
    if trace is not None:
        out["phases_ms"] = {k: round(v, 1) for k, v in trace.phases.items()}
        out["calls"] = dict(trace.calls.most_common())
    return out


def main() -> None:
    trace = Trace() if "--trace" in sys.argv[2:] else None
    if trace is not None:
        trace.install()
    warm = "--warm" in sys.argv[2:]
    print(json.dumps(asyncio.run(cold_read(int(sys.argv[1]), trace, warm))))


if __name__ == "__main__":
    main()
