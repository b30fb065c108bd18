"""Risk, approval requests and approvers: who answers what needs a person's yes.

Risk is declared where a tool is defined (``@tool(risk=...)``); the door raises it for one call
when the call's effect is consequential (see :mod:`deskpilot.policy.rules`). The confirm mode
decides what is asked: ``all`` acting tools, ``consequential`` ones (the default), or ``none``.
An :class:`Approver` answers; with nobody to ask, what needs asking is denied: the default
approver of a session (:class:`NoApprover`) declines everything and says so.

An approver answers by returning True (an explicit yes, for this call) or False; when the
request offers it (``ApprovalRequest.offer``), :data:`Scope.TASK` is a yes for this kind of
effect in this window until the task ends. It may decline with the text the model should read
by raising :class:`~deskpilot.errors.ActionDeclined`, and stop or pause the whole run by raising
an :class:`ApprovalInterrupt` (:class:`CancelRequest`, :class:`PauseRequest`), which the door
records and lets through to the run.

An approver says whether a person stands behind its answers (``person = True``: the terminal,
the console, an MCP client's user); one that does not say so is automatic, and never answers
what only a person may (vendor safety checks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from deskpilot.config import ConfirmMode
from deskpilot.errors import ActionDeclined


class Risk(StrEnum):
    READ_ONLY = "read-only"  # only looks
    ACTS = "acts"  # changes the UI (clicks, typing) but nothing beyond it by itself
    CONSEQUENTIAL = "consequential"  # sends, pays, deletes, publishes…
    PERSISTS = "persists"  # writes something lasting (files, settings)

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Risk.READ_ONLY: 0, Risk.ACTS: 1, Risk.CONSEQUENTIAL: 2, Risk.PERSISTS: 2}


class Scope(StrEnum):
    """How far a yes reaches: this call, or this kind of effect in this window for the task."""

    ONCE = "once"
    TASK = "task"


@dataclass(frozen=True)
class ApprovalRequest:
    tool: str
    args: Mapping[str, Any]
    risk: Risk
    reason: str  # why this needs a yes, in one line
    call_id: str = ""
    details: tuple[str, ...] = field(default=())  # extra lines to show (warnings, targets)
    #: only a person may answer (vendor safety checks): automatic approvers decline
    person_only: bool = False
    #: the act in words, as a person sees it ('Click "Delete" on "#1042 Initech" in "Orders"')
    sentence: str = ""
    #: what a yes for the task would allow ("" when only this call can be approved)
    offer: str = ""
    #: the element acted on, in its window's pixels: {"window", "x", "y", "width", "height"}
    target: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Verdict:
    """A tool's own judgement of one call (its ``assess`` hook): the risk, why, and whether
    only a person may approve it (automatic approvers then decline)."""

    risk: Risk
    reason: str = ""
    person_only: bool = False
    details: tuple[str, ...] = ()


class ApprovalInterrupt(Exception):
    """Raised by an approver to end the request without an answer (see subclasses)."""


class CancelRequest(ApprovalInterrupt):
    """Cancel the request (and the rest of its batch): the run stops."""


class PauseRequest(ApprovalInterrupt):
    """Pause the run here (checkpoint it, resume it later)."""


Answer = bool | Scope


class Approver(Protocol):
    """Decides one request. Return True (or a :class:`Scope`) only on an explicit yes."""

    async def approve(self, request: ApprovalRequest) -> Answer: ...


class AllowAll:
    """Approve everything (trusted sandboxes, or a person who typed the command themselves).

    Automatic: it never answers a request that only a person may answer."""

    async def approve(self, request: ApprovalRequest) -> Answer:
        return True


class DenyAll:
    """Approve nothing: what needs a yes is declined."""

    async def approve(self, request: ApprovalRequest) -> Answer:
        return False


class NoApprover:
    """The default: nobody is there to ask, so what needs a yes is declined (and says why)."""

    async def approve(self, request: ApprovalRequest) -> Answer:
        raise ActionDeclined(
            f"Declined: {request.tool} needs a person's yes ({request.reason}) and nobody can be "
            "asked here (this session has no approver). Nothing was done. Do not retry it; "
            "continue without it or report that it needs the user's approval.",
            why="nobody can be asked here",
        )


class CallbackApprover:
    """Ask a callback (sync or async) for each request. ``person``: a person answers through
    it (it may then answer what only a person may)."""

    def __init__(
        self,
        callback: Callable[[ApprovalRequest], Answer | Awaitable[Answer]],
        *,
        person: bool = False,
    ) -> None:
        self.callback = callback
        self.person = person

    async def approve(self, request: ApprovalRequest) -> Answer:
        answer = self.callback(request)
        if not isinstance(answer, bool | Scope):
            answer = await answer
        return answer if isinstance(answer, Scope) else answer is True


def is_person(approver: Approver) -> bool:
    """Whether a person stands behind ``approver``'s answers (it says so: ``person = True``)."""
    return getattr(approver, "person", False) is True


def is_automatic(approver: Approver) -> bool:
    """True for approvers that answer without a person (they never acknowledge safety checks):
    every approver that does not say a person stands behind it."""
    return not is_person(approver)


def approved(answer: object) -> bool:
    """Whether an approver's answer is a yes."""
    return answer is True or isinstance(answer, Scope)


def needs_confirmation(risk: Risk, mode: ConfirmMode) -> bool:
    if mode == "none" or risk is Risk.READ_ONLY:
        return False
    if mode == "all":
        return True
    return risk.rank >= Risk.CONSEQUENTIAL.rank
