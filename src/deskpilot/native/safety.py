"""Safety checks, and what a person is shown about a computer call.

Rules (after the vendors' own: OpenAI's ``pending_safety_checks``, Gemini's
``safety_decision``, and Microsoft Agent Framework's native computer tool):

* A computer call reaches the door as one ``computer_call`` (:mod:`deskpilot.native.executor`);
  when it is asked, the person sees every action (typed text with invisible characters
  escaped) and every pending safety check, before anything runs (:func:`call_verdict`).
* **Safety checks are never acknowledged automatically.** A call with pending checks may be
  answered only by a person (``person_only``): the door declines it for an automatic approver
  (``AllowAll``, or any approver with ``automatic = True``), in every confirm mode; what a
  person approves is acknowledged exactly.
* A result must acknowledge exactly the pending checks (:func:`require_exact_ack`).

An approver may raise :class:`~deskpilot.policy.CancelRequest` to cancel the request (and with
it the rest of its batch) instead of declining it, or :class:`~deskpilot.policy.PauseRequest`
to leave it pending; the door records either and lets it through to the driver.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from deskpilot.native.actions import Action, describe, shown
from deskpilot.native.calls import ComputerFlowError, SafetyCheck
from deskpilot.policy import CancelRequest, PauseRequest, Risk, Verdict, is_automatic

__all__ = [
    "TOOL_NAME",
    "CancelRequest",
    "PauseRequest",
    "SafetyCheckMismatch",
    "call_verdict",
    "is_automatic",
    "require_exact_ack",
]

TOOL_NAME = "computer_call"  # the door's tool for one computer call (approval requests name it)


class SafetyCheckMismatch(ComputerFlowError):
    """A result's acknowledged checks differ from the call's pending checks."""


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


def call_verdict(
    actions: Sequence[Action], window: str | None, checks: Sequence[SafetyCheck]
) -> Verdict:
    """How a computer call is judged and shown: every action and every warning, exactly."""
    lines = [f"{i}. {describe(a)}" for i, a in enumerate(actions, 1)]
    target = f"window {window}" if window else "the screen"
    warnings = [
        f"safety check {c.id}"
        + (f" [{c.code}]" if c.code else "")
        + (f": {shown(c.message)}" if c.message else "")
        for c in checks
    ]
    details = tuple(lines + [f"WARNING: {w}" for w in warnings])
    if warnings:
        reason = (
            f"the model wants to run {len(lines)} action(s) on {target}, with "
            f"{len(warnings)} safety warning(s) to acknowledge"
        )
        return Verdict(Risk.CONSEQUENTIAL, reason, person_only=True, details=details)
    return Verdict(
        Risk.ACTS, f"the model wants to run {len(lines)} action(s) on {target}", details=details
    )
