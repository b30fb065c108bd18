"""deskpilot with the official TypeScript MCP clients (tests/ts, installed by ``make setup``).

* SDK 1.x (what Claude Desktop, VS Code and ``mcp-remote`` are built on) times a call out after
  60 s unless progress arrives and the caller asked to reset on it: an approval the user answers
  after 90 s must still reach the client, because the server sends progress while it waits.
* SDK 2.x in auto negotiation probes stdio servers on a throwaway sibling process before the
  real one: ``deskpilot mcp --sandbox`` must then still start exactly one sandbox.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from deskpilot.tools.builtin import all_tools
from tests.desktop.slow_approval import HOLD_MS, NODE, TIMEOUT_MS, TS, SlowApproval
from tests.e2e.test_mcp_http import DESKPILOT, server_env

pytestmark = pytest.mark.asyncio(loop_scope="session")


def node() -> str:
    if not NODE.exists():
        pytest.fail(
            f"{NODE} is missing: the TypeScript MCP clients are installed by `make setup` "
            "(scripts/setup-node.sh: npm ci in tests/ts)"
        )
    return str(NODE)


async def test_a_90_second_approval_reaches_a_client_with_a_60_second_timeout(
    slow_approval: SlowApproval | None,
) -> None:
    """The scenario runs beside the rest of the suite (tests/desktop/slow_approval.py): a
    dialog asking "Send?", the client's click on Send held HOLD_MS for the user's approval."""
    assert slow_approval is not None  # the fixture starts it whenever this test is selected
    out = await slow_approval.outcome(timeout=240)
    assert "error" not in out, out
    assert out["isError"] is False, out["text"]
    assert out["elapsedMs"] >= HOLD_MS
    assert len(out["questions"]) == 1 and out["elementID"] in out["questions"][0]
    # progress kept the call alive: one at least every PROGRESS_INTERVAL, none later than 60 s
    # after the previous one (else the client would have timed out)
    stamps = [0, *(p["at"] for p in out["progress"]), out["elapsedMs"]]
    assert len(out["progress"]) >= 8, out["progress"]
    assert max(b - a for a, b in itertools.pairwise(stamps)) < TIMEOUT_MS
    waiting = [p["message"] for p in out["progress"] if p["at"] < HOLD_MS - 1_000]
    assert waiting and all("waiting for the user's approval" in m for m in waiting), waiting
    assert await slow_approval.dialog_exit(timeout=10) == 0  # Send was clicked
    assert time.monotonic() - slow_approval.started >= HOLD_MS / 1000


def _argv0(pid: int | str) -> bytes:
    with open(f"/proc/{pid}/cmdline", "rb") as fh:
        return fh.read().split(b"\0")[0]


def _parent(pid: int | str) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rsplit(b")", 1)[1].split()[1])


def sandboxes_of(home: Path) -> list[int]:
    """Xvfb processes started by a server whose DESKPILOT_HOME is ``home``. A child an Xvfb
    forks (to run xkbcomp for a keymap) has its parent's command line until it runs its own
    program: it is no second sandbox (once seen in a full suite: two pids in a row)."""
    mark = f"DESKPILOT_HOME={home}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv0 = _argv0(entry)
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        if not (argv0.endswith(b"Xvfb") and mark in env):
            continue
        try:
            forked = _argv0(_parent(entry)).endswith(b"Xvfb")
        except (OSError, ValueError, IndexError):  # its parent gone meanwhile: it is counted
            forked = False
        if not forked:
            found.append(int(entry))
    return found


async def test_the_sdk_2_probe_never_starts_a_second_sandbox(home: Path) -> None:
    """Every Xvfb a server with this DESKPILOT_HOME runs is noted while the client connects
    (probe sibling included) and works: exactly one, the session's."""
    payload = {"command": DESKPILOT, "args": ["mcp", "--sandbox"], "env": server_env(home)}
    seen: set[int] = set()
    watching = threading.Event()
    watching.set()

    def watch() -> None:
        while watching.is_set():
            seen.update(sandboxes_of(home))
            time.sleep(0.02)  # a sampler's pace, not a synchronisation

    sampler = threading.Thread(target=watch, daemon=True)
    sampler.start()
    proc = subprocess.Popen(
        [node(), str(TS / "probe_once.mjs"), json.dumps(payload)],
        cwd=TS,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = await anyio.to_thread.run_sync(proc.stdout.readline)
        out = json.loads(line)
        assert "error" not in out, out
        assert out["protocolVersion"] == "2026-07-28"
        assert (
            out["tools"] == len(all_tools().list()) + 2  # and begin_task, end_task
            and out["isError"] is False
            and out["windows"] == []
        )
        proc.stdin.write(b"done\n")
        proc.stdin.flush()
        assert await anyio.to_thread.run_sync(lambda: proc.wait(timeout=60)) == 0
    finally:
        watching.clear()
        sampler.join()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
    assert len(seen) == 1, f"{len(seen)} sandboxes were started"
    assert sandboxes_of(home) == []  # and it is gone with the server
