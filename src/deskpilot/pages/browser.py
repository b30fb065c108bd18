"""The connection to the running agent browser: Playwright over CDP.

deskpilot starts Chromium with ``--remote-debugging-port=0``; Chromium writes the port it chose
to ``DevToolsActivePort`` in its profile, so any later deskpilot process finds the browser an
earlier one started. :func:`connect` attaches (Playwright's ``connect_over_cdp``, never a
browser download) and detaches afterwards; the browser keeps running. A long-lived process
keeps one connection instead (:mod:`deskpilot.pages.link`).

Code runs in a tab's documents through raw CDP ``Runtime.evaluate`` (scripts the inspector
compiles are not subject to the page's CSP or Trusted Types), in the page's own world or in
the extension's isolated world where the bridge (``bridge.js``) lives.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.errors import BrowserUnavailable, PageError
from deskpilot.pages.cdp import CALL_TIMEOUT, exception_text, first_line, send
from deskpilot.pages.extension import NAME as EXTENSION_NAME
from deskpilot.pages.store import agent_profile, extension_dir
from deskpilot.pages.worker import ExtensionWorker

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.async_api import Browser, CDPSession, Page

NOT_WEB = ("chrome:", "chrome-extension:", "devtools:", "chrome-untrusted:", "edge:")
#: how long the browser's HTTP endpoint may take to say it is there
ANSWER_TIMEOUT = 5.0
NOT_RUNNING = (
    "the agent browser is not running: open the page first with open_urls "
    '(e.g. {"urls": ["https://example.com/"]}), then call this tool again'
)


def endpoint(settings: Settings) -> str | None:
    """``http://127.0.0.1:PORT`` of the running agent browser, if its profile names one."""
    try:
        first = (agent_profile(settings) / "DevToolsActivePort").read_text().split()
    except OSError:
        return None
    if not first or not first[0].isdigit():
        return None
    return f"http://127.0.0.1:{first[0]}"


def extension_id(directory: Path) -> str:
    """The id Chromium gives the unpacked extension loaded from ``directory`` (a hash of its
    absolute path, written with the letters a–p)."""
    digest = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


async def alive(url: str) -> bool:
    return await unavailable(url) is None


async def unavailable(url: str | None) -> str | None:
    """Why no agent browser answers at ``url`` (None: one does)."""
    if url is None:
        return NOT_RUNNING
    try:
        async with httpx.AsyncClient(timeout=ANSWER_TIMEOUT, trust_env=False) as client:
            if (await client.get(url + "/json/version")).status_code == 200:
                return None
    except httpx.TimeoutException:
        return (
            f"the agent browser at {url} does not answer (busy or hung): try again, or close "
            "it and open the page again with open_urls"
        )
    except httpx.HTTPError:
        pass
    return NOT_RUNNING  # its profile names a port nobody listens on: it exited


@dataclass
class Tab:
    """One tab of the agent browser, with a CDP session on its page."""

    page: Page
    session: CDPSession
    contexts: dict[int, dict[str, Any]] = field(default_factory=dict)
    main_frame: str = ""
    tab_id: int | None = None

    @property
    def url(self) -> str:
        return self.page.url

    def _context(self, isolated: bool, frame: str | None = None) -> int | None:
        frame = frame or self.main_frame
        for cid, c in self.contexts.items():
            aux = c.get("auxData", {})
            if aux.get("frameId") != frame:
                continue
            if isolated and aux.get("type") == "isolated" and c.get("name") == EXTENSION_NAME:
                return cid
            if not isolated and aux.get("isDefault"):
                return cid
        return None

    async def evaluate(
        self,
        expression: str,
        *,
        isolated: bool = False,
        frame: str | None = None,
        by_value: bool = True,
        await_promise: bool = False,
    ) -> dict[str, Any]:
        """Raw ``Runtime.evaluate`` in the tab's page world (or the bridge's world)."""
        cid = self._context(isolated, frame)
        if isolated and cid is None:
            with contextlib.suppress(WaitTimeout):
                cid = await async_wait_for(
                    self._bridge_ready, timeout=5.0, what="deskpilot's extension in the tab"
                )
        if isolated and cid is None:
            raise PageError(
                f"deskpilot's page extension is not running in this tab ({self.url}): it loads "
                "when deskpilot starts the agent browser; close the browser and open the page "
                "again with open_urls"
            )
        params: dict[str, Any] = {
            "expression": expression,
            "returnByValue": by_value,
            "awaitPromise": await_promise,
            "allowUnsafeEvalBlockedByCSP": True,
        }
        if cid is not None:
            params["contextId"] = cid
        try:
            result: dict[str, Any] = await send(self.session, "Runtime.evaluate", params)
        except PageError:
            raise
        except Exception as exc:  # the document went away (navigation), the tab closed
            raise PageError(f"the page could not run the code ({first_line(exc)})") from exc
        return result

    async def _bridge_ready(self) -> int | None:
        return self._context(True)

    async def page_world(self) -> int | None:
        return self._context(False)

    async def value(self, expression: str, **kw: Any) -> Any:
        """Evaluate and return the JSON value; a thrown error becomes a PageError."""
        result = await self.evaluate(expression, **kw)
        if "exceptionDetails" in result:
            raise PageError(exception_text(result["exceptionDetails"]))
        return result.get("result", {}).get("value")

    async def bridge(self, msg: dict[str, Any]) -> dict[str, Any]:
        """A message to the extension's service worker, sent from this tab's bridge."""
        expr = f"__dpBridge.call({json.dumps(msg)}).then(r => JSON.stringify(r))"
        raw = await self.value(expr, isolated=True, await_promise=True)
        reply: dict[str, Any] = json.loads(raw) if isinstance(raw, str) else {}
        if "error" in reply:
            raise PageError(f"deskpilot's extension refused {msg.get('op')}: {reply['error']}")
        return reply

    async def documents(self) -> list[tuple[CDPSession, int | None, str]]:
        """Every document of the tab (frames too, cross-site ones on their own session), as
        (session, context id, url) for its page world."""
        out: list[tuple[CDPSession, int | None, str]] = [(self.session, None, self.url)]
        for frame in self.page.frames[1:]:
            try:
                session = await self.page.context.new_cdp_session(frame)
            except Exception:  # a same-process frame: its world is on the page's session
                aux = {
                    c.get("auxData", {}).get("frameId"): cid
                    for cid, c in self.contexts.items()
                    if c.get("auxData", {}).get("isDefault")
                }
                fid = await _frame_id(self, frame.url)
                if fid in aux:
                    out.append((self.session, aux[fid], frame.url))
                continue
            out.append((session, None, frame.url))
        return out


async def _frame_id(tab: Tab, url: str) -> str | None:
    tree = await send(tab.session, "Page.getFrameTree")
    stack = [tree["frameTree"]]
    while stack:
        node = stack.pop()
        if node["frame"].get("url") == url and node["frame"]["id"] != tab.main_frame:
            return str(node["frame"]["id"])
        stack.extend(node.get("childFrames", []))
    return None


class AgentBrowser:
    """An attached agent browser (see :func:`connect`); ``extension`` is the id of deskpilot's
    page-rules extension in it."""

    def __init__(self, browser: Browser, extension: str) -> None:
        self.browser = browser
        self.extension = extension
        self._tabs: dict[Page, Tab] = {}
        self._worker: ExtensionWorker | None = None

    @property
    def pages(self) -> list[Page]:
        return [p for ctx in self.browser.contexts for p in ctx.pages]

    def web_pages(self) -> list[Page]:
        return [p for p in self.pages if not p.url.startswith(NOT_WEB)]

    async def tab(self, page: Page) -> Tab:
        for gone in [p for p in self._tabs if p.is_closed()]:
            del self._tabs[gone]
        if page in self._tabs:
            return self._tabs[page]
        session = await page.context.new_cdp_session(page)
        tab = Tab(page=page, session=session)

        def created(event: dict[str, Any]) -> None:
            ctx = event["context"]
            tab.contexts[int(ctx["id"])] = ctx

        def destroyed(event: dict[str, Any]) -> None:
            tab.contexts.pop(int(event["executionContextId"]), None)

        def cleared(_event: dict[str, Any]) -> None:
            tab.contexts.clear()

        session.on("Runtime.executionContextCreated", created)
        session.on("Runtime.executionContextDestroyed", destroyed)
        session.on("Runtime.executionContextsCleared", cleared)
        tree = await send(session, "Page.getFrameTree")
        tab.main_frame = str(tree["frameTree"]["frame"]["id"])
        await send(session, "Runtime.enable")
        with contextlib.suppress(WaitTimeout):
            await async_wait_for(
                tab.page_world, timeout=2.0, what="the tab's page context", interval=0.02
            )
        self._tabs[page] = tab
        return tab

    async def tab_ids(self) -> dict[int, Page]:
        """Chrome's tab id → page, for web pages that have the bridge."""
        found: dict[int, Page] = {}
        for page in self.web_pages():
            with contextlib.suppress(PageError):
                t = await self.tab(page)
                if t.tab_id is None:
                    t.tab_id = int((await t.bridge({"op": "whoami"}))["tab"])
                found[t.tab_id] = page
        return found

    async def current(self, tab_id: int | None = None) -> Tab:
        """The tab named by ``tab_id``, or the one the user sees (the focused window's
        visible tab); a PageError if it is not a web page."""
        if tab_id is not None:
            ids = await self.tab_ids()
            if tab_id not in ids:
                known = ", ".join(f"{i} ({p.url[:60]})" for i, p in ids.items()) or "none"
                raise PageError(f"no tab {tab_id} in the agent browser; open tabs: {known}")
            return await self.tab(ids[tab_id])
        pages = self.pages
        if not pages:
            raise BrowserUnavailable(NOT_RUNNING)
        best: Page | None = None
        best_rank = -1
        for page in pages:
            rank = 0
            with contextlib.suppress(Exception):
                state = await asyncio.wait_for(
                    page.evaluate("[document.visibilityState, document.hasFocus()]"), 3.0
                )
                rank = (2 if state[0] == "visible" else 0) + (1 if state[1] else 0)
            if rank >= best_rank:
                best, best_rank = page, rank
        assert best is not None
        if best.url.startswith(NOT_WEB) or best.url in ("", "about:blank"):
            raise PageError(
                f"the agent browser's current tab shows {best.url or 'nothing'}, not a web "
                "page: open one with open_urls first"
            )
        return await self.tab(best)

    async def worker_call(self, expression: str) -> Any:
        """Evaluate ``expression`` (a call of the worker's own functions, awaited) in the
        extension's service worker, started if it sleeps; None if the browser runs without
        deskpilot's extension. Reached over CDP: no web tab needs to be open."""
        if self._worker is None:
            self._worker = ExtensionWorker(self.browser, self.extension, lambda: self.pages)
        return await self._worker.call(expression)


def playwright_manager() -> Any:
    try:
        from playwright.async_api import async_playwright
    except ImportError as exc:  # pragma: no cover - a dependency of deskpilot
        raise BrowserUnavailable(
            "the page tools need Playwright for Python: pip install playwright"
        ) from exc
    return async_playwright()


async def attach(pw: Any, settings: Settings, url: str) -> AgentBrowser:
    """Attach Playwright ``pw`` to the browser at ``url``; BrowserUnavailable if it cannot."""
    from playwright.async_api import Error as PlaywrightError

    try:
        browser = await pw.chromium.connect_over_cdp(url, timeout=15_000)
    except PlaywrightError as exc:
        raise BrowserUnavailable(
            f"cannot attach to the agent browser at {url} ({first_line(exc)})"
        ) from exc
    return AgentBrowser(browser, extension_id(extension_dir(settings)))


async def detach(agent: AgentBrowser, timeout: float = CALL_TIMEOUT) -> None:
    from playwright.async_api import Error as PlaywrightError

    with contextlib.suppress(PlaywrightError, TimeoutError):
        # over CDP this detaches; the browser keeps running
        await asyncio.wait_for(agent.browser.close(), timeout)


async def running_endpoint(settings: Settings) -> str:
    """The running agent browser's endpoint; BrowserUnavailable if none answers."""
    url = endpoint(settings)
    if (why := await unavailable(url)) is not None:
        raise BrowserUnavailable(why)
    assert url is not None
    return url


@contextlib.asynccontextmanager
async def connect(settings: Settings) -> AsyncIterator[AgentBrowser]:
    """Attach to the running agent browser for one piece of work; BrowserUnavailable if there
    is none."""
    url = await running_endpoint(settings)
    async with playwright_manager() as pw:
        agent = await attach(pw, settings, url)
        try:
            yield agent
        finally:
            await detach(agent)


@contextlib.asynccontextmanager
async def maybe_connect(settings: Settings) -> AsyncIterator[AgentBrowser | None]:
    """Like :func:`connect`, but None when no agent browser runs."""
    url = endpoint(settings)
    if url is None or not await alive(url):
        yield None
        return
    async with connect(settings) as agent:
        yield agent
