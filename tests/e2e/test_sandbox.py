"""The sandbox desktop: starts, runs apps with accessibility on, and leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from deskpilot import _procfs
from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.processes import processes_of

CLI = [sys.executable, "-m", "deskpilot"]


def alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if not _procfs.is_zombie(pid)]


def deskpilot(env: dict[str, str], *args: str, timeout: float = 60) -> CompletedProcess[str]:
    """``deskpilot ARGS`` in a process of its own, its output kept; never raises on its exit."""
    return subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.sandbox
def test_context_manager_leaves_nothing_behind() -> None:
    with Sandbox(width=800, height=600) as sb:
        assert sb.info is not None
        sb.spawn(["galculator"])
        runtime = sb.info.runtime_dir
        wait_for(
            lambda: len(processes_of(runtime, sb.info.pgid)) >= 6,  # type: ignore[union-attr]
            timeout=20,
            what="daemons and the app",
        )
        pids = processes_of(runtime, sb.info.pgid)
        names = {Path(f"/proc/{p}/exe").resolve().name for p in pids if alive([p])}
        assert {"Xvfb", "dbus-daemon", "openbox", "galculator"} <= names
    assert alive(pids) == []
    assert not Path(runtime).exists()


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "DESKPILOT_SANDBOX")}
    env["DESKPILOT_HOME"] = str(tmp_path)
    return env


@pytest.mark.sandbox
def test_sandbox_run_exit_code_and_environment(tmp_path: Path) -> None:
    script = (
        'test -n "$DISPLAY" && test -n "$DBUS_SESSION_BUS_ADDRESS" && '
        'test "$ACCESSIBILITY_ENABLED" = 1 && test "$QT_LINUX_ACCESSIBILITY_ALWAYS_ON" = 1 '
        '&& echo "$XDG_RUNTIME_DIR" && exit 7'
    )
    done = deskpilot(
        _env(tmp_path), "sandbox", "run", "--size", "640x480", "--", "sh", "-c", script
    )
    assert done.returncode == 7, done.stderr
    runtime = done.stdout.strip()
    assert runtime and not Path(runtime).exists()
    assert processes_of(runtime) == []
    missing = deskpilot(_env(tmp_path), "sandbox", "run", "--", "no-such-command-xyz")
    assert missing.returncode == 127 and "command not found" in missing.stderr


@pytest.mark.sandbox
def test_sandbox_run_interrupted_tears_down(tmp_path: Path) -> None:
    argv = [
        *CLI,
        "sandbox",
        "run",
        "--",
        "sh",
        "-c",
        'echo "$XDG_RUNTIME_DIR"; galculator & sleep 60',
    ]
    with subprocess.Popen(
        argv, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as proc:
        assert proc.stdout is not None
        runtime = proc.stdout.readline().strip()
        wait_for(
            lambda: any(_comm(p) == "galculator" for p in alive(processes_of(runtime))),
            timeout=20,
            what="galculator to start",
        )
        pids = processes_of(runtime)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    assert alive(pids) == []
    assert processes_of(runtime) == []


def _comm(pid: int) -> str:
    return _procfs.read(f"/proc/{pid}/comm").decode().strip()


@pytest.mark.sandbox
def test_owner_killed_reaper_cleans_up(tmp_path: Path) -> None:
    code = (
        "import sys,time; from deskpilot.sandbox import Sandbox\n"
        "sb = Sandbox().__enter__(); sb.spawn(['galculator'])\n"
        "print(sb.info.runtime_dir, sb.info.pgid, flush=True); time.sleep(120)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=_env(tmp_path)
    ) as owner:
        assert owner.stdout is not None
        runtime, pgid = owner.stdout.readline().split()
        wait_for(lambda: len(processes_of(runtime, int(pgid))) >= 5, timeout=20, what="the desktop")
        pids = processes_of(runtime, int(pgid))
        owner.kill()
    wait_for(lambda: not alive(pids), timeout=20, what="the reaper to tear the desktop down")
    assert not Path(runtime).exists() or not alive(processes_of(runtime, int(pgid)))


@pytest.mark.parametrize("size", ["0x0", "abc", "99999x10"])
def test_bad_size_is_refused(tmp_path: Path, size: str) -> None:
    done = deskpilot(_env(tmp_path), "sandbox", "run", "--size", size, "--", "true", timeout=30)
    assert done.returncode == 2 and "'--size'" in done.stderr


@pytest.mark.sandbox
def test_up_status_down(tmp_path: Path) -> None:
    env = _env(tmp_path)
    up = deskpilot(env, "sandbox", "up", "--size", "800x600")
    assert up.returncode == 0, up.stderr
    exports = dict(line.removeprefix("export ").split("=", 1) for line in up.stdout.splitlines())
    assert set(exports) == {"DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "DESKPILOT_SANDBOX"}
    runtime = exports["DESKPILOT_SANDBOX"]
    try:
        again = deskpilot(env, "sandbox", "up")
        assert again.returncode == 0 and "already up" in again.stderr
        assert again.stdout == up.stdout  # the same desktop, the same lines
        status = deskpilot(env, "sandbox", "status", timeout=30)
        assert status.returncode == 0 and "up" in status.stdout
        on_it = {**env, **exports}
        listed = deskpilot(on_it, "tool", "list_windows")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.startswith("Open Windows (0 total):")
        pids = processes_of(runtime)
        assert pids
    finally:
        down = deskpilot(env, "sandbox", "down")
    assert down.returncode == 0, down.stderr
    assert alive(pids) == [] and not Path(runtime).exists()
    gone = deskpilot(env, "sandbox", "status", timeout=30)
    assert gone.returncode == 1 and "no sandbox is running" in gone.stdout
