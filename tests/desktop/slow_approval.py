"""The 90-second approval over the official TypeScript client, run beside the rest of the suite.

The scenario is 90 s of waiting by definition (the user answers the approval that late), and
needs no CPU meanwhile: it starts when the run's first desktop test does, on a sandbox desktop
of its own (its dialog is never in another test's windows), and its test only collects what
happened. Run alone, the test waits the same 90 s it always did.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from deskpilot._wait import async_wait_for
from deskpilot.config import load_settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.ports.identity import is_new
from deskpilot.desktop.registry import open_resolved
from deskpilot.sandbox import Sandbox
from tests.e2e.test_mcp_http import DESKPILOT

TS = Path(__file__).parents[1] / "ts"
NODE = TS / "node_modules" / ".bin" / "node"
#: the node id suffix of the test that collects the job (the job runs only when it is selected)
TEST = "test_mcp_typescript.py::test_a_90_second_approval_reaches_a_client_with_a_60_second_timeout"
HOLD_MS, TIMEOUT_MS = 90_000, 60_000


@dataclass
class SlowApproval:
    """The running scenario: a dialog asking "Send?" on its own desktop, and the TS client
    whose consequential click on Send waits HOLD_MS for the user's approval."""

    started: float = 0.0
    window: WindowInfo | None = None
    dialog: subprocess.Popen[bytes] | None = None
    client: subprocess.Popen[bytes] | None = None
    failed: BaseException | None = None  # why the job could not start (the test reports it)
    _done: dict[str, Any] = field(default_factory=dict)

    async def outcome(self, timeout: float) -> dict[str, Any]:
        """The client's one-line report, once it has exited (its exit code checked)."""
        if self.failed is not None:
            raise AssertionError(f"the slow-approval scenario did not start: {self.failed!r}")
        client = self.client
        assert client is not None
        if not self._done:
            out, _ = await anyio.to_thread.run_sync(lambda: client.communicate(timeout=timeout))
            lines = out.decode().strip().splitlines()
            assert client.returncode == 0 and lines, (
                f"approval_progress.mjs failed ({client.returncode})"
            )
            self._done.update(json.loads(lines[-1]))
        return self._done

    async def dialog_exit(self, timeout: float) -> int:
        dialog = self.dialog
        assert dialog is not None
        return await anyio.to_thread.run_sync(lambda: dialog.wait(timeout=timeout))

    def stop(self) -> None:
        for proc in (self.client, self.dialog):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)


async def _start(job: SlowApproval, sandbox: Sandbox, home: Path) -> None:
    assert sandbox.info is not None
    env = sandbox.app_env()
    env["DESKPILOT_SANDBOX"] = sandbox.info.runtime_dir
    env["DESKPILOT_HOME"] = str(home)
    settings = load_settings(env=env)
    desktop = await open_resolved(settings)
    try:
        before = await desktop.window_handles()
        job.dialog = sandbox.spawn(
            ["zenity", "--question", "--title=Slow approval", "--text=Send?", "--ok-label=Send"],
            log="zenity.log",
        )

        async def dialog() -> WindowInfo | None:
            for w in await desktop.list_windows():
                if is_new(before, w.handle, w.pid) and w.title == "Slow approval":
                    return w
            return None

        job.window = await async_wait_for(dialog, timeout=60, what="the Slow approval dialog")
        await desktop.wait_tree_ready(job.window, 60)
    finally:
        await desktop.close()
    if not NODE.exists():
        raise FileNotFoundError(
            f"{NODE} is missing: the TypeScript MCP clients are installed by `make setup` "
            "(scripts/setup-node.sh: npm ci in tests/ts)"
        )
    payload = {
        "command": DESKPILOT,
        "env": dict(settings.environ),
        "windowID": job.window.stable_id,
        "holdMs": HOLD_MS,
        "timeoutMs": TIMEOUT_MS,
    }
    job.started = time.monotonic()
    job.client = subprocess.Popen(
        [str(NODE), str(TS / "approval_progress.mjs"), json.dumps(payload)],
        cwd=TS,
        stdout=subprocess.PIPE,
        stderr=None,
    )


@contextlib.asynccontextmanager
async def running_slow_approval(home: Path) -> AsyncIterator[SlowApproval]:
    """Start the scenario (a failure to start is kept for the test to report, not raised in
    whichever test happened to start the job); everything of it is gone afterwards."""
    job = SlowApproval()
    with Sandbox(width=800, height=600) as sandbox:
        try:
            await _start(job, sandbox, home)
        except Exception as exc:
            job.failed = exc
        try:
            yield job
        finally:
            job.stop()
