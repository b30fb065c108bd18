"""Reading /proc: process files, parent links, descendants, zombies (Linux only)."""

from __future__ import annotations

import os
from collections.abc import Iterable


def read(path: str) -> bytes:
    """A /proc file's bytes, or b"" if the process is gone or unreadable."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _stat_fields(pid: int) -> list[bytes]:
    # the command name (field 2) may hold spaces and parentheses: split after the last ")"
    stat = read(f"/proc/{pid}/stat")
    return stat.rsplit(b")", 1)[1].split() if b")" in stat else []


def pids() -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit()]


def parents() -> dict[int, int]:
    """{pid: parent pid} of every process."""
    out = {}
    for pid in pids():
        fields = _stat_fields(pid)
        if len(fields) > 1:
            out[pid] = int(fields[1])
    return out


def descendants(roots: Iterable[int], links: dict[int, int] | None = None) -> set[int]:
    """``roots`` and every process below them."""
    children: dict[int, list[int]] = {}
    for pid, ppid in (links if links is not None else parents()).items():
        children.setdefault(ppid, []).append(pid)
    out = set(roots)
    stack = list(out)
    while stack:
        for kid in children.get(stack.pop(), []):
            if kid not in out:
                out.add(kid)
                stack.append(kid)
    return out


def is_zombie(pid: int) -> bool:
    """True for a zombie, and for a process that no longer exists."""
    fields = _stat_fields(pid)
    return not fields or fields[0] == b"Z"


def exe_name(pid: int) -> str:
    """Basename of a process's executable (or its argv[0])."""
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        pass
    argv0 = read(f"/proc/{pid}/cmdline").split(b"\0", 1)[0].decode(errors="replace")
    return os.path.basename(argv0)
