"""Writing a file so that a reader sees the old content or the whole new one, never a part:
the one atomic-write helper (session state, saved conversations, tokens, eval records,
sandbox info, the price list)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory, renamed over
    it. Text is written as UTF-8. ``mode`` sets the permissions before any byte is written (a
    token file: ``0o600``); otherwise the temporary file's own (``0600``) are widened to what a
    plain ``open`` would give. The parent directory is made when missing; on any failure the
    temporary file is removed and ``path`` is left as it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode if mode is not None else 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` would, for a moment, for
    every thread)."""
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii", errors="replace") as fh,
    ):
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022
