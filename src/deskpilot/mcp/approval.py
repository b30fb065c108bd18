"""Confirmation over MCP: ask the user through the client (elicitation), else the policy refuses.

The ToolSet decides *what* needs a yes (declared risk, raised per call by ``assess``, against
``settings.confirm``); the approver made here decides *how* it is asked, for one ``tools/call``:

* the client declared the elicitation capability (form mode) → an ``elicitation/create``
  request on that call's own channel shows the act in words, the tool, why it needs a yes and
  the exact arguments. Only ``accept`` with ``approve: true`` approves; with ``for_task: true``
  as well (offered when the act is a judged effect in a window) the yes holds for this kind of
  effect in this window until the task ends. ``decline``, ``cancel``, a client error or no
  answer within :data:`ELICIT_TIMEOUT` seconds decline, and nothing runs. The client's user
  answers: these approvers say a person stands behind them.
* the client cannot elicit → declined without asking, and the result says how to allow such
  actions (:data:`CANNOT_ASK`): a client with elicitation, or ``--confirm none``; unless the
  server has a ``fallback`` approver (``deskpilot serve``: a card in the web console), which is
  asked instead.

In the stateless 2026-07-28 era a server sends no requests, so :class:`RoundTripApprover`
asks by answering the ``tools/call`` with ``input_required`` (the same form, under
:data:`INPUT_KEY`) and nothing runs; the client asks the user and sends the call again with
the answer. The answer counts only for the question it answered: the round's state (sealed by
the SDK's RequestStateBoundary, bound to the tool and its arguments, expiring after
:data:`ELICIT_TIMEOUT`) names a one-time ticket and a digest of the question, so a replayed
answer, or an answer to a question the UI has since changed (another button under the same
ID), is not a yes: the user is asked again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time

import anyio
import mcp.types as types
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError, NoBackChannelError

from deskpilot.policy import Answer, ApprovalRequest, Approver, Scope

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

NESTED = (
    "This MCP client speaks the 2026-07-28 protocol, where deskpilot can ask the user only "
    "before a call runs, not in the middle of {tool}: the step that needed approval was "
    "declined. Do that step with its own tool call (the user is asked then), or restart the "
    "server with `deskpilot mcp --confirm none`."
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
    """The question shown to the user: the act in words, tool, risk, reason and the exact
    arguments (ASCII JSON, so invisible or look-alike characters show as escapes)."""
    args = json.dumps(dict(request.args), ensure_ascii=True, sort_keys=True, default=str)
    lines = [f"deskpilot wants to: {request.sentence}"] if request.sentence else []
    lines += [
        f"deskpilot wants to run {request.tool} ({request.risk.value}): {request.reason}.",
        f"Arguments: {args}",
        *request.details,
        "Allow it? Declining does nothing.",
    ]
    if request.offer:
        lines.append(f"Also for this task allows: {request.offer}.")
    return "\n".join(lines)


def approval_schema(request: ApprovalRequest) -> types.ElicitRequestedSchema:
    """:data:`APPROVAL_SCHEMA`, with the choice of a yes for the task when it is offered."""
    if not request.offer:
        return APPROVAL_SCHEMA
    schema = json.loads(json.dumps(APPROVAL_SCHEMA))
    schema["properties"]["for_task"] = {
        "type": "boolean",
        "title": "Also allow this for the rest of the task",
        "description": f"Yes: {request.offer}. No: only this once.",
        "default": False,
    }
    return schema  # type: ignore[no-any-return]


def answer_of(action: str, content: dict[str, object] | None) -> Answer:
    """A client's answer: yes (this once), yes for the task, or no."""
    content = content or {}
    if action != "accept" or content.get("approve") is not True:
        return False
    return Scope.TASK if content.get("for_task") is True else True


def can_elicit_form(session: ServerSession) -> bool:
    """Whether the client declared form-mode elicitation and this call can send it a request.

    An empty ``elicitation`` capability means form mode (spec 2025-11-25)."""
    return session.can_send_request and declares_form_elicitation(session.client_capabilities)


def declares_form_elicitation(caps: types.ClientCapabilities | None) -> bool:
    """Whether the capabilities include form-mode elicitation (an empty object means form)."""
    if caps is None or caps.elicitation is None:
        return False
    elicitation = caps.elicitation
    return elicitation.form is not None or elicitation.url is None


class ElicitingApprover:
    """The approver for one ``tools/call``: asks through the calling client when it can.

    After the call, :attr:`note` holds text to append to the result when the decline needs
    explaining (the client cannot ask, or nobody answered)."""

    person = True  # the client's user answers

    def __init__(
        self,
        session: ServerSession,
        request_id: types.RequestId | None,
        *,
        mode: str,
        timeout: float = ELICIT_TIMEOUT,
        fallback: Approver | None = None,
    ) -> None:
        self.session = session
        self.fallback = fallback
        self.request_id = request_id
        self.mode = mode
        self.timeout = timeout
        self.asked = 0
        self.note = ""
        self.waiting = False  # an elicitation is out: the call waits for the user

    @property
    def can_ask(self) -> bool:
        return can_elicit_form(self.session)

    async def approve(self, request: ApprovalRequest) -> Answer:
        if not self.can_ask:
            return await self._cannot_ask(request)
        self.asked += 1
        self.waiting = True
        try:
            with anyio.fail_after(self.timeout):
                answer = await self.session.elicit_form(
                    approval_message(request),
                    approval_schema(request),
                    related_request_id=self.request_id,
                )
        except TimeoutError:
            self.note = NO_ANSWER.format(seconds=self.timeout)
            return False
        except NoBackChannelError:
            return await self._cannot_ask(request)
        except MCPError as exc:  # the client refused the request (e.g. no elicitation handler)
            log.info("elicitation for %s failed: %s", request.tool, exc)
            return await self._cannot_ask(request)
        finally:
            self.waiting = False
        return answer_of(answer.action, dict(answer.content or {}))

    async def _cannot_ask(self, request: ApprovalRequest) -> Answer:
        if self.fallback is not None:
            self.waiting = True
            try:
                return await self.fallback.approve(request)
            finally:
                self.waiting = False
        self.note = CANNOT_ASK.format(mode=self.mode)
        return False


#: The key of deskpilot's question in an ``input_required`` result (2026-07-28).
INPUT_KEY = "deskpilot.approval"


class Tickets:
    """One-time tickets for questions asked by ``input_required``, each valid for ``ttl`` s."""

    def __init__(self, ttl: float = ELICIT_TIMEOUT) -> None:
        self.ttl = ttl
        self._issued: dict[str, float] = {}

    def issue(self) -> str:
        now = time.monotonic()
        self._issued = {k: t for k, t in self._issued.items() if t > now}
        ticket = secrets.token_urlsafe(16)
        self._issued[ticket] = now + self.ttl
        return ticket

    def redeem(self, ticket: str) -> bool:
        """True once for a ticket issued within ``ttl`` seconds."""
        deadline = self._issued.pop(ticket, None)
        return deadline is not None and deadline > time.monotonic()


def question_digest(message: str) -> str:
    return hashlib.sha256(message.encode()).hexdigest()[:32]


class RoundTripApprover:
    """The approver for one 2026-07-28 ``tools/call``: asks through ``input_required``.

    After the call, :attr:`pending` holds the ``input_required`` result to send instead of the
    declined result when the user still has to be asked; :attr:`note` as in
    :class:`ElicitingApprover`."""

    def __init__(
        self,
        can_ask: bool,
        params: types.CallToolRequestParams,
        tickets: Tickets,
        *,
        mode: str,
        fallback: Approver | None = None,
    ) -> None:
        self.can_ask = can_ask
        self.mode = mode
        self.fallback = fallback
        self.tickets = tickets
        self.tool = params.name
        responses = params.input_responses or {}
        answer = responses.get(INPUT_KEY)
        self.answer = answer if isinstance(answer, types.ElicitResult) else None
        self.state = params.request_state
        self.pending: types.InputRequiredResult | None = None
        self.asked = 0
        self.note = ""

    def _answered(self, digest: str) -> bool:
        """Whether the client's answer belongs to this very question (and is not replayed)."""
        if self.answer is None or not self.state:
            return False
        try:
            state = json.loads(self.state)
        except ValueError:
            return False
        if not isinstance(state, dict) or state.get("question") != digest:
            return False
        return self.tickets.redeem(str(state.get("ticket", "")))

    async def approve(self, request: ApprovalRequest) -> Answer:
        if not self.can_ask:
            if self.fallback is not None:
                return await self.fallback.approve(request)
            self.note = CANNOT_ASK.format(mode=self.mode)
            return False
        if request.tool != self.tool:
            # a step inside a longer call (computer_use_task): asking by input_required would
            # run the whole call again on the client's retry, so it is asked elsewhere or declined
            if self.fallback is not None:
                return await self.fallback.approve(request)
            self.note = NESTED.format(tool=self.tool)
            return False
        message = approval_message(request)
        digest = question_digest(message)
        if self._answered(digest):
            assert self.answer is not None
            return answer_of(self.answer.action, dict(self.answer.content or {}))
        self.asked += 1
        ask = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=message, requested_schema=approval_schema(request)
            )
        )
        state = json.dumps({"ticket": self.tickets.issue(), "question": digest})
        self.pending = types.InputRequiredResult(
            input_requests={INPUT_KEY: ask}, request_state=state
        )
        return False
