"""The console benchmark's probe window hands out its ID only once the window manager lists it
(#28: on a loaded machine openbox managed the new window late, a bench session handed the ID
first found "Window … not found", and the benchmark waited out its 120 s for the binding).

The window manager is made slow for certain — stopped (SIGSTOP) while the probe starts, let go
a moment later — and the ID the probe prints is then looked up at once, in the root window's
``_NET_CLIENT_LIST`` read with Xlib (not through deskpilot's window list)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from Xlib import Xatom, display

from deskpilot._wait import wait_for
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.processes import processes_of

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[2]


def client_list(name: str) -> list[int]:
    d = display.Display(name)
    try:
        prop = d.screen().root.get_full_property(d.intern_atom("_NET_CLIENT_LIST"), Xatom.WINDOW)
        return list(prop.value) if prop is not None else []
    finally:
        d.close()


def managing(name: str) -> None:
    """Return once the window manager is done starting: a window of ours gets listed (openbox
    stopped in the middle of its start would never adopt the probe's window)."""
    d = display.Display(name)
    try:
        screen = d.screen()
        win = screen.root.create_window(0, 0, 10, 10, 0, screen.root_depth)
        win.map()
        d.sync()
        wait_for(lambda: win.id in client_list(name), timeout=30, what="a window to be managed")
        win.destroy()
        d.sync()
    finally:
        d.close()


def test_the_probe_prints_its_window_id_once_the_window_manager_lists_it() -> None:
    with Sandbox(width=1280, height=800) as sb:
        assert sb.info is not None
        pids = processes_of(sb.info.runtime_dir, sb.info.pgid)
        wm = [p for p in pids if Path(f"/proc/{p}/exe").resolve().name == "openbox"]
        assert len(wm) == 1, pids
        env = {**os.environ, **sb.app_env(), "PYTHONPATH": str(ROOT)}
        managing(env["DISPLAY"])
        os.kill(wm[0], signal.SIGSTOP)
        # the window manager comes back 1.5 s later, whatever the probe does meanwhile
        later = threading.Timer(1.5, os.kill, (wm[0], signal.SIGCONT))
        later.start()
        with subprocess.Popen(
            [sys.executable, "-m", "bench.console_probe"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as probe:
            try:
                assert probe.stdout is not None
                line = probe.stdout.readline().strip()
                listed = client_list(env["DISPLAY"])
                later.join()
                assert line, "the probe exited without printing its window ID"
                pid, xid = line.split("/")
                assert int(pid) == probe.pid
                assert int(xid) in listed, (line, listed)
            finally:
                later.cancel()
                os.kill(wm[0], signal.SIGCONT)
                probe.kill()
