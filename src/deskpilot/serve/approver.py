"""Confirmation cards: an :class:`~deskpilot.policy.Approver` answered from the console page.

The policy (:func:`deskpilot.policy.door.decide`) decides what needs a yes and records
``confirm.asked`` and ``confirm.answered``; this approver only waits for a person. When it is
asked it opens a :class:`Pending` card, with the act in words, the element to highlight on the
live preview and, when the policy offers it, the choice of a yes for this kind of effect in
this window for the rest of the task. Every open page shows it in a page-wide banner and the
tab title (``static/asks.js``), whatever session the person is looking at, and says so
(``…/seen``).

How a card ends: the first answer posted wins (a later one is told it came too late); the
session stopping withdraws it; with no page connected at all it is declined at once (nobody
can be asked). A card is never declined unseen: its ``timeout`` counts from the moment a page
first showed its banner; until then it waits while a page is connected, and is declined only
after ``timeout`` seconds with no page at all. Every reason reaches the model and the audit log
(in the call's result).

The grants of each session's task are tracked here too (:meth:`Confirmations.track`): the
page lists them and may revoke one (``grant.revoked`` in the audit log).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from deskpilot.errors import ActionDeclined
from deskpilot.policy import Answer as Yes
from deskpilot.policy import ApprovalRequest, Scope, TaskGrants

#: Seconds a card waits for an answer, from the moment a page showed it, before the action is
#: declined.
CONFIRM_TIMEOUT = 120.0
#: How often an unseen card looks whether a page is still connected.
POLL = 0.25

NOBODY = (
    "Declined: {tool} needs a person's yes ({reason}) and no console page is open to ask. "
    "Nothing was done. Do not retry it; continue without it or report that it needs approval."
)
TIMED_OUT = (
    "Declined: nobody answered the approval request for {tool} in the console within "
    "{seconds:g} seconds. Nothing was done. Do not retry it; report that it needs approval."
)
UNSEEN = (
    "Declined: {tool} needs a person's yes ({reason}) and every console page closed before one "
    "showed the request. Nothing was done. Do not retry it; report that it needs approval."
)
REFUSED = "Declined: the user refused {tool} in the console. Nothing was done. Do not retry it."


@dataclass
class Pending:
    """One open confirmation card."""

    session: str
    call_id: str
    tool: str
    args: dict[str, Any]
    risk: str
    reason: str
    details: tuple[str, ...]
    asked: float = field(default_factory=time.time)
    deadline: float = 0.0  # 0 until a page showed it
    answer: asyncio.Future[Yes] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    by: str = ""
    sentence: str = ""  # the act in words
    offer: str = ""  # what a yes for the task allows ("" when not offered)
    target: dict[str, Any] | None = None  # the element, in its window's pixels
    seen: float | None = None  # when a page first showed it
    timeout: float = CONFIRM_TIMEOUT
    shown: asyncio.Event = field(default_factory=asyncio.Event)

    def card(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "args": self.args,
            "args_json": json.dumps(self.args, ensure_ascii=True, sort_keys=True, indent=1),
            "risk": self.risk,
            "reason": self.reason,
            "details": list(self.details),
            "asked": self.asked,
            "deadline": self.deadline,
            "sentence": self.sentence,
            "offer": self.offer,
            "target": self.target,
            "seen": self.seen,
            "timeout": self.timeout,
        }


class Answer:
    """The result of posting an answer to a card."""

    ANSWERED = "answered"
    UNKNOWN = "unknown"  # no such card (never asked, or already closed)
    LATE = "late"  # someone answered first


class Confirmations:
    """Every open card of the console, by session and call id, and each session's grants."""

    def __init__(self, changed: Callable[[str], None]) -> None:
        self._open: dict[tuple[str, str], Pending] = {}
        self._closed: dict[tuple[str, str], str] = {}  # → how it was answered
        self._changed = changed  # the session's card must be re-sent
        self._grants: dict[str, TaskGrants] = {}

    def of(self, session: str) -> list[Pending]:
        return [p for (s, _), p in self._open.items() if s == session]

    def open(self, pending: Pending) -> None:
        self._open[(pending.session, pending.call_id)] = pending
        self._changed(pending.session)

    def close(self, pending: Pending, by: str) -> None:
        key = (pending.session, pending.call_id)
        if self._open.pop(key, None) is not None:
            self._closed[key] = by
            if len(self._closed) > 5000:
                self._closed.pop(next(iter(self._closed)))
            self._changed(pending.session)

    def seen(self, session: str, call_id: str) -> str:
        """A page showed the card: its time to answer starts now (the first time)."""
        pending = self._open.get((session, call_id))
        if pending is None:
            return Answer.LATE if (session, call_id) in self._closed else Answer.UNKNOWN
        if pending.seen is None:
            pending.seen = time.time()
            pending.deadline = pending.seen + pending.timeout
            pending.shown.set()
            self._changed(session)
        return Answer.ANSWERED

    def answer(
        self,
        session: str,
        call_id: str,
        approved: bool,
        by: str = "console",
        scope: str = Scope.ONCE,
    ) -> str:
        key = (session, call_id)
        pending = self._open.get(key)
        if pending is None:
            return Answer.LATE if key in self._closed else Answer.UNKNOWN
        if pending.answer.done():
            return Answer.LATE
        pending.by = by
        task = approved and scope == Scope.TASK and bool(pending.offer)
        pending.answer.set_result(Scope.TASK if task else approved)
        self.close(pending, by)
        return Answer.ANSWERED

    def cancel_all(self, session: str) -> None:
        for pending in self.of(session):
            if not pending.answer.done():
                pending.answer.cancel()
            self.close(pending, "stopped")

    # -- the grants of each session's task -------------------------------------------------

    def track(self, session: str, grants: TaskGrants) -> None:
        """The grants of ``session``'s task, for the page to list and revoke."""
        self._grants[session] = grants

    def grants_of(self, session: str) -> list[dict[str, Any]]:
        ledger = self._grants.get(session)
        return [g.data() for g in ledger.grants()] if ledger is not None else []

    def revoke(self, session: str, grant_id: str, by: str = "console") -> bool:
        ledger = self._grants.get(session)
        if ledger is None or ledger.revoke(grant_id, by) is None:
            return False
        self._changed(session)
        return True


class ConsoleApprover:
    """Asks the console's pages; see the module docstring.

    ``watching`` says whether a page is there to ask (:attr:`Hub.watching`)."""

    person = True  # a person answers on the console page

    def __init__(
        self,
        session: str,
        confirmations: Confirmations,
        watching: Callable[[], bool],
        *,
        timeout: float = CONFIRM_TIMEOUT,
    ) -> None:
        self.session = session
        self.confirmations = confirmations
        self.watching = watching
        self.timeout = timeout

    async def approve(self, request: ApprovalRequest) -> Yes:
        names = {"tool": request.tool, "reason": request.reason}
        if not self.watching():
            raise ActionDeclined(NOBODY.format(**names), why="no console page is open")
        pending = Pending(
            session=self.session,
            call_id=request.call_id,
            tool=request.tool,
            args=dict(request.args),
            risk=request.risk.value,
            reason=request.reason,
            details=tuple(request.details),
            sentence=request.sentence,
            offer=request.offer,
            target=dict(request.target) if request.target else None,
            timeout=self.timeout,
        )
        self.confirmations.open(pending)
        try:
            if not await self._shown(pending):
                self.confirmations.close(pending, "unseen")
                raise ActionDeclined(UNSEEN.format(**names), why="no console page showed it")
            left = max(0.0, pending.deadline - time.time())
            answer = await asyncio.wait_for(asyncio.shield(pending.answer), left)
        except TimeoutError:
            self.confirmations.close(pending, "timeout")
            raise ActionDeclined(
                TIMED_OUT.format(tool=request.tool, seconds=self.timeout), why="nobody answered"
            ) from None
        except asyncio.CancelledError:
            self.confirmations.close(pending, "stopped")
            raise
        if answer is False:
            raise ActionDeclined(REFUSED.format(tool=request.tool), why="the user refused")
        return answer

    async def _shown(self, pending: Pending) -> bool:
        """Wait until a page showed the card (True), an answer came first (True), or no page
        was connected for ``timeout`` seconds in a row (False)."""
        alone_since: float | None = None
        while not pending.shown.is_set() and not pending.answer.done():
            if self.watching():
                alone_since = None
            else:
                alone_since = alone_since or time.monotonic()
                if time.monotonic() - alone_since >= self.timeout:
                    return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pending.shown.wait(), POLL)
        if pending.deadline == 0.0:  # answered before a page said it showed it
            pending.deadline = time.time() + self.timeout
        return True


# -- the routes of the pages' asks module -------------------------------------------------------


def routes(confirmations: Confirmations) -> list[Route]:
    """``POST …/confirmations/{call}/seen`` (a page showed the card), ``GET …/grants`` (the
    session's grants) and ``POST …/grants/{grant}/revoke``."""

    async def seen(request: Request) -> Response:
        p = request.path_params
        outcome = confirmations.seen(p["id"], p["call_id"])
        if outcome == Answer.UNKNOWN:
            return _error(404, "no such confirmation (never asked, or already closed)")
        return JSONResponse({"seen": outcome == Answer.ANSWERED}, headers=NO_STORE)

    async def grants(request: Request) -> Response:
        return JSONResponse(confirmations.grants_of(request.path_params["id"]), headers=NO_STORE)

    async def revoke(request: Request) -> Response:
        p = request.path_params
        if not confirmations.revoke(p["id"], p["grant"]):
            return _error(404, "no such grant (the task ended, or it was revoked already)")
        return JSONResponse({"revoked": p["grant"]}, headers=NO_STORE)

    return [
        Route("/api/sessions/{id}/confirmations/{call_id}/seen", seen, methods=["POST"]),
        Route("/api/sessions/{id}/grants", grants, methods=["GET"]),
        Route("/api/sessions/{id}/grants/{grant}/revoke", revoke, methods=["POST"]),
    ]


NO_STORE = {"cache-control": "no-store"}


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status, headers=NO_STORE)
