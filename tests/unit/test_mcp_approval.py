"""The 2026-07-28 approver: an answer is a yes only for the question it answered, once."""

from __future__ import annotations

import asyncio
import json

import mcp.types as types

from deskpilot.mcp.approval import INPUT_KEY, RoundTripApprover, Tickets, question_digest
from deskpilot.mcp.approval import approval_message as message_for
from deskpilot.policy import ApprovalRequest, Risk

SEND = ApprovalRequest(
    tool="perform", args={"elementID": "e1"}, risk=Risk.CONSEQUENTIAL, reason='activates "Send"'
)
DELETE = ApprovalRequest(
    tool="perform", args={"elementID": "e1"}, risk=Risk.CONSEQUENTIAL, reason='activates "Delete"'
)
YES = {INPUT_KEY: types.ElicitResult(action="accept", content={"approve": True})}


def params(state: str | None = None, answers: object = None) -> types.CallToolRequestParams:
    return types.CallToolRequestParams(
        name="perform",
        arguments={"elementID": "e1"},
        input_responses=answers,  # type: ignore[arg-type]
        request_state=state,
    )


def approve(approver: RoundTripApprover, request: ApprovalRequest) -> bool:
    return asyncio.run(approver.approve(request))


def test_first_round_asks_and_runs_nothing() -> None:
    approver = RoundTripApprover(True, params(), Tickets(), mode="consequential")
    assert approve(approver, SEND) is False
    assert approver.pending is not None and approver.pending.input_requests
    ask = approver.pending.input_requests[INPUT_KEY]
    assert isinstance(ask, types.ElicitRequest)
    assert ask.params.message == message_for(SEND)


def test_an_answer_to_another_question_is_no_yes() -> None:
    tickets = Tickets()
    asked = RoundTripApprover(True, params(), tickets, mode="consequential")
    approve(asked, SEND)
    assert asked.pending is not None
    state = asked.pending.request_state
    # the UI changed between the rounds: the same element ID now deletes
    again = RoundTripApprover(True, params(state, YES), tickets, mode="consequential")
    assert approve(again, DELETE) is False
    assert again.pending is not None  # asked again, about Delete
    assert json.loads(again.pending.request_state or "")["question"] == question_digest(
        message_for(DELETE)
    )


def test_yes_once_then_a_replay_asks_again() -> None:
    tickets = Tickets()
    asked = RoundTripApprover(True, params(), tickets, mode="consequential")
    approve(asked, SEND)
    assert asked.pending is not None
    state = asked.pending.request_state
    answered = RoundTripApprover(True, params(state, YES), tickets, mode="consequential")
    assert approve(answered, SEND) is True and answered.pending is None
    replayed = RoundTripApprover(True, params(state, YES), tickets, mode="consequential")
    assert approve(replayed, SEND) is False and replayed.pending is not None


def test_expired_tickets_are_no_yes() -> None:
    tickets = Tickets(ttl=0)
    asked = RoundTripApprover(True, params(), tickets, mode="consequential")
    approve(asked, SEND)
    assert asked.pending is not None
    late = RoundTripApprover(True, params(asked.pending.request_state, YES), tickets, mode="x")
    assert approve(late, SEND) is False


def test_a_step_inside_a_longer_call_is_declined_not_asked() -> None:
    task = types.CallToolRequestParams(name="computer_use_task", arguments={"goal": "g"})
    approver = RoundTripApprover(True, task, Tickets(), mode="consequential")
    assert approve(approver, SEND) is False
    assert approver.pending is None
    assert "not in the middle of computer_use_task" in approver.note
