"""What needs a person's yes, and who answers.

* :mod:`~deskpilot.policy.approval` — :class:`Risk`, :class:`ApprovalRequest`, the
  :class:`Approver` protocol and the stock approvers (:class:`NoApprover`, the default, declines
  and says why; :class:`AllowAll`, :class:`DenyAll`, :class:`CallbackApprover`),
  :func:`needs_confirmation` (risk × confirm mode);
* :mod:`~deskpilot.policy.rules` — :class:`ConsequentialRules`: consequential acts by element
  name and shortcut.

The door (:meth:`deskpilot.tools.toolset.ToolSet.call`) applies them to every call.
"""

from __future__ import annotations

from deskpilot.policy.approval import (
    AllowAll,
    ApprovalInterrupt,
    ApprovalRequest,
    Approver,
    CallbackApprover,
    CancelRequest,
    DenyAll,
    NoApprover,
    PauseRequest,
    Risk,
    Verdict,
    is_automatic,
    needs_confirmation,
)
from deskpilot.policy.rules import (
    DEFAULT_CONSEQUENTIAL_SHORTCUTS,
    DEFAULT_CONSEQUENTIAL_WORDS,
    ConsequentialRules,
)

__all__ = [
    "DEFAULT_CONSEQUENTIAL_SHORTCUTS",
    "DEFAULT_CONSEQUENTIAL_WORDS",
    "AllowAll",
    "ApprovalInterrupt",
    "ApprovalRequest",
    "Approver",
    "CallbackApprover",
    "CancelRequest",
    "ConsequentialRules",
    "DenyAll",
    "NoApprover",
    "PauseRequest",
    "Risk",
    "Verdict",
    "is_automatic",
    "needs_confirmation",
]
