"""The Wayland tier: real headless compositors (sway, mutter) with real apps.

Each module starts what it needs; these fixtures give one sandbox of each kind per module and a
way to wait for an app on the accessibility bus.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.wayland.mutter import MutterError, MutterSession
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.compositors import REQUIREMENTS

if TYPE_CHECKING:
    from deskpilot.desktop.atspi.bus import AtspiBus

T = TypeVar("T")


def require(kind: str) -> None:
    missing = [b for b in REQUIREMENTS[kind] if shutil.which(b) is None]
    if missing:
        pytest.skip(f"{kind} sandbox needs {', '.join(missing)} (scripts/apt-packages.txt)")


def oracle_trial(tmp_path: Path, backend: str, suite: str, *select: str) -> dict[str, Any]:
    """One trial of ``deskpilot eval run SUITE`` by the oracle policy on a ``backend``
    sandbox, from an environment without the caller's desktop: the run passes; its trial's
    result.json."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKPILOT_", "RAY_"))}
    env.update({"DESKPILOT_HOME": str(tmp_path), "DESKPILOT_BACKEND": backend})
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK"):
        env.pop(k, None)
    argv = [sys.executable, "-m", "deskpilot", "eval", "run", suite, "--policy", "oracle", *select]
    argv += ["--trials", "1", "--isolation", "none", "--json"]
    done = subprocess.run(
        argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["overall"]["passed"] == 1, done.stderr
    trial = next(Path(tmp_path, summary["run"]).glob("trials/*/*/result.json"))
    result: dict[str, Any] = json.loads(trial.read_text())
    return result


@pytest.fixture(scope="module", params=["sway", "gnome"])
def wayland_box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """One sandbox of each Wayland kind for the module's tests."""
    require(request.param)
    with Sandbox(kind=request.param, width=1024, height=768) as sb:
        yield sb


async def _app_frames(session_bus: str) -> dict[int, list[str]]:
    from deskpilot.desktop.atspi.bus import AtspiBus
    from deskpilot.desktop.atspi.consts import ROOT_PATH

    bus = await AtspiBus.connect(session_bus)
    try:
        out: dict[int, list[str]] = {}
        for name in await bus.app_buses():
            try:
                pid = await bus.pid_of(name)
                kids = await bus.call(name, ROOT_PATH, "Accessible", "GetChildren")
                titles = []
                for _b, child in kids[0]:
                    role = await bus.call(name, str(child), "Accessible", "GetRoleName")
                    if role[0] in ("frame", "window", "dialog", "alert", "file chooser"):
                        titles.append(
                            str(await bus.get_property(name, str(child), "Accessible", "Name"))
                        )
                out[pid] = titles
            except (AtspiTimeout, AtspiCallError):
                continue  # busy or leaving: not there yet
        return out
    finally:
        await bus.close()


def frames_by_pid(session_bus: str) -> dict[int, list[str]]:
    """{pid: [frame titles]} of every app on the sandbox's accessibility bus (read as root)."""
    return asyncio.run(_app_frames(session_bus))


async def _walk(
    session_bus: str, pid: int, visit: Callable[[AtspiBus, str, str], Awaitable[T | None]]
) -> T | None:
    """Visit the elements of the app of ``pid`` breadth first, ``visit(bus, app, path)`` each,
    until a visit returns something (returned); None when none did."""
    from deskpilot.desktop.atspi.bus import AtspiBus
    from deskpilot.desktop.atspi.consts import ROOT_PATH

    bus = await AtspiBus.connect(session_bus)
    try:
        for app in await bus.app_buses():
            try:
                if await bus.pid_of(app) != pid:
                    continue
            except (AtspiTimeout, AtspiCallError):
                continue
            todo = [ROOT_PATH]
            while todo:
                path = todo.pop(0)
                kids = await bus.call(app, path, "Accessible", "GetChildren")
                for _b, child in kids[0]:
                    todo.append(str(child))
                    found = await visit(bus, app, str(child))
                    if found is not None:
                        return found
        return None
    finally:
        await bus.close()


async def _is(bus: AtspiBus, app: str, path: str, role: str, name: str) -> bool:
    got_role = await bus.call(app, path, "Accessible", "GetRoleName")
    got_name = await bus.get_property(app, path, "Accessible", "Name")
    return bool(got_role[0] == role and got_name == name)


def window_extents(
    session_bus: str, pid: int, role: str, name: str, coords: int = 1
) -> tuple[int, int, int, int]:
    """(x, y, w, h) of the first element of ``pid`` with ``role`` and ``name``, relative to its
    window, read over AT-SPI (``coords``: AT-SPI's coordinate type, 1 = window, 0 = "screen" —
    window-relative too on Wayland, and the only right ones for Qt 5 there)."""

    async def extents(bus: AtspiBus, app: str, path: str) -> tuple[int, int, int, int] | None:
        if not await _is(bus, app, path, role, name):
            return None
        ext = await bus.call(app, path, "Component", "GetExtents", "u", [coords])
        x, y, w, h = (int(v) for v in ext[0])
        return x, y, w, h

    found = asyncio.run(_walk(session_bus, pid, extents))
    if found is None:
        raise LookupError(f"no {role} {name!r} in app {pid}")
    return found


def do_action(session_bus: str, pid: int, role: str, name: str) -> bool:
    """Run the first action of an app's element found by role and name (False: not there)."""

    async def act(bus: AtspiBus, app: str, path: str) -> bool | None:
        if not await _is(bus, app, path, role, name):
            return None
        await bus.call(app, path, "Action", "DoAction", "i", [0])
        return True

    return bool(asyncio.run(_walk(session_bus, pid, act)))


def is_checked(session_bus: str, pid: int, role: str, name: str) -> bool | None:
    """Whether an app's element (by role and name) is checked; None when it is not there."""

    async def checked(bus: AtspiBus, app: str, path: str) -> bool | None:
        if not await _is(bus, app, path, role, name):
            return None
        states = await bus.call(app, path, "Accessible", "GetState")
        return bool(states[0][0] & (1 << 4))  # ATSPI_STATE_CHECKED

    return asyncio.run(_walk(session_bus, pid, checked))


def texts_of(session_bus: str, pid: int) -> list[str]:
    """The texts of an app's text fields, read over AT-SPI."""
    out: list[str] = []

    async def text(bus: AtspiBus, app: str, path: str) -> None:
        role = await bus.call(app, path, "Accessible", "GetRoleName")
        if role[0] in ("text", "entry", "editbar"):
            with contextlib.suppress(AtspiCallError):
                got = await bus.call(app, path, "Text", "GetText", "ii", [0, -1])
                out.append(str(got[0]))

    asyncio.run(_walk(session_bus, pid, text))
    return out


async def focused_window_stream(session_bus: str, timeout: float = 20.0) -> MutterSession:
    """A Mutter session recording the focused window, once there is one: RecordWindow fails
    with "Window not found" between a new window's frame reaching the bus and mutter focusing
    it (seen once in the full suite of 2026-12-02)."""

    async def started() -> MutterSession | None:
        try:
            return await MutterSession.start(session_bus, record="window")
        except MutterError as exc:
            if "Window not found" in str(exc):
                return None
            raise

    return await async_wait_for(started, timeout=timeout, what="a focused window to record")
