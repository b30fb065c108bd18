"""One connection to the agent browser for a whole session, and the door the page tools use.

Attaching costs about 0.3 s (Playwright's driver starts, then ``connect_over_cdp``); a chat,
the MCP server or an agent run makes many page-tool calls, so their session keeps one
:class:`BrowserLink` in ``ctx.resources`` and every call reuses its connection. Before each
use the link checks that it still holds a live connection to the browser the profile names
now: a browser that exited, was restarted (a new port) or stopped answering is detected
within :data:`HEALTH_TIMEOUT` and the link attaches again (or says the browser is not running)
— never a hang. A context without resources (one made by hand) attaches per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from deskpilot.config import Settings
from deskpilot.errors import BrowserUnavailable, DeskpilotError
from deskpilot.pages.browser import (
    AgentBrowser,
    attach,
    connect,
    detach,
    endpoint,
    playwright_manager,
    running_endpoint,
)
from deskpilot.tools.context import ToolContext

log = logging.getLogger(__name__)

#: how long the liveness check of a kept connection may take before it is dropped
HEALTH_TIMEOUT = 5.0
KEY = "pages.browser"


class BrowserLink:
    """A kept Playwright connection to the agent browser (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.attaches = 0  # how many times it attached (reconnects included)
        self._pw: Any = None
        self._agent: AgentBrowser | None = None
        self._url: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._health: Any = None  # a browser-level CDP session
        self._lock = asyncio.Lock()

    async def get(self) -> AgentBrowser:
        """The live connection, attaching (again) if needed; BrowserUnavailable if no agent
        browser runs."""
        async with self._lock:
            url = endpoint(self.settings)
            if self._agent is not None:
                if url == self._url and await self._healthy():
                    return self._agent
                await self._drop()
            url = await running_endpoint(self.settings)
            pw = await playwright_manager().start()
            try:
                agent = await attach(pw, self.settings, url)
                self._health = await agent.browser.new_browser_cdp_session()
            except BaseException:
                await pw.stop()
                raise
            self._pw, self._agent, self._url = pw, agent, url
            self._loop = asyncio.get_running_loop()
            self.attaches += 1
            return agent

    async def _healthy(self) -> bool:
        agent = self._agent
        if agent is None or self._loop is not asyncio.get_running_loop():
            return False
        if not agent.browser.is_connected():
            return False
        try:
            await asyncio.wait_for(self._health.send("Browser.getVersion"), HEALTH_TIMEOUT)
        except Exception:  # closed, or not answering: attach afresh
            return False
        return True

    async def drop(self) -> None:
        """Forget the connection (the next :meth:`get` attaches again)."""
        async with self._lock:
            await self._drop()

    async def _drop(self) -> None:
        agent, pw, loop = self._agent, self._pw, self._loop
        self._agent = self._pw = self._health = self._url = self._loop = None
        if pw is None or loop is not asyncio.get_running_loop():
            return  # made on another event loop: nothing can be awaited here
        if agent is not None:
            await detach(agent, HEALTH_TIMEOUT)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(pw.stop(), HEALTH_TIMEOUT)

    async def close(self) -> None:
        await self.drop()


def link_of(ctx: ToolContext) -> BrowserLink | None:
    if ctx.resources is None:
        return None
    return ctx.resources.get(KEY, lambda: BrowserLink(ctx.settings))


@contextlib.asynccontextmanager
async def page_browser(ctx: ToolContext) -> AsyncIterator[AgentBrowser]:
    """The agent browser for one tool call: the session's kept connection, or a fresh one
    when the context keeps none. BrowserUnavailable if it is not running."""
    link = link_of(ctx)
    if link is None:
        async with connect(ctx.settings) as agent:
            yield agent
        return
    agent = await link.get()
    try:
        yield agent
    except DeskpilotError:
        if not agent.browser.is_connected():
            await link.drop()
        raise
    except Exception as exc:
        if agent.browser.is_connected():
            raise
        await link.drop()
        raise BrowserUnavailable(
            "the agent browser went away during the call; open it again with open_urls "
            "and repeat the call"
        ) from exc


@contextlib.asynccontextmanager
async def maybe_page_browser(ctx: ToolContext) -> AsyncIterator[AgentBrowser | None]:
    """Like :func:`page_browser`, but None when no agent browser runs."""
    async with contextlib.AsyncExitStack() as stack:
        try:
            agent: AgentBrowser | None = await stack.enter_async_context(page_browser(ctx))
        except BrowserUnavailable:
            agent = None
        yield agent
