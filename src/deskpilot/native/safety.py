"""Safety checks and the person who approves a computer call.

Rules (seed-spec C; protocols.md §1.4, §3.3, §4):

* A computer call surfaces as a user-input request that shows every action (typed text with
  invisible characters escaped) and every pending safety check, before anything runs.
* **Safety checks are never acknowledged automatically.** An automatic approver (``AllowAll``,
  or any approver with ``automatic = True``) can approve plain calls, but a call with pending
  checks is declined unless a person answers; what a person approves is acknowledged exactly.
* A result must acknowledge exactly the pending checks (:func:`require_exact_ack`).

An approver may raise :class:`CancelRequest` to cancel the request (and with it the rest of
its batch) instead of declining it, or :class:`PauseRequest` to leave it pending.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from deskpilot.events import Event, EventSink
from deskpilot.native.actions import action_to_dict, describe, shown
from deskpilot.native.calls import ComputerCall, ComputerFlowError, SafetyCheck
from deskpilot.policy import AllowAll, ApprovalRequest, Approver, Risk

log = logging.getLogger(__name__)

TOOL_NAME = "computer_call"  # the name approval requests and their events carry


class SafetyCheckMismatch(ComputerFlowError):
    """A result's acknowledged checks differ from the call's pending checks."""


class CancelRequest(Exception):
    """Raised by an approver to cancel the request (and the rest of its batch)."""


class PauseRequest(Exception):
    """Raised by an approver to pause the run here (checkpoint it, resume it later)."""


def require_exact_ack(
    call_id: str, pending: Sequence[SafetyCheck], acknowledged: Sequence[SafetyCheck]
) -> None:
    """Raise :class:`SafetyCheckMismatch` unless the acknowledged ids equal the pending ids."""
    want, got = Counter(c.id for c in pending), Counter(c.id for c in acknowledged)
    if want == got:
        return
    missing = sorted((want - got).elements())
    extra = sorted((got - want).elements())
    parts = []
    if missing:
        parts.append(f"not acknowledged: {', '.join(missing)}")
    if extra:
        parts.append(f"acknowledged but not pending (or twice): {', '.join(extra)}")
    pending_ids = ", ".join(c.id for c in pending) or "none"
    raise SafetyCheckMismatch(
        f"The result for computer call {call_id} must explicitly acknowledge exactly its "
        f"pending safety checks [{pending_ids}]; " + "; ".join(parts) + "."
    )


def is_automatic(approver: Approver) -> bool:
    """True for approvers that answer without a person (they never acknowledge checks)."""
    return isinstance(approver, AllowAll) or getattr(approver, "automatic", False) is True


def approval_request(call: ComputerCall) -> ApprovalRequest:
    """The user-input request for a call: every action and every warning, exactly."""
    lines = [f"{i}. {describe(a)}" for i, a in enumerate(call.actions, 1)]
    target = f"window {call.window}" if call.window else "the screen"
    warnings = [
        f"safety check {c.id}" + (f" [{c.code}]" if c.code else "")
        + (f": {shown(c.message)}" if c.message else "")
        for c in call.pending_safety_checks
    ]  # fmt: skip
    if warnings:
        reason = (
            f"the model wants to run {len(lines)} action(s) on {target}, with "
            f"{len(warnings)} safety warning(s) to acknowledge"
        )
    else:
        reason = f"the model wants to run {len(lines)} action(s) on {target}"
    return ApprovalRequest(
        tool=TOOL_NAME,
        args={"call_id": call.call_id, "window": call.window,
              "actions": [action_to_dict(a) for a in call.actions],
              "pending_safety_checks": [c.to_dict() for c in call.pending_safety_checks]},
        risk=Risk.CONSEQUENTIAL if warnings else Risk.ACTS,
        reason=reason,
        call_id=call.call_id,
        details=tuple(lines + [f"WARNING: {w}" for w in warnings]),
    )  # fmt: skip


@dataclass(frozen=True)
class Decision:
    approved: bool
    acknowledged: tuple[SafetyCheck, ...] = ()
    why: str = ""


async def ask_person(
    call: ComputerCall, approver: Approver, emit: EventSink, run_id: str = ""
) -> Decision:
    """Show ``call`` to the approver; the events go to the audit log.

    Raises :class:`CancelRequest` / :class:`PauseRequest` when the approver cancels / pauses.
    """
    request = approval_request(call)
    emit(Event("confirm.asked", {"tool": TOOL_NAME, "args": dict(request.args),
                                 "call_id": call.call_id, "reason": request.reason,
                                 "details": list(request.details)}, run_id=run_id))  # fmt: skip
    by = type(approver).__name__
    why = ""
    if call.pending_safety_checks and is_automatic(approver):
        approved = False
        why = "safety checks need a person's acknowledgement; the approver is automatic"
    else:
        try:
            approved = (await approver.approve(request)) is True
        except (CancelRequest, PauseRequest) as signal:
            what = "cancelled" if isinstance(signal, CancelRequest) else "paused"
            emit(Event("confirm.answered", {"tool": TOOL_NAME, "call_id": call.call_id,
                                            "approved": False, what: True, "by": by},
                       run_id=run_id))  # fmt: skip
            raise
        except Exception:
            log.exception("approver failed")
            approved = False
            why = "the approver failed"
    emit(Event("confirm.answered", {"tool": TOOL_NAME, "call_id": call.call_id,
                                    "approved": approved, "by": by,
                                    "acknowledged": [c.id for c in call.pending_safety_checks]
                                    if approved else []}, run_id=run_id))  # fmt: skip
    if approved:
        return Decision(True, call.pending_safety_checks)
    return Decision(False, (), why or "the user declined")
