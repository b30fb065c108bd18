"""Talking to the page-rules extension's service worker over CDP, with no web tab needed.

The worker registers the rule set for documents that load from now on (``sync()``) and holds
the errors pages reported (``drain()``). Chromium stops an idle worker after about 30 s; it is
then started again with ``ServiceWorker.startWorker`` from any page's session (a ``chrome://``
tab will do). Playwright does not list a worker that starts after it attached (measured on
Chromium 156 with Playwright 1.5x), so the worker is reached through the browser session's
``Target.attachToTarget`` / ``Target.sendMessageToTarget`` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.errors import PageError
from deskpilot.pages.cdp import CALL_TIMEOUT, exception_text, send

if TYPE_CHECKING:
    from playwright.async_api import Browser, CDPSession, Page


class _Gone(Exception):
    """The worker stopped between finding it and talking to it."""


class ExtensionWorker:
    """The worker of extension ``extension`` in ``browser``; ``pages`` lists the browser's
    pages (any one of them can wake the worker)."""

    def __init__(self, browser: Browser, extension: str, pages: Callable[[], list[Page]]) -> None:
        self.browser = browser
        self.extension = extension
        self.pages = pages
        self.url = f"chrome-extension://{extension}/sw.js"
        self._session: CDPSession | None = None
        self._target: str | None = None
        self._sid: str | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    async def call(self, expression: str) -> Any:
        """The value of ``expression`` (awaited) in the worker; None if it cannot be found."""
        for _attempt in range(2):
            try:
                if not await self._attach():
                    return None
                return await self._evaluate(expression)
            except _Gone:
                self._sid = self._target = None
        raise PageError("deskpilot's page extension stopped twice while being asked: try again")

    async def _browser(self) -> CDPSession:
        if self._session is None:
            session = await self.browser.new_browser_cdp_session()
            session.on("Target.receivedMessageFromTarget", self._received)
            session.on("Target.detachedFromTarget", self._detached)
            self._session = session
        return self._session

    async def _find(self) -> str | None:
        targets = (await send(await self._browser(), "Target.getTargets"))["targetInfos"]
        return next(
            (
                str(t["targetId"])
                for t in targets
                if t.get("type") == "service_worker" and t.get("url") == self.url
            ),
            None,
        )

    async def _attach(self) -> bool:
        target = await self._find()
        if target is None:
            if not await self._wake():
                return False
            try:
                target = await async_wait_for(
                    self._find, timeout=CALL_TIMEOUT, what="the extension's worker to start"
                )
            except WaitTimeout:
                return False
        if target != self._target or self._sid is None:
            reply = await send(
                await self._browser(),
                "Target.attachToTarget",
                {"targetId": target, "flatten": False},
            )
            self._sid, self._target = str(reply["sessionId"]), target
            return await self._ready()
        return True

    async def _ready(self) -> bool:
        """Whether the worker just attached to has run its script: a worker that was just
        started is listed (and answers) before its script's functions are defined (a call
        then failed with "drain is not defined"; the script runs at once, so one of its
        functions defined means all are)."""

        async def ran() -> bool:
            return bool(await self._evaluate('typeof drain === "function"'))

        try:
            await async_wait_for(ran, timeout=CALL_TIMEOUT, what="the extension's worker script")
        except WaitTimeout:
            return False
        return True

    async def _wake(self) -> bool:
        pages = self.pages()
        if not pages:
            return False
        session = await pages[0].context.new_cdp_session(pages[0])
        try:
            await send(session, "ServiceWorker.enable")
            scope = f"chrome-extension://{self.extension}/"
            await send(session, "ServiceWorker.startWorker", {"scopeURL": scope})
        except Exception:  # no such registration: the browser runs without the extension
            return False
        finally:
            with contextlib.suppress(Exception):
                await session.detach()
        return True

    async def _evaluate(self, expression: str) -> Any:
        key = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        params = {"expression": expression, "awaitPromise": True, "returnByValue": True}
        message = json.dumps({"id": key, "method": "Runtime.evaluate", "params": params})
        try:
            await send(
                await self._browser(),
                "Target.sendMessageToTarget",
                {"sessionId": self._sid, "message": message},
            )
            reply = await asyncio.wait_for(future, CALL_TIMEOUT)
        except TimeoutError as exc:
            raise PageError(f"deskpilot's page extension did not answer {expression}") from exc
        except PageError:
            raise
        except Exception as exc:  # the session went with the worker
            raise _Gone() from exc
        finally:
            self._pending.pop(key, None)
        if "error" in reply:
            raise _Gone()
        result = reply.get("result", {})
        if "exceptionDetails" in result:
            detail = exception_text(result["exceptionDetails"])
            raise PageError(f"deskpilot's page extension failed {expression}: {detail}")
        return result.get("result", {}).get("value")

    def _received(self, event: dict[str, Any]) -> None:
        if event.get("sessionId") != self._sid:
            return
        with contextlib.suppress(ValueError):
            message = json.loads(event.get("message", ""))
            future = self._pending.get(message.get("id"))
            if future is not None and not future.done():
                future.set_result(message)

    def _detached(self, event: dict[str, Any]) -> None:
        if event.get("sessionId") != self._sid:
            return
        self._sid = self._target = None
        for future in self._pending.values():
            if not future.done():
                future.set_exception(_Gone())
