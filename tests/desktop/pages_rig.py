"""The rig of the page-tool tests: a loopback site, the agent browser started by a separate
``deskpilot`` process (as a user's earlier command would have started it), and the test's own
CDP connection to it — a channel the tools do not use (``getComputedStyle``, page globals)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page, async_playwright

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.events import Event
from deskpilot.pages.browser import endpoint
from deskpilot.pages.store import extension_dir, library_path
from deskpilot.policy import ApprovalRequest, CallbackApprover
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult
from deskpilot.tools.builtin import all_tools
from deskpilot.tools.context import ToolContext

ARTICLE = """<!doctype html><title>Article</title><main><h1>Post</h1>
<section class="comments"><h2>Comments</h2><div class="comment">First!</div>
<div class="comment">Second</div><script>var tracking = "x".repeat(500);</script>
<img src="data:image/png;base64,{png}"></section></main>"""
TARGET = '<!doctype html><title>{t}</title><div class="target">target</div>'
PAGES: dict[str, tuple[str, str]] = {
    "/article": ("", ARTICLE.format(png="A" * 400)),
    "/other": ("", TARGET.format(t="Other")),
    "/csp": ("default-src 'self'; script-src 'self'; style-src 'self'", TARGET.format(t="CSP")),
    "/tt": ("require-trusted-types-for 'script'; trusted-types 'none'", TARGET.format(t="TT")),
    "/spa": ("", TARGET.format(t="SPA")),
    "/inner": ("", TARGET.format(t="Inner")),
    # what a document-start rule did before the page's first script ran
    "/stale": (
        "",
        "<!doctype html><title>Stale</title><script>window.__pageSaw = "
        'JSON.stringify(window.__ran || null);</script><div class="target">t</div>',
    ),
}


class Site:
    """A loopback HTTP server; ``/outer`` embeds ``/inner`` from another site (localhost)."""

    def __init__(self) -> None:
        site = self
        self.requests: list[str] = []  # every path asked for, with its query

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requests.append(self.path)
                path = self.path.split("?")[0]
                if path == "/outer":
                    csp, body = (
                        "",
                        (
                            f'<!doctype html><title>Outer</title><div class="target">outer</div>'
                            f'<iframe src="http://localhost:{site.port}/inner"></iframe>'
                        ),
                    )
                else:
                    csp, body = PAGES.get(path.rstrip("/") or "/", ("", TARGET.format(t="x")))
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                if csp:
                    self.send_header("Content-Security-Policy", csp)
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def deskpilot(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """A separate deskpilot process (it exits when done)."""
    return subprocess.run(
        [sys.executable, "-m", "deskpilot", *args],
        env=dict(settings.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )


@dataclass
class Rig:
    site: Site
    settings: Settings
    desktop: DesktopFacade
    browser: Browser  # the test's own CDP connection (not the tools')
    pid: int
    _attached: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    @property
    def page(self) -> Page:
        return self.browser.contexts[0].pages[0]

    async def attach(self) -> None:
        await self._attached.aclose()
        self._attached = contextlib.AsyncExitStack()
        self.browser = await self._attached.enter_async_context(attach(self.settings))

    async def restart(self, url: str) -> Page:
        """Stop the agent browser; a new deskpilot process opens it on ``url``; attach."""
        await self._attached.aclose()
        await stop_browser(self.desktop, self.pid)
        self.pid = await start_browser(self.settings, url)
        await self.attach()
        return next(p for p in self.browser.contexts[0].pages if p.url == url)

    async def close(self) -> None:
        await self._attached.aclose()
        await stop_browser(self.desktop, self.pid)


@contextlib.asynccontextmanager
async def open_rig(desktop: DesktopFacade, settings: Settings) -> AsyncIterator[Rig]:
    """A loopback site and the agent browser on its /article with an empty library, for one
    test module."""
    reset_library(settings)
    site = Site()
    try:
        pid = await start_browser(settings, site.url("/article"))
        rig = Rig(site, settings, desktop, None, pid)  # type: ignore[arg-type]
        try:
            await rig.attach()
            yield rig
        finally:
            await rig.close()
    finally:
        site.close()
        reset_library(settings)


def browser_pid(settings: Settings) -> int:
    from deskpilot.pages.store import agent_profile

    lock = os.readlink(agent_profile(settings) / "SingletonLock")
    return int(lock.rsplit("-", 1)[1])


def reset_library(settings: Settings) -> None:
    """No rules, no extension, and a fresh agent-browser profile: the profile lives in the
    sandbox's home, shared by every agent browser of the run, so without this a module's
    browser would start with what earlier modules left in it (the extension's storage too)."""
    from deskpilot.pages.store import agent_profile

    for p in (library_path(settings), extension_dir(settings), agent_profile(settings)):
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(library_path(settings)) + suffix).unlink(missing_ok=True)


@contextlib.asynccontextmanager
async def attach(settings: Settings) -> AsyncIterator[Browser]:
    url = endpoint(settings)
    assert url is not None
    async with async_playwright() as pw:
        yield await pw.chromium.connect_over_cdp(url)


async def start_browser(settings: Settings, url: str) -> int:
    done = deskpilot(settings, "tool", "open_urls", json.dumps({"urls": [url]}))
    assert done.returncode == 0, done.stdout + done.stderr
    return browser_pid(settings)


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


async def stop_browser(desktop: DesktopFacade, pid: int) -> None:
    """Kill the browser and wait until it and its windows are gone (X reuses window ids)."""
    kill(pid)
    await async_wait_for(lambda: gone(pid), timeout=20, what="the browser to exit")

    async def no_windows() -> bool:
        return not any(w.pid == pid for w in await desktop.list_windows())

    await async_wait_for(no_windows, timeout=20, what="the browser's windows to close")


class Approvals:
    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        return self.answer


def tool_ctx(rig: Rig, approvals: Approvals, events: list[Event] | None = None) -> ToolContext:
    sink = events.append if events is not None else (lambda e: None)
    return ToolContext(
        desktop=rig.desktop,
        settings=rig.settings,
        session=Session(),
        approver=CallbackApprover(approvals, person=True),
        audit=sink,
    )


async def call(ctx: ToolContext, name: str, args: dict[str, Any] | None = None) -> ToolResult:
    return await all_tools().call(name, args or {}, ctx)


async def style(page: Page, selector: str, prop: str) -> str:
    value = await page.evaluate(
        "([s, p]) => { const e = document.querySelector(s); "
        "return e ? getComputedStyle(e).getPropertyValue(p) : null }",
        [selector, prop],
    )
    return str(value)


async def style_becomes(page: Page, selector: str, prop: str, want: str) -> None:
    async def check() -> bool:
        return await style(page, selector, prop) == want

    await async_wait_for(check, timeout=15, what=f"{selector} {prop} to be {want}")


async def frame_style(page: Page, url_part: str, prop: str) -> str:
    frame = next(f for f in page.frames if url_part in f.url)
    value = await frame.evaluate(
        f"getComputedStyle(document.querySelector('.target')).getPropertyValue('{prop}')"
    )
    return str(value)


async def goto(rig: Rig, path: str) -> Page:
    page = rig.page
    await page.goto(rig.site.url(path))
    return page


async def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
