"""Confirmation cards: an :class:`~deskpilot.policy.Approver` answered from the console page.

The door (``ToolSet.call``) decides what needs a yes and records ``confirm.asked`` and
``confirm.answered``; this approver only waits for a person. When it is asked it opens a
:class:`Pending` card (shown on every open page, pinned on top of its session); the first
answer posted wins (a later one is told it came too late); no answer within ``timeout``
seconds, no page connected, or the session stopping all decline, with a reason the model reads
and the audit log keeps (in the call's result).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deskpilot.errors import ActionDeclined
from deskpilot.policy import ApprovalRequest

#: Seconds a card waits for an answer before the action is declined.
CONFIRM_TIMEOUT = 120.0

NOBODY = (
    "Declined: {tool} needs a person's yes ({reason}) and no console page is open to ask. "
    "Nothing was done. Do not retry it; continue without it or report that it needs approval."
)
TIMED_OUT = (
    "Declined: nobody answered the approval request for {tool} in the console within "
    "{seconds:g} seconds. Nothing was done. Do not retry it; report that it needs approval."
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
    deadline: float = 0.0
    answer: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    by: str = ""

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
        }


class Answer:
    """The result of posting an answer to a card."""

    ANSWERED = "answered"
    UNKNOWN = "unknown"  # no such card (never asked, or already closed)
    LATE = "late"  # someone answered first


class Confirmations:
    """Every open card of the console, by session and call id."""

    def __init__(self, changed: Callable[[str], None]) -> None:
        self._open: dict[tuple[str, str], Pending] = {}
        self._closed: dict[tuple[str, str], str] = {}  # → how it was answered
        self._changed = changed  # the session's card must be re-sent

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

    def answer(self, session: str, call_id: str, approved: bool, by: str = "console") -> str:
        key = (session, call_id)
        pending = self._open.get(key)
        if pending is None:
            return Answer.LATE if key in self._closed else Answer.UNKNOWN
        if pending.answer.done():
            return Answer.LATE
        pending.by = by
        pending.answer.set_result(approved)
        self.close(pending, by)
        return Answer.ANSWERED

    def cancel_all(self, session: str) -> None:
        for pending in self.of(session):
            if not pending.answer.done():
                pending.answer.cancel()
            self.close(pending, "stopped")


class ConsoleApprover:
    """Asks the console's pages; see the module docstring.

    ``watching`` says whether a page is there to ask (:attr:`Hub.watching`)."""

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

    async def approve(self, request: ApprovalRequest) -> bool:
        names = {"tool": request.tool, "reason": request.reason}
        if not self.watching():
            raise ActionDeclined(NOBODY.format(**names))
        pending = Pending(
            session=self.session,
            call_id=request.call_id,
            tool=request.tool,
            args=dict(request.args),
            risk=request.risk.value,
            reason=request.reason,
            details=tuple(request.details),
            deadline=time.time() + self.timeout,
        )
        self.confirmations.open(pending)
        try:
            approved = await asyncio.wait_for(asyncio.shield(pending.answer), self.timeout)
        except TimeoutError:
            self.confirmations.close(pending, "timeout")
            raise ActionDeclined(
                TIMED_OUT.format(tool=request.tool, seconds=self.timeout)
            ) from None
        except asyncio.CancelledError:
            self.confirmations.close(pending, "stopped")
            raise
        if not approved:
            raise ActionDeclined(REFUSED.format(tool=request.tool))
        return True
