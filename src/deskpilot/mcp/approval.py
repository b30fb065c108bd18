"""Confirmation over MCP: ask the user through the client (elicitation), else the policy refuses.

The ToolSet decides *what* needs a yes (declared risk, raised per call by ``assess``, against
``settings.confirm``); the approver made here decides *how* it is asked, for one ``tools/call``:

* the client declared the elicitation capability (form mode) → an ``elicitation/create``
  request on that call's own channel shows the tool, why it needs a yes and the exact
  arguments. Only ``accept`` with ``approve: true`` approves; ``decline``, ``cancel``, a
  client error or no answer within :data:`ELICIT_TIMEOUT` seconds decline, and nothing runs.
* the client cannot elicit → declined without asking, and the result says how to allow such
  actions (:data:`CANNOT_ASK`): a client with elicitation, or ``--confirm none``.
"""

from __future__ import annotations

import json
import logging

import anyio
import mcp.types as types
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError, NoBackChannelError

from deskpilot.policy import ApprovalRequest

log = logging.getLogger(__name__)

#: Seconds the user has to answer an elicitation before the action is declined.
ELICIT_TIMEOUT = 600.0

CANNOT_ASK = (
    "deskpilot refused this without running it: the action needs the user's approval "
    "(confirm policy: {mode}) and this MCP client cannot ask the user (it does not support "
    "elicitation). To allow such actions, use an MCP client that supports elicitation, or "
    "restart the server with `deskpilot mcp --confirm none` (only on a desktop you trust the "
    "model with)."
)

NO_ANSWER = "The user did not answer the approval request within {seconds:g} seconds."

#: What the client is asked to fill in: one required yes/no, default no.
APPROVAL_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Allow this action",
            "description": "Yes runs it now; no (or declining) does nothing.",
            "default": False,
        }
    },
    "required": ["approve"],
}


def approval_message(request: ApprovalRequest) -> str:
    """The question shown to the user: tool, risk, reason and the exact arguments (ASCII JSON,
    so invisible or look-alike characters show as escapes)."""
    args = json.dumps(dict(request.args), ensure_ascii=True, sort_keys=True, default=str)
    lines = [
        f"deskpilot wants to run {request.tool} ({request.risk.value}): {request.reason}.",
        f"Arguments: {args}",
        *request.details,
        "Allow it? Declining does nothing.",
    ]
    return "\n".join(lines)


def can_elicit_form(session: ServerSession) -> bool:
    """Whether the client declared form-mode elicitation and this call can send it a request.

    An empty ``elicitation`` capability means form mode (spec 2025-11-25)."""
    caps = session.client_capabilities
    if caps is None or caps.elicitation is None or not session.can_send_request:
        return False
    elicitation = caps.elicitation
    return elicitation.form is not None or elicitation.url is None


class ElicitingApprover:
    """The approver for one ``tools/call``: asks through the calling client when it can.

    After the call, :attr:`note` holds text to append to the result when the decline needs
    explaining (the client cannot ask, or nobody answered)."""

    def __init__(
        self,
        session: ServerSession,
        request_id: types.RequestId | None,
        *,
        mode: str,
        timeout: float = ELICIT_TIMEOUT,
    ) -> None:
        self.session = session
        self.request_id = request_id
        self.mode = mode
        self.timeout = timeout
        self.asked = 0
        self.note = ""

    @property
    def can_ask(self) -> bool:
        return can_elicit_form(self.session)

    async def approve(self, request: ApprovalRequest) -> bool:
        if not self.can_ask:
            self.note = CANNOT_ASK.format(mode=self.mode)
            return False
        self.asked += 1
        try:
            with anyio.fail_after(self.timeout):
                answer = await self.session.elicit_form(
                    approval_message(request), APPROVAL_SCHEMA, related_request_id=self.request_id
                )
        except TimeoutError:
            self.note = NO_ANSWER.format(seconds=self.timeout)
            return False
        except NoBackChannelError:
            self.note = CANNOT_ASK.format(mode=self.mode)
            return False
        except MCPError as exc:  # the client refused the request (e.g. no elicitation handler)
            log.info("elicitation for %s failed: %s", request.tool, exc)
            self.note = CANNOT_ASK.format(mode=self.mode)
            return False
        content = answer.content or {}
        return answer.action == "accept" and content.get("approve") is True
