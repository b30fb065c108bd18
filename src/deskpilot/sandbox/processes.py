"""Which processes belong to a sandbox, and killing them all.

A sandbox's processes are those in its process group, those with its private
``XDG_RUNTIME_DIR`` in their environment or its directory on their command line, those
recorded as spawned on it (:func:`record_spawn`: apps that left the group and rewrote their
environment, as Chromium does), and all their descendants. :func:`teardown` kills them and
removes the sandbox's files; the reaper (:mod:`deskpilot._reaper`) calls it too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, wait_for

#: Apps started on a sandbox by other processes (deskpilot's launcher) are listed here, one PID
#: per line, so that teardown finds them even when they left the process group and rewrote
#: their environment (Chromium does both).
SPAWNED_FILE = "spawned.pids"


def record_spawn(runtime_dir: str, pid: int) -> None:
    """Note a process started on the sandbox at ``runtime_dir`` (for teardown)."""
    with contextlib.suppress(OSError), open(os.path.join(runtime_dir, SPAWNED_FILE), "a") as fh:
        fh.write(f"{pid}\n")


def processes_of(runtime_dir: str, pgid: int | None = None) -> list[int]:
    """PIDs that belong to a sandbox: in its process group, with its XDG_RUNTIME_DIR in their
    environment or its directory on their command line, recorded as spawned on it, and all
    their descendants."""
    marker = f"XDG_RUNTIME_DIR={runtime_dir}".encode()
    path_mark = runtime_dir.encode()
    listed = _procfs.read(os.path.join(runtime_dir, SPAWNED_FILE)).split()
    spawned = {int(x) for x in listed if x.isdigit()}
    me = os.getpid()
    found: set[int] = set()
    links = _procfs.parents()
    for pid in links:
        if pid == me:
            continue
        try:
            in_group = pgid is not None and os.getpgid(pid) == pgid
        except OSError:
            continue
        if (
            in_group
            or pid in spawned
            or marker in _procfs.read(f"/proc/{pid}/environ").split(b"\0")
            or path_mark in _procfs.read(f"/proc/{pid}/cmdline")
        ):
            found.add(pid)
    # and their descendants (Chromium's helpers are children of its browser process)
    return sorted(_procfs.descendants(found, links) - {me})


def teardown(runtime_dir: str, pgid: int, *, grace: float = 1.0) -> list[int]:
    """Kill everything belonging to a sandbox; remove its files. Returns PIDs still alive."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    for pid in processes_of(runtime_dir):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)

    def all_gone() -> bool:
        return all(_procfs.is_zombie(p) for p in processes_of(runtime_dir, pgid))

    try:
        wait_for(all_gone, timeout=grace, what="sandbox processes to exit")
    except WaitTimeout:
        for pid in processes_of(runtime_dir, pgid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(WaitTimeout):
            wait_for(all_gone, timeout=2.0, what="sandbox processes to die")
    left = [p for p in processes_of(runtime_dir, pgid) if not _procfs.is_zombie(p)]
    if not left:
        _remove_stale_x_files(runtime_dir)
    shutil.rmtree(runtime_dir, ignore_errors=True)
    from deskpilot.sandbox.user import release_user

    release_user(runtime_dir)
    return left


def _remove_stale_x_files(runtime_dir: str) -> None:
    """Remove the X lock files and sockets a killed compositor left for its Xwayland (mutter
    leaves them even on SIGTERM; measured)."""
    from deskpilot.sandbox.compositors import x_displays_of
    from deskpilot.sandbox.info import read_info

    info = read_info(runtime_dir)
    owner = info.pids.get("compositor") if info is not None else None
    if owner is None or not _procfs.is_zombie(owner):
        return
    for display in x_displays_of(owner):
        for path in (f"/tmp/.X{display[1:]}-lock", f"/tmp/.X11-unix/X{display[1:]}"):
            with contextlib.suppress(OSError):
                os.unlink(path)
