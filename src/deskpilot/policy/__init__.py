"""The policy: what a call may do, who may say yes, and the record of every decision.

The door (:meth:`deskpilot.tools.toolset.ToolSet.call`) calls one function,
:func:`~deskpilot.policy.door.decide`, with a :class:`~deskpilot.policy.door.Call` and gets a
:class:`~deskpilot.policy.door.Decision`. Everything it consults lives here:

* :mod:`~deskpilot.policy.reach` — what a call reaches (windows, points, elements, keys, apps);
* :mod:`~deskpilot.policy.blocklist` — blocked apps;
* :mod:`~deskpilot.policy.judging` — the effect of a call, judged in its window's tree
  (:class:`~deskpilot.policy.judging.Scene`: what it may look at), by
  :mod:`~deskpilot.policy.effects` (the judge), :mod:`~deskpilot.policy.places` (where an
  element sits), :mod:`~deskpilot.policy.vocabulary` (the UI's words in 11 languages),
  :mod:`~deskpilot.policy.acts` (kinds of effect) and :mod:`~deskpilot.policy.rules` (the
  person's own words and shortcuts);
* :mod:`~deskpilot.policy.goals`, :mod:`~deskpilot.policy.grants` and
  :mod:`~deskpilot.policy.tasks` — what a person's goal grants, a person's yes for a task,
  whether a grant covers an act, and the grants of a task;
* :mod:`~deskpilot.policy.approval` — risks, requests and the approvers that answer them
  (``person = True`` when a person stands behind the answers; otherwise automatic);
* :mod:`~deskpilot.policy.records` — the policy's events in words.

This package imports the desktop seam, the session's element records, the config and the
errors; never the tools, the agent or a surface.
"""

from __future__ import annotations

from deskpilot.policy.approval import (
    AllowAll,
    Answer,
    ApprovalInterrupt,
    ApprovalRequest,
    Approver,
    CallbackApprover,
    CancelRequest,
    DenyAll,
    NoApprover,
    PauseRequest,
    Risk,
    Scope,
    Verdict,
    approved,
    is_automatic,
    is_person,
    needs_confirmation,
)
from deskpilot.policy.grants import Grant
from deskpilot.policy.rules import (
    DEFAULT_CONSEQUENTIAL_SHORTCUTS,
    DEFAULT_CONSEQUENTIAL_WORDS,
    ConsequentialRules,
)
from deskpilot.policy.tasks import TaskGrants

__all__ = [
    "DEFAULT_CONSEQUENTIAL_SHORTCUTS",
    "DEFAULT_CONSEQUENTIAL_WORDS",
    "AllowAll",
    "Answer",
    "ApprovalInterrupt",
    "ApprovalRequest",
    "Approver",
    "CallbackApprover",
    "CancelRequest",
    "ConsequentialRules",
    "DenyAll",
    "Grant",
    "NoApprover",
    "PauseRequest",
    "Risk",
    "Scope",
    "TaskGrants",
    "Verdict",
    "approved",
    "is_automatic",
    "is_person",
    "needs_confirmation",
]
