"""The benchmark's apps: how each is started on the sandbox desktop, found, settled and closed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.make_fixtures import PAGE_FILE, TEXT_FILE, WRITER_FILE, write_all
from deskpilot._wait import async_wait_for
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.a11yenv import chromium_flags
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.ports.identity import is_new
from deskpilot.sandbox import Sandbox

#: Interval of the settle sampling loop (the only timed pause: it samples, it does not wait
#: for anything in particular).
SAMPLE_S = 0.4


@dataclass(frozen=True)
class AppSpec:
    name: str  # key in snapshot.json
    argv: Callable[[Path], list[str]]  # given the run directory
    match: Callable[[WindowInfo], bool]  # the window to benchmark
    cold_target_ms: float | None = None  # issue 6 targets (Chromium and LibreOffice)
    warm_target_ms: float | None = None  # issue 21's (10 ms; issue 6 had 15)
    browser: bool = False


def _chromium(run: Path) -> list[str]:
    return [
        "chromium",
        *chromium_flags(),
        f"--user-data-dir={run / 'chromium-profile'}",
        PAGE_FILE.as_uri(),
    ]


def _writer(run: Path) -> list[str]:
    return [
        "soffice",
        "--norestore",
        "--nologo",
        "--nodefault",
        str(run / "writer-5-pages.odt"),
    ]


APPS: dict[str, AppSpec] = {
    spec.name: spec
    for spec in (
        AppSpec("gnome-calculator", lambda run: ["gnome-calculator"], lambda w: True),
        AppSpec(
            "mousepad",
            lambda run: ["mousepad", str(run / TEXT_FILE.name)],
            lambda w: TEXT_FILE.name in w.title,
        ),
        AppSpec("gtk3-demo", lambda run: ["gtk3-demo"], lambda w: True),
        AppSpec("gtk4-demo", lambda run: ["gtk4-demo"], lambda w: True),
        AppSpec(
            "libreoffice-writer",
            _writer,
            lambda w: w.title.endswith("LibreOffice Writer") and "writer-5-pages" in w.title,
            cold_target_ms=150.0,
            warm_target_ms=10.0,
        ),
        AppSpec(
            "chromium",
            _chromium,
            lambda w: "Benchmark page" in w.title,
            cold_target_ms=100.0,
            warm_target_ms=10.0,
            browser=True,
        ),
    )
}


def bench_env(sb: Sandbox, home: str) -> tuple[dict[str, str], Settings]:
    """The environment of the benchmark's apps and readers on the sandbox, and its Settings
    (a private DESKPILOT_HOME)."""
    assert sb.info is not None
    env = sb.app_env()
    env["DESKPILOT_SANDBOX"] = sb.info.runtime_dir
    env["DESKPILOT_HOME"] = home
    return env, load_settings(env=env)


def prepare_inputs(sb: Sandbox, run: Path, *, writer: bool = True) -> None:
    """Fresh copies of the fixtures in the run directory; with ``writer``, the Writer document
    converted from its flat-XML source by ``soffice --headless --convert-to odt`` (own profile)."""
    write_all()
    run.mkdir(parents=True, exist_ok=True)
    shutil.copy(TEXT_FILE, run / TEXT_FILE.name)
    if not writer:
        return
    profile = run / "convert-profile"
    proc = sb.spawn(
        [
            "soffice",
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--convert-to",
            "odt",
            "--outdir",
            str(run),
            str(WRITER_FILE),
        ],
        log="convert.log",
    )
    try:
        code = proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RuntimeError("soffice --convert-to odt did not finish within 180 s") from None
    if code != 0 or not (run / "writer-5-pages.odt").exists():
        raise RuntimeError(f"soffice --convert-to odt failed (exit code {code})")


class Launched:
    """One running app: its process, its window; closed (killed) by :meth:`close`."""

    def __init__(self, desktop: DesktopFacade, proc: subprocess.Popen[bytes], window: WindowInfo):
        self.desktop = desktop
        self.proc = proc
        self.window = window

    async def close(self) -> None:
        for pid in {self.window.pid, self.proc.pid}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.window.pid, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait(timeout=10)
        xid = self.window.handle

        async def gone() -> bool:
            if xid in await self.desktop.window_handles():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.window.pid, signal.SIGKILL)
                return False
            return True

        await async_wait_for(gone, timeout=20, what="the app's window to close")


async def launch(
    spec: AppSpec, sb: Sandbox, desktop: DesktopFacade, run: Path, timeout: float = 90.0
) -> Launched:
    """Start the app, wait for its window and for its tree to settle."""
    before = await desktop.window_handles()
    proc = sb.spawn(spec.argv(run), log=f"{spec.name}.log", cwd=str(run))

    async def window() -> WindowInfo | None:
        for w in await desktop.list_windows():
            if is_new(before, w.handle, w.pid) and w.title and not w.hidden and spec.match(w):
                return w
        if proc.poll() not in (None, 0):
            raise RuntimeError(f"{spec.name} exited with code {proc.returncode}")
        return None

    found = await async_wait_for(window, timeout=timeout, what=f"a window of {spec.name}")
    launched = Launched(desktop, proc, found)
    try:
        await desktop.wait_tree_ready(found, timeout)
        if spec.browser and not await desktop.wait_page_loaded(found, timeout):
            snap = await desktop.snapshot(found)
            docs = [
                f"{sorted(n.states)} with {len(n.children)} children"
                for n in snap.nodes()
                if n.role == "document-web"
            ]
            raise RuntimeError(
                f"the benchmark page did not load in Chromium within {timeout:.0f} s: documents "
                f"{docs or 'none'}; partial={snap.partial} {snap.problems}"
            )
        await settle(desktop, found, timeout)
        fresh = next((w for w in await desktop.list_windows() if w.handle == found.handle), None)
        launched.window = fresh or found
    except BaseException:
        await launched.close()
        raise
    return launched


async def settle(desktop: DesktopFacade, window: WindowInfo, timeout: float) -> int:
    """Sample the window's node count every SAMPLE_S until two consecutive complete reads
    agree; return it."""
    deadline = time.monotonic() + timeout
    last = -1
    while True:
        snap = await desktop.snapshot(window)
        count = len(snap.nodes())
        if count > 1 and count == last and not snap.partial:
            return count
        last = count if not snap.partial else -1
        if time.monotonic() > deadline:
            raise RuntimeError(f"the tree of {window.title!r} did not settle in {timeout:.0f} s")
        await asyncio.sleep(SAMPLE_S)
