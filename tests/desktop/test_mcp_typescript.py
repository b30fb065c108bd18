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
from typing import Any

import anyio
import anyio.to_thread
import pytest

from deskpilot.config import Settings
from deskpilot.tools.builtin import all_tools
from tests.desktop.conftest import Apps
from tests.e2e.test_mcp_http import DESKPILOT, server_env

pytestmark = pytest.mark.asyncio(loop_scope="session")

TS = Path(__file__).parents[1] / "ts"
NODE = TS / "node_modules" / ".bin" / "node"


def node() -> str:
    if not NODE.exists():
        pytest.fail(
            f"{NODE} is missing: the TypeScript MCP clients are installed by `make setup` "
            "(scripts/setup-node.sh: npm ci in tests/ts)"
        )
    return str(NODE)


async def run_node(script: str, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    with anyio.fail_after(timeout):
        done = await anyio.run_process(
            [node(), str(TS / script), json.dumps(payload)], cwd=TS, check=False, stderr=None
        )
    lines = done.stdout.decode().strip().splitlines()
    assert done.returncode == 0 and lines, f"{script} failed ({done.returncode})"
    out: dict[str, Any] = json.loads(lines[-1])
    return out


async def test_a_90_second_approval_reaches_a_client_with_a_60_second_timeout(
    desktop_settings: Settings, apps: Apps
) -> None:
    window = await apps.spawn(
        ["zenity", "--question", "--title=Slow approval", "--text=Send?", "--ok-label=Send"],
        match=lambda w: w.title == "Slow approval",
    )
    proc = apps.procs[-1]
    payload = {
        "command": DESKPILOT,
        "env": dict(desktop_settings.environ),
        "windowID": window.stable_id,
        "holdMs": 90_000,
        "timeoutMs": 60_000,
    }
    started = time.monotonic()
    out = await run_node("approval_progress.mjs", payload, timeout=240)
    assert "error" not in out, out
    assert out["isError"] is False, out["text"]
    assert out["elapsedMs"] >= 90_000
    assert len(out["questions"]) == 1 and out["elementID"] in out["questions"][0]
    # progress kept the call alive: one at least every PROGRESS_INTERVAL, none later than 60 s
    # after the previous one (else the client would have timed out)
    stamps = [0, *(p["at"] for p in out["progress"]), out["elapsedMs"]]
    assert len(out["progress"]) >= 8, out["progress"]
    assert max(b - a for a, b in itertools.pairwise(stamps)) < 60_000
    waiting = [p["message"] for p in out["progress"] if p["at"] < 89_000]
    assert waiting and all("waiting for the user's approval" in m for m in waiting), waiting
    assert await anyio.to_thread.run_sync(lambda: proc.wait(timeout=10)) == 0  # Send was clicked
    assert time.monotonic() - started >= 90


def sandboxes_of(home: Path) -> list[int]:
    """Xvfb processes started by a server whose DESKPILOT_HOME is ``home``."""
    mark = f"DESKPILOT_HOME={home}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv0 = fh.read().split(b"\0")[0]
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        if argv0.endswith(b"Xvfb") and mark in env:
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
            out["tools"] == len(all_tools().list())
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
