"""The console tests' one console: a `deskpilot serve` process, its model and a Chromium.

One console serves every test of this folder (session): it is a process on the shared sandbox
with its model (a local server in the compatible wire format, a brain per goal: :class:`Router`)
and one headless Chromium; each test gets its own logged-in tab (a new browser context), and
its own goal keys, so what one test started is never what another reads.

Fixtures:
    model    (ModelServer, Router): the model's server and its brains by goal (session)
    served   (ConsoleProcess, Router): the running console and its model's brains (session)
    browser  Debian's Chromium under Playwright (session)
    page     a new context logged in with the console's token, showing ``/`` live; a page
             dialog fails the test

After each test that uses the console, the sessions it started are stopped (a finished one
keeps its desktop for ten minutes otherwise: the next tests would share the machine with it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page

from deskpilot.config import Settings
from tests.desktop.console_kit import (
    ConsoleProcess,
    Router,
    chromium,
    console_process,
    logged_in,
    model_server,
)
from tests.e2e.wire import ModelServer


@pytest.fixture(scope="session")
def model() -> Iterator[tuple[ModelServer, Router]]:
    with model_server() as (server, router):
        yield server, router


@pytest.fixture(scope="session")
def served(
    desktop_settings: Settings,
    model: tuple[ModelServer, Router],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ConsoleProcess, Router]]:
    server, router = model
    log = tmp_path_factory.mktemp("console") / "serve.log"
    with console_process(desktop_settings.environ, server.url, log) as console:
        yield console, router


@pytest_asyncio.fixture(loop_scope="session", scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as browser:
        yield browser


@pytest_asyncio.fixture(loop_scope="session")
async def page(browser: Browser, served: tuple[ConsoleProcess, Router]) -> AsyncIterator[Page]:
    console, _ = served
    tab = await logged_in(browser, console)
    tab.on("dialog", lambda d: pytest.fail(f"the page opened a dialog: {d.message}"))
    yield tab
    await tab.context.close()


@pytest.fixture(autouse=True)
def stop_what_the_test_started(request: pytest.FixtureRequest) -> Iterator[None]:
    if "served" not in request.fixturenames:
        yield
        return
    console, _ = request.getfixturevalue("served")
    before = {card["id"] for card in console.get("/api/sessions")}
    yield
    for card in console.get("/api/sessions"):
        if card["id"] not in before:
            console.post(f"/api/sessions/{card['id']}/stop")
