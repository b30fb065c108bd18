"""Desktop tests: ONE sandbox desktop per test run, real apps, a real AT-SPI bus.

Fixtures:
    sandbox          the running Sandbox (session)
    desktop_settings Settings pointing at it, with a private DESKPILOT_HOME (session)
    desktop          a DesktopFacade on it (session, on the session event loop)
    apps             launch apps for one test; they are closed (killed) when the test ends
    slow_approval    the 90 s approval scenario, started with the run's first desktop test and
                     run beside the rest on a desktop of its own (None unless its test is
                     selected)
    safety_trials    the safety suite's goal and injection trials, started with the run's first
                     desktop test and run beside the rest on a desktop of their own (None unless
                     their tests are selected; tests/desktop/safety_beside.py)
    ctx              a fresh ToolContext (new in-memory session) for one test
    call             await call("tool_name", {...}) -> ToolResult through the real ToolSet
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.apps import resolve_app
from deskpilot.desktop.base import Desktop, WindowInfo
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.ports.identity import is_new
from deskpilot.desktop.registry import open_resolved
from deskpilot.events import discard
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import SessionResources, ToolContext
from tests.desktop.safety_beside import SafetyTrials, safety_trials_beside
from tests.desktop.slow_approval import TEST as SLOW_APPROVAL_TEST
from tests.desktop.slow_approval import SlowApproval, running_slow_approval
from tests.desktop.web import PageServer


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(width=1280, height=800) as sb:
        yield sb


@pytest.fixture(scope="session")
def desktop_settings(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    assert sandbox.info is not None
    env = sandbox.app_env()
    env["DESKPILOT_SANDBOX"] = sandbox.info.runtime_dir
    env["DESKPILOT_HOME"] = str(tmp_path_factory.mktemp("deskpilot-home"))
    return load_settings(env=env)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def desktop(desktop_settings: Settings) -> AsyncIterator[DesktopFacade]:
    desk = await open_resolved(desktop_settings)
    yield desk
    await desk.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session", autouse=True)
async def slow_approval(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SlowApproval | None]:
    if not any(item.nodeid.endswith(SLOW_APPROVAL_TEST) for item in request.session.items):
        yield None
        return
    async with running_slow_approval(tmp_path_factory.mktemp("slow-approval")) as job:
        yield job


@pytest.fixture(scope="session", autouse=True)
def safety_trials(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SafetyTrials | None]:
    folder = tmp_path_factory.mktemp("safety-trials")
    with safety_trials_beside(request.session.items, folder) as job:
        yield job


class Apps:
    """Launch apps for one test and make sure they are gone afterwards."""

    def __init__(self, desktop: DesktopFacade, sandbox: Sandbox) -> None:
        self.desktop = desktop
        self.sandbox = sandbox
        self.pids: set[int] = set()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.before: set[int] = set()  # windows open when the test started
        self.running: set[int] = set()  # pids of apps with windows when the test started

    async def start(self) -> None:
        windows = await self.desktop.list_windows()
        self.before = {w.handle for w in windows}
        self.running = {w.pid for w in windows if w.pid}

    async def open(self, name: str, timeout: float = 60.0) -> WindowInfo:
        """Launch by app id or name through the catalogue (as open_app does)."""
        entry = resolve_app(name, await self.desktop.apps())
        window = await self.desktop.launch(entry, timeout=timeout)
        self.pids.add(window.pid)
        return window

    async def spawn(
        self, argv: list[str], *, match: Callable[[WindowInfo], bool], timeout: float = 60.0
    ) -> WindowInfo:
        """Start ``argv`` directly on the sandbox; wait for a matching window with a tree."""
        before = await self.desktop.window_handles()
        proc = self.sandbox.spawn(argv, log=f"{Path(argv[0]).name}.log")
        self.procs.append(proc)

        async def window() -> WindowInfo | None:
            for w in await self.desktop.list_windows():
                if is_new(before, w.handle, w.pid) and w.title and match(w):
                    return w
            return None

        found = await async_wait_for(window, timeout=timeout, what=f"a window of {argv[0]}")
        self.pids.add(found.pid)
        await self.desktop.wait_tree_ready(found, timeout)
        return found

    async def adopt(self, window: WindowInfo) -> WindowInfo:
        self.pids.add(window.pid)
        return window

    async def close_all(self) -> None:
        # also whatever the test opened through tools (open_app, open_urls, a model's calls);
        # an app that ran before the test (a module's shared browser) only loses the windows
        # the test opened: they are closed, the app is not killed
        windows = await self.desktop.list_windows()
        extra = [w for w in windows if w.handle not in self.before and w.pid in self.running]
        for w in extra:
            if w.pid not in self.pids:
                await self.desktop.close_window(w)
        self.pids |= {
            w.pid
            for w in windows
            if w.handle not in self.before and w.pid and w.pid not in self.running
        }
        xids = {w.handle for w in windows if w.pid in self.pids} | {w.handle for w in extra}
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        pids = set(self.pids)

        async def gone() -> bool:
            # by pid and by id: a dead window can linger in the list without its pid, and
            # its id is handed to the next client (a relaunch of the same app)
            listed = await self.desktop.list_windows()
            return not any(w.pid in pids or w.handle in xids for w in listed)

        await async_wait_for(gone, timeout=10, what="test windows to close")


@pytest_asyncio.fixture(loop_scope="session", autouse=True)
async def apps(desktop: DesktopFacade, sandbox: Sandbox) -> AsyncIterator[Apps]:
    """Every desktop test gets one: what the test opened is closed when it ends."""
    launched = Apps(desktop, sandbox)
    await launched.start()
    yield launched
    await launched.close_all()


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    """The loopback server of the web fixture pages (tests/fixtures/web), and what they report."""
    with PageServer() as server:
        yield server


#: the shared agent browser's first page: loaded as soon as it shows its paragraph
STARTING_PAGE = "data:text/html,<title>Agent browser</title><p>ready</p>"


@pytest_asyncio.fixture(loop_scope="session", scope="module")
async def browser(desktop: DesktopFacade) -> AsyncIterator[WindowInfo]:
    """An agent browser shared by one module's tests: each test's open_urls opens a window in
    it (closed when the test ends); the browser is killed after the module. It starts on a page
    with content: an empty one (about:blank) counts as loaded only after staying empty a while
    (launching.EMPTY_PAGE_S), a wait every module paid."""
    window = await desktop.open_urls([STARTING_PAGE])
    yield window
    with contextlib.suppress(ProcessLookupError):
        os.kill(window.pid, signal.SIGKILL)

    async def gone() -> bool:
        return not any(w.pid == window.pid for w in await desktop.list_windows())

    await async_wait_for(gone, timeout=10, what="the shared browser to close")


def context_on(
    desktop: Desktop, desktop_settings: Settings, resources: SessionResources | None = None
) -> ToolContext:
    """A tool context on ``desktop`` with a session of its own, asking nobody; with
    ``resources``, what its calls keep between them (the agent browser's connection), as every
    surface's session keeps it (``runtime.open_session``)."""
    settings = desktop_settings.with_overrides(confirm="none")
    return ToolContext(
        desktop=desktop,
        settings=settings,
        audit=discard,
        session=Session(),
        approver=AllowAll(),
        resources=resources,
    )


@pytest_asyncio.fixture(loop_scope="session")
async def ctx(desktop: DesktopFacade, desktop_settings: Settings) -> AsyncIterator[ToolContext]:
    """A test's tool context: a session of its own that keeps what a surface's session keeps
    between calls (the agent browser's connection: not one Playwright start per page call),
    closed after the test."""
    resources = SessionResources()
    try:
        yield context_on(desktop, desktop_settings, resources)
    finally:
        await resources.close()


Call = Callable[..., Awaitable[ToolResult]]


def caller(ctx: ToolContext) -> Call:
    """Call a computer-use tool by name in ``ctx``, through the tool set's door."""
    toolset = computer_use_tools()

    async def run(name: str, args: dict[str, Any] | str | None = None) -> ToolResult:
        return await toolset.call(name, args or {}, ctx)

    return run


@pytest.fixture
def call(ctx: ToolContext) -> Call:
    return caller(ctx)
