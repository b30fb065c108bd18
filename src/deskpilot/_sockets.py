"""Unix sockets: whether something listens on one (a display's, a compositor's, a bus's),
and which process does."""

from __future__ import annotations

import contextlib
import os
import socket

from deskpilot import _procfs


def answers(path: str, timeout: float = 1.0) -> bool:
    """True when a connection to the Unix socket at ``path`` is accepted within ``timeout``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError:
            return False
    return True


def listening_pid(path: str) -> int | None:
    """The PID of the process listening on the Unix socket ``path`` (or the abstract socket of
    that name), among the processes this one may read; None when none is found."""
    inodes: set[str] = set()
    with contextlib.suppress(OSError), open("/proc/net/unix") as fh:
        for row in fh.read().splitlines()[1:]:
            cols = row.split()
            # a listening socket: flags __SO_ACCEPTCON (00010000); path or abstract "@path"
            if len(cols) >= 8 and cols[3] == "00010000" and cols[7].lstrip("@") == path:
                inodes.add(f"socket:[{cols[6]}]")
    if not inodes:
        return None
    for pid in _procfs.pids():
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                        return pid
    return None
