"""Safety suite — faults: each ends within its deadline with a typed error, never a hang.

* an app frozen (SIGSTOP) during a read, a click and a scroll; an app killed mid-action;
* the AT-SPI bus restarted (MCP server: typed errors, then a new app reads again) and gone
  (a run's own connection), the X server gone — on a sandbox of their own, since they break it;
* the audit writer SIGKILLed mid-run (every event it showed is in the log, which verifies) and
  the audit disk full (a file size limit on the writer: the run stops and says why);
* a provider answering 5xx, asking to come back in an hour, never answering, stalling halfway
  through a reply — local servers speaking the real wire format (:mod:`tests.e2e.wire`);
* an MCP client killed while its call runs (the server stops cleanly, the call is recorded).

Deadlines are what a caller may wait (3 s for a desktop call). They are measured and reported
(``make safety``), not asserted: a test only fails on a hang (far past the deadline) or an
untyped error.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_asyncio

from deskpilot._wait import async_wait_for
from deskpilot.agent.loop import RunOptions
from deskpilot.agent.providers import HttpClient, RetryPolicy, get_provider
from deskpilot.agent.task import computer_use_task
from deskpilot.audit import AuditLog
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.errors import AccessibilityUnavailable
from deskpilot.policy import AllowAll
from deskpilot.runtime import open_session
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.recipe import find_bus_launcher
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult
from deskpilot.tools.builtin import computer_use_tools
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id, mcp_text
from tests.e2e.test_mcp_http import DESKPILOT
from tests.e2e.test_mcp_stdio import stdio_session
from tests.e2e.wire import Decision, ModelServer, View
from tests.safety_figures import Figures, has_traceback

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.safety]

DEADLINE = 3.0  # what a desktop call may take, at most, before its typed error
HANG = 30.0  # past this, a case is a hang (a failure); between the two it is only late
KEYS = {"anthropic": "k", "openai": "k", "gemini": "k"}


async def timed(work: Awaitable[Any]) -> tuple[float, Any]:
    start = time.monotonic()
    with anyio.fail_after(HANG):
        value = await work
    return time.monotonic() - start, value


def holds(value: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    """``value`` as a condition for async_wait_for."""

    async def check() -> Any:
        return value()

    return check


def report(
    figures: Figures, case: str, seconds: float, text: str, ok: bool, deadline: float = DEADLINE
) -> None:
    figures.fault(case, seconds=seconds, deadline=deadline, error=text, typed=ok)
    assert ok and not has_traceback(text), f"{case}: {text}"


# -- an app that stops answering, or dies --------------------------------------------------------


@pytest_asyncio.fixture(loop_scope="session")
async def frozen(apps: Apps, call: Call) -> AsyncIterator[tuple[WindowInfo, str]]:
    """A galculator that was read (its "1" button's ID), then stopped (SIGSTOP)."""
    window = await apps.open("galculator")
    read = await call("read_screen_ax", {"windowID": window.stable_id})
    one = find_id(read.text, "toggle", "1")
    os.kill(window.pid, signal.SIGSTOP)
    try:
        yield window, one
    finally:
        os.kill(window.pid, signal.SIGCONT)


def not_responding(result: ToolResult, app: str = "Galculator") -> bool:
    return result.is_error and f"{app} (" in result.text and "is not responding" in result.text


async def test_an_app_frozen_during_a_read_an_action_and_a_scroll(
    frozen: tuple[WindowInfo, str], call: Call, figures: Figures
) -> None:
    window, one = frozen
    for case, tool, args in [
        ("app frozen (SIGSTOP) during a read", "read_screen_ax", {}),
        ("app frozen (SIGSTOP) during a click", "perform", {"elementID": one}),
        ("app frozen (SIGSTOP) during a scroll", "scroll", {"milliseconds": 500}),
    ]:
        seconds, result = await timed(call(tool, {**args, "windowID": window.stable_id}))
        report(figures, case, seconds, result.text, not_responding(result))


async def test_an_app_killed_mid_action(apps: Apps, call: Call, figures: Figures) -> None:
    window = await apps.open("galculator")
    read = await call("read_screen_ax", {"windowID": window.stable_id})
    one = find_id(read.text, "toggle", "1")
    os.kill(window.pid, signal.SIGSTOP)  # the click will wait on it …
    clicking = asyncio.ensure_future(
        timed(call("perform", {"elementID": one, "windowID": window.stable_id}))
    )
    await asyncio.sleep(0.3)  # … the call is in flight: now the app dies
    os.kill(window.pid, signal.SIGKILL)
    seconds, result = await clicking
    closed = result.is_error and "closed while it was being used" in result.text
    report(figures, "app killed mid-action", seconds, result.text, closed)


# -- the accessibility bus and the X server go away ----------------------------------------------


def bus_daemons(box: Sandbox) -> list[int]:
    """The accessibility bus's daemon and launcher of ``box``."""
    assert box.info is not None
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if box.info.runtime_dir.encode() in env and (
            "at-spi-bus-launcher" in cmd or "at-spi2/accessibility.conf" in cmd
        ):
            found.append(int(pid))
    return found


async def opened(settings: Settings) -> DesktopFacade | None:
    """A desktop on the settings' display, once its accessibility bus is up."""
    try:
        return await open_resolved(settings)
    except AccessibilityUnavailable:
        return None


async def a_window(desk: DesktopFacade, title: str) -> WindowInfo:
    async def shown() -> WindowInfo | None:
        return next((w for w in await desk.list_windows() if w.title == title), None)

    window = await async_wait_for(shown, timeout=60, what=f"the {title} window")
    await desk.wait_tree_ready(window, 30)
    return window


async def test_the_bus_restarted_and_the_x_server_gone(tmp_path: Path, figures: Figures) -> None:
    with Sandbox(width=800, height=600) as box:
        assert box.info is not None
        home = tmp_path / "home"
        env = {
            **box.app_env(),
            "DESKPILOT_HOME": str(home),
            "DESKPILOT_SANDBOX": box.info.runtime_dir,
        }
        settings = load_settings(env=env).with_overrides(confirm="none")
        box.spawn(["zenity", "--entry", "--title=before", "--text=Name"])
        desk = await open_resolved(settings)
        tools = computer_use_tools()
        try:
            async with (
                open_session(
                    settings, surface="python", approver=AllowAll(), desktop=desk, session=Session()
                ) as ctx,
                stdio_session(env, tmp_path / "server.log") as mcp,
            ):
                before = await a_window(desk, "before")
                assert not (
                    await tools.call("read_screen_ax", {"windowID": before.stable_id}, ctx)
                ).is_error
                assert not (
                    await mcp.call_tool("read_screen_ax", {"windowID": before.stable_id})
                ).is_error

                # the bus goes away: both surfaces get a typed error at once
                for pid in bus_daemons(box):
                    os.kill(pid, signal.SIGKILL)
                await async_wait_for(holds(desk.lost), timeout=10, what="the bus to go")
                seconds, result = await timed(
                    tools.call("read_screen_ax", {"windowID": before.stable_id}, ctx)
                )
                gone = result.is_error and "accessibility bus went away" in result.text
                report(figures, "AT-SPI bus gone (a run's connection)", seconds, result.text, gone)
                seconds, answer = await timed(
                    mcp.call_tool("read_screen_ax", {"windowID": before.stable_id})
                )
                said = mcp_text(answer)
                report(
                    figures,
                    "AT-SPI bus gone (MCP server)",
                    seconds,
                    said,
                    answer.is_error and "went away" in said,
                )

                # … and comes back: the MCP server reconnects and reads a new app
                box.spawn([find_bus_launcher(), "--launch-immediately"])
                fresh = await async_wait_for(
                    lambda: opened(settings), timeout=HANG, what="the new bus"
                )
                try:
                    box.spawn(["zenity", "--entry", "--title=after", "--text=Again"])
                    after = await a_window(fresh, "after")
                finally:
                    await fresh.close()
                seconds, back = await timed(
                    mcp.call_tool("read_screen_ax", {"windowID": after.stable_id})
                )
                said = mcp_text(back)
                report(
                    figures,
                    "AT-SPI bus restarted (MCP server reads a new app)",
                    seconds,
                    said,
                    not back.is_error and 'button "OK"' in said,
                )

                # the X server goes away: every call is a typed error, none hangs
                assert box.info is not None
                os.kill(box.info.pids["xvfb"], signal.SIGKILL)
                await async_wait_for(holds(desk.ports.windows.lost), timeout=10, what="X to go")
                slowest, texts = 0.0, []
                for tool, args in [
                    ("list_windows", {}),
                    ("computer_use_screenshot", {"windowID": before.stable_id}),
                    ("perform", {"action": "type", "text": "x", "windowID": before.stable_id}),
                ]:
                    seconds, result = await timed(tools.call(tool, args, ctx))
                    slowest = max(slowest, seconds)
                    texts.append(result.text)
                    if not (result.is_error and "the desktop went away" in result.text):
                        break
                ok = len(texts) == 3 and all("the desktop went away" in t for t in texts)
                report(figures, "X server gone (three calls)", slowest, texts[-1], ok)
        finally:
            await desk.close()


# -- the audit log: its writer killed, its disk full ---------------------------------------------


def forever(view: View) -> Decision:
    """A model that keeps listing windows (many events, quickly)."""
    if view.mode == "none":
        return Decision("done")
    return Decision("Looking again.", [("list_windows", {})])


def run_env(desktop_settings: Settings, home: Path) -> dict[str, str]:
    return {**desktop_settings.environ, "DESKPILOT_HOME": str(home), "ANTHROPIC_API_KEY": "k"}


def run_argv(url: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "deskpilot",
        "run",
        "List the windows, again and again",
        "--model",
        "anthropic:m",
        "--base-url",
        url,
        "--confirm",
        "none",
        "--events",
        "jsonl",
    ]


async def test_the_audit_writer_killed_mid_run_loses_nothing(
    desktop_settings: Settings, tmp_path: Path, figures: Figures
) -> None:
    home = tmp_path / "home"
    env = run_env(desktop_settings, home)
    shown: list[dict[str, Any]] = []
    with ModelServer("anthropic", forever) as server:
        proc = await asyncio.create_subprocess_exec(
            *run_argv(server.url),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        try:
            with anyio.fail_after(HANG * 2):
                while sum(e["kind"] == "tool.result" for e in shown) < 25:
                    line = await proc.stdout.readline()
                    assert line, "the run ended before it was killed"
                    shown.append(json.loads(line))
        finally:
            proc.kill()  # SIGKILL, mid-run
        rest = await proc.stdout.read()
        await proc.wait()
    # whole lines written before the kill were shown to the person too
    shown += [json.loads(ln) for ln in rest.decode().split("\n")[:-1]]
    start = time.monotonic()
    verify = subprocess.run([DESKPILOT, "log", "verify"], env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    with AuditLog(home / "data" / "audit.sqlite3") as log:
        run_id = shown[0]["run_id"]
        stored = [(e.kind, e.data) for e in log.run_events(run_id, images=False)]
    lost = [e for e in shown if (e["kind"], e["data"]) not in stored]
    said = f"{len(shown)} events shown, {len(lost)} lost; log verify: {verify.stdout.strip()}"
    ok = not lost and verify.returncode == 0
    report(figures, "audit writer SIGKILLed mid-run", seconds, said, ok, deadline=HANG)


FSIZE = (
    "import os, resource, sys; n = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])"
)


async def test_the_audit_disk_full_stops_the_run_and_says_why(
    desktop_settings: Settings, tmp_path: Path, figures: Figures
) -> None:
    home = tmp_path / "home"
    env = run_env(desktop_settings, home)
    first = subprocess.run([DESKPILOT, "tool", "list_windows"], env=env, capture_output=True)
    assert first.returncode == 0, first
    db = home / "data" / "audit.sqlite3"
    limit = db.stat().st_size + 128 * 1024  # room for a few steps, then "the disk is full"

    # the writer alone gets a file size limit: its writes past it fail as on a full disk
    limited = [sys.executable, "-c", FSIZE, str(limit)]
    with ModelServer("anthropic", forever) as server:
        start = time.monotonic()
        argv = [*limited, *run_argv(server.url)]
        done = await anyio.to_thread.run_sync(
            lambda: subprocess.run(argv, env=env, capture_output=True, text=True, timeout=HANG * 4)
        )
        seconds = time.monotonic() - start
        steps = len(server.requests)
    verify = subprocess.run([DESKPILOT, "log", "verify"], env=env, capture_output=True, text=True)
    said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(nothing said)"
    ok = (
        done.returncode != 0
        and "cannot write" in said
        and "audit log" in said
        and "disk may be full" in said
        and verify.returncode == 0
        and steps > 1
    )
    report(
        figures,
        "audit disk full (RLIMIT_FSIZE on the writer)",
        seconds,
        f"{said} (after {steps} model replies; log verify: exit {verify.returncode})",
        ok,
        deadline=HANG,
    )


# -- the model provider fails ------------------------------------------------------------------


def answering(view: View) -> Decision:
    return Decision("Nothing to do.")


async def provider_run(
    desktop: DesktopFacade,
    desktop_settings: Settings,
    server: ModelServer,
    *,
    http: HttpClient | None = None,
    timeout: float = 60.0,
) -> tuple[float, str]:
    settings = desktop_settings.with_overrides(api_keys=KEYS, confirm="none")
    async with open_session(
        settings, surface="run", approver=AllowAll(), desktop=desktop, session=Session()
    ) as ctx:
        model = get_provider(f"{server.provider}:m", settings, base_url=server.url, http=http)
        async with model:
            seconds, result = await timed(
                computer_use_task(
                    "Say hello.", provider=model, ctx=ctx, options=RunOptions(timeout=timeout)
                )
            )
    return seconds, f"[{result.outcome}/{result.reason}] {result.answer}"


FAST_RETRY = RetryPolicy(attempts=4, base_delay=0.2)  # 0.1–0.2, 0.2–0.4, 0.4–0.8 s apart


async def test_provider_faults_end_the_run_with_a_typed_reason(
    desktop: DesktopFacade, desktop_settings: Settings, figures: Figures
) -> None:
    error = {"type": "error", "error": {"type": "api_error", "message": "upstream exploded"}}
    with ModelServer("anthropic", answering) as server:
        server.fail_next = [(500, {}, error)] * 4
        seconds, said = await provider_run(
            desktop, desktop_settings, server, http=HttpClient(retry=FAST_RETRY)
        )
        report(
            figures,
            "provider 5xx on every try",
            seconds,
            said,
            "HTTP 500" in said and "gave up after 4 tries" in said,
        )

        server.fail_next = [(429, {"retry-after": "3600"}, error)]
        seconds, said = await provider_run(desktop, desktop_settings, server)
        report(
            figures,
            "provider 429 asking for an hour",
            seconds,
            said,
            "provider_error" in said and "retry after 3600 s" in said,
        )

        server.hang = True  # takes the request, never answers: the run's own timeout ends it
        seconds, said = await provider_run(desktop, desktop_settings, server, timeout=2.0)
        report(
            figures,
            "provider never answers (run timeout 2 s)",
            seconds,
            said,
            "[needs_attention/timeout]" in said and "did not answer" in said,
        )
    with ModelServer("openai", answering) as server:
        server.stall = True  # headers and half a body, then silence
        http = HttpClient(timeout=1.0, retry=RetryPolicy(attempts=2, base_delay=0.2))
        seconds, said = await provider_run(desktop, desktop_settings, server, http=http)
        report(
            figures,
            "provider stalls mid-reply (1 s read timeout)",
            seconds,
            said,
            "provider_error" in said and "no answer" in said,
        )


# -- an MCP client that dies mid-call ---------------------------------------------------------

CLIENT = """
import sys, anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    home = sys.argv[2]
    env = {"HOME": home, "DESKPILOT_HOME": home, "PATH": "/usr/bin:/bin"}
    server = StdioServerParameters(command=sys.argv[1], args=["mcp"], env=env)
    with open(sys.argv[3], "a") as err:
        async with stdio_client(server, errlog=err) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            print("calling", flush=True)
            await s.call_tool("wait", {"seconds": 60})

anyio.run(main)
"""


def children(pid: int) -> list[int]:
    found = []
    for child in os.listdir("/proc"):
        if child.isdigit():
            try:
                stat = Path(f"/proc/{child}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(child))
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_an_mcp_client_killed_mid_call(tmp_path: Path, figures: Figures) -> None:
    home, log = tmp_path / "home", tmp_path / "server.log"
    home.mkdir()
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, DESKPILOT, str(home), str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert client.stdout is not None
    line = await anyio.to_thread.run_sync(client.stdout.readline)
    assert line.strip() == "calling", line
    servers = children(client.pid)
    assert servers, "no server process"

    async def waiting() -> bool:  # the server has the call in hand
        with AuditLog(home / "data" / "audit.sqlite3") as audit:
            runs = audit.list_runs()
            return bool(runs) and any(
                e.kind == "tool.call" for e in audit.run_events(runs[0].id, images=False)
            )

    await async_wait_for(waiting, timeout=HANG, what="the server to start the call")
    client.kill()
    client.wait()
    client.stdout.close()
    start = time.monotonic()
    stopped = holds(lambda: not any(alive(p) for p in servers))
    await async_wait_for(stopped, timeout=HANG, what="the server to stop")
    seconds = time.monotonic() - start
    with AuditLog(home / "data" / "audit.sqlite3") as audit:
        run = audit.list_runs()[0]
        results = [
            e.data for e in audit.run_events(run.id, images=False) if e.kind == "tool.result"
        ]
        report_ok = audit.verify().ok
    stderr = log.read_text()
    recorded = bool(results) and results[-1]["summary"].startswith("cancelled")
    ok = recorded and report_ok and "Traceback" not in stderr and run.outcome == "disconnected"
    said = f"server stopped; the call was recorded as {results[-1]['summary'] if results else '?'}"
    report(figures, "MCP client killed mid-call", seconds, said if ok else stderr[-500:], ok)
