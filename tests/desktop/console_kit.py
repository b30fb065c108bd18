"""What the console tests share: a `deskpilot serve` process, model brains by goal, Chromium.

The console runs as its own process (``python -m deskpilot serve --port 0``) on the shared
sandbox desktop ("this desktop" for its sessions); the model is a local HTTP server speaking
the compatible (OpenAI chat) wire format whose brain is picked by the session's goal; the page
is Debian's Chromium driven by Playwright (``executable_path``, no browser download).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Browser, async_playwright

from deskpilot import _procfs
from deskpilot._wait import wait_for
from tests.e2e.wire import Brain, Decision, ModelServer, View

CHROMIUM = "/usr/bin/chromium"


class Router:
    """One brain per goal: the first registered key found in the goal answers."""

    def __init__(self) -> None:
        self.brains: dict[str, Brain] = {}
        self.views: dict[str, list[View]] = {}
        self.lock = threading.Lock()

    def add(self, key: str, brain: Brain) -> str:
        self.brains[key] = brain
        return key

    def __call__(self, view: View) -> Decision:
        goal = view.user_texts[0] if view.user_texts else ""
        for key, brain in list(self.brains.items()):
            if key in goal:
                with self.lock:
                    self.views.setdefault(key, []).append(view)
                return brain(view)
        return Decision(f"(no test brain for the goal {goal[:60]!r})")


@contextmanager
def model_server() -> Iterator[tuple[ModelServer, Router]]:
    router = Router()
    with ModelServer("compatible", router) as server:
        yield server, router


class ConsoleProcess:
    """A running ``deskpilot serve`` (see the module docstring)."""

    def __init__(self, proc: subprocess.Popen[str], url: str, home: Path, log: Path) -> None:
        self.proc = proc
        self.login_url = url
        m = re.match(r"http://([^/]+)/login\?token=(\S+)$", url)
        assert m, url
        self.origin = f"http://{m.group(1)}"
        self.port = int(m.group(1).rsplit(":", 1)[1])
        self.home = home
        self.log = log
        self.token = (home / "state" / "mcp-token").read_text().strip()
        self.http = httpx.Client(
            base_url=self.origin, headers={"authorization": f"Bearer {self.token}"}, timeout=60
        )

    def get(self, path: str) -> Any:
        r = self.http.get(path)
        assert r.status_code == 200, (path, r.status_code, r.text)
        return r.json()

    def post(self, path: str, body: Mapping[str, Any] | None = None) -> httpx.Response:
        return self.http.post(path, json=dict(body or {}))

    def start(self, goal: str, **fields: Any) -> dict[str, Any]:
        r = self.post("/api/sessions", {"goal": goal, "target": "sandbox", **fields})
        assert r.status_code == 201, r.text
        return dict(r.json())

    def card(self, session_id: str) -> dict[str, Any]:
        return dict(self.get(f"/api/sessions/{session_id}"))

    def wait_card(
        self,
        session_id: str,
        check: Callable[[dict[str, Any]], bool],
        what: str,
        timeout: float = 90,
    ) -> dict[str, Any]:
        def ready() -> dict[str, Any] | None:
            card = self.card(session_id)
            return card if check(card) else None

        return wait_for(ready, timeout=timeout, what=what, interval=0.05)

    def wait_end(self, session_id: str, timeout: float = 120) -> dict[str, Any]:
        return self.wait_card(
            session_id,
            lambda c: c["state"] in ("done", "needs_attention", "stopped"),
            f"session {session_id} to end",
            timeout,
        )

    def run_events(self, run_id: str) -> list[dict[str, Any]]:
        return list(self.get(f"/api/runs/{run_id}")["events"])

    def stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@contextmanager
def console_process(
    env: Mapping[str, str], model_url: str, log: Path, *args: str
) -> Iterator[ConsoleProcess]:
    home = Path(env["DESKPILOT_HOME"])
    argv = [sys.executable, "-m", "deskpilot", "serve", "--port", "0"]
    argv += ["--model", "compatible:test-model", "--base-url", model_url, *args]
    out = open(log, "w")  # noqa: SIM115
    proc = subprocess.Popen(
        argv, env=dict(env), stdout=subprocess.PIPE, stderr=out, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    if not first.startswith("http://"):
        proc.kill()
        raise AssertionError(f"deskpilot serve printed {first!r}; log: {log.read_text()}")
    console = ConsoleProcess(proc, first, home, log)
    try:
        yield console
    finally:
        console.stop()
        out.close()


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """Debian's Chromium under Playwright, headless (no browser download)."""
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser
        await browser.close()


async def logged_in(browser: Any, console: ConsoleProcess, path: str = "/") -> Any:
    """A new browser context logged in with the kept token, showing ``path`` live."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    login = await context.request.post(f"{console.origin}/api/login", data={"token": console.token})
    assert login.ok, await login.text()
    page = await context.new_page()
    await page.goto(f"{console.origin}{path}")
    await page.wait_for_selector("#conn.live")
    return page


def on_display(display: str, marker: bytes) -> set[int]:
    """Live processes on ``display`` whose command line holds ``marker``."""
    return {
        p
        for p in alive(processes_with(f"DISPLAY={display}".encode()))
        if marker in _procfs.read(f"/proc/{p}/cmdline")
    }


def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if not _procfs.is_zombie(p)}


def processes_with(marker: bytes) -> set[int]:
    """PIDs whose environment holds ``marker`` (``DISPLAY=:12``): read from /proc directly."""
    found = set()
    for pid in _procfs.pids():
        if pid == os.getpid():
            continue
        if marker in _procfs.read(f"/proc/{pid}/environ").split(b"\0"):
            found.add(pid)
    return found


def texts_of(router: Router, key: str) -> list[str]:
    """Every tool result the model was sent in sessions of ``key`` (the wire's view)."""
    return [t for v in router.views.get(key, []) for t in v.last_results]


def goal_of(view: View) -> str:
    return view.user_texts[0] if view.user_texts else ""


def after(seconds: float) -> float:
    return time.monotonic() + seconds


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
