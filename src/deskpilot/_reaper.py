"""Tear a sandbox down when its owner dies without doing so (``python -m deskpilot._reaper``).

Arguments: PIPE_FD RUNTIME_DIR PGID. The owner holds the write end of the pipe. A byte before
end-of-file means "the owner is stopping the sandbox itself"; a bare end-of-file means the owner
died, and the reaper kills the sandbox's process group and sweeps its processes.
"""

from __future__ import annotations

import os
import signal
import sys


def main(argv: list[str]) -> int:
    fd, runtime_dir, pgid = int(argv[0]), argv[1], int(argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        data = os.read(fd, 1)
    except OSError:
        data = b""
    if data:
        return 0
    from deskpilot.sandbox.processes import teardown

    teardown(runtime_dir, pgid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
