"""Sandboxes of each Wayland kind: up as an unprivileged user, apps native on Wayland and on
Xwayland with their accessibility trees readable by deskpilot (root), and a teardown that
leaves no process, no claim and no X lock behind — nothing on the host changed."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from deskpilot import _procfs
from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.compositors import x_displays_of
from deskpilot.sandbox.info import read_info
from deskpilot.sandbox.processes import processes_of
from deskpilot.sandbox.user import claims_dir, load_user
from tests.wayland.conftest import frames_by_pid, require

pytestmark = [pytest.mark.sandbox, pytest.mark.app]


def _uid_of(pid: int) -> int:
    return os.stat(f"/proc/{pid}").st_uid


def _names(pids: list[int]) -> set[str]:
    return {_procfs.read(f"/proc/{p}/comm").decode().strip() for p in pids}


@pytest.mark.parametrize("kind", ["sway", "gnome"])
def test_wayland_sandbox_runs_apps_and_leaves_nothing(kind: str) -> None:
    require(kind)
    passwd_before = Path("/etc/passwd").read_bytes()
    with Sandbox(kind=kind, width=1024, height=768) as sb:
        info = sb.info
        assert info is not None and info.kind == kind
        run = info.runtime_dir
        assert read_info(run) == info  # what a process given DESKPILOT_SANDBOX reads
        assert info.wayland_display.startswith(run) and os.path.exists(info.wayland_display)
        assert info.display, "Xwayland's display is known"
        native = sb.spawn(["zenity", "--entry", "--title=native one"])
        x11 = sb.spawn(["zenity", "--entry", "--title=on xwayland"], env={"GDK_BACKEND": "x11"})
        frames = wait_for(
            lambda: (f := frames_by_pid(info.session_bus)).get(native.pid) and f.get(x11.pid) and f,
            timeout=30,
            what="both apps on the accessibility bus",
        )
        assert frames[native.pid] == ["native one"] and frames[x11.pid] == ["on xwayland"]
        pids = processes_of(run, info.pgid)
        names = _names(pids)
        compositor = "sway" if kind == "sway" else "mutter"
        assert {compositor, "dbus-daemon", "zenity", "Xwayland"} <= names, names
        if kind == "gnome":
            assert {"pipewire", "wireplumber"} <= names
        # when deskpilot is root, the desktop is not: its processes run as the sandbox user
        if os.geteuid() == 0:
            user = load_user(run)
            assert user is not None and user.switches
            assert info.uid == user.uid
            assert {_uid_of(p) for p in [info.pids["compositor"], native.pid]} == {user.uid}
            with pytest.raises(KeyError):
                pwd.getpwuid(user.uid)  # the host's user database never had it
            assert (Path(claims_dir()) / str(user.uid)).read_text() == run
        xdisplays = x_displays_of(info.pids["compositor"])
    assert [p for p in pids if not _procfs.is_zombie(p)] == []
    assert not Path(run).exists()
    assert Path("/etc/passwd").read_bytes() == passwd_before
    if os.geteuid() == 0:
        assert not (Path(claims_dir()) / str(user.uid)).exists()
    for display in xdisplays:
        assert not Path(f"/tmp/.X{display[1:]}-lock").exists()


def test_sandbox_up_status_down_sway(tmp_path: Path) -> None:
    require("sway")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "DESKPILOT_SANDBOX")}
    env["DESKPILOT_HOME"] = str(tmp_path)
    cli = [sys.executable, "-m", "deskpilot", "sandbox"]
    argv = [*cli, "up", "--kind", "sway", "--name", "w", "--size", "800x600"]
    up = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    try:
        assert up.returncode == 0, up.stderr
        exports = dict(
            line.removeprefix("export ").split("=", 1) for line in up.stdout.splitlines()
        )
        assert {"WAYLAND_DISPLAY", "SWAYSOCK", "DBUS_SESSION_BUS_ADDRESS"} <= exports.keys()
        assert "sway on wayland-" in up.stderr
        again = subprocess.run(
            [*cli, "up", "--kind", "gnome", "--name", "w"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert again.returncode != 0 and "is a sway desktop, not gnome" in again.stderr
        status = subprocess.run(
            [*cli, "status"], env=env, capture_output=True, text=True, timeout=30, check=False
        )
        assert status.returncode == 0 and "w: up  sway on wayland-" in status.stdout
    finally:
        down = subprocess.run(
            [*cli, "down", "--name", "w"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert down.returncode == 0, down.stderr
    runtime = exports["DESKPILOT_SANDBOX"]
    assert not Path(runtime).exists() and processes_of(runtime) == []


def test_unknown_kind_is_refused(tmp_path: Path) -> None:
    env = {**os.environ, "DESKPILOT_HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "deskpilot", "sandbox", "up", "--kind", "kde"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "'kde' is not one of" in done.stderr
