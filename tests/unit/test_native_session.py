"""The native call/result flow: approvals through the door, exact safety
acknowledgements, checkpoints, ordered batch results and the cancel cascade."""

from __future__ import annotations

import json

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.fake import FakeDesktop
from deskpilot.events import Event
from deskpilot.native.actions import Click, Drag, KeyPress, TypeText
from deskpilot.native.calls import (
    CallError,
    ComputerCall,
    ComputerFlowError,
    ComputerResult,
    FunctionCall,
    FunctionResult,
    SafetyCheck,
    ScreenshotRef,
    item_from_dict,
    output_from_dict,
)
from deskpilot.native.executor import BatchOutcome, NativeExecutor
from deskpilot.native.safety import SafetyCheckMismatch, call_verdict
from deskpilot.native.session import ComputerSession
from deskpilot.policy import (
    AllowAll,
    ApprovalRequest,
    Approver,
    CallbackApprover,
    CancelRequest,
    DenyAll,
)
from deskpilot.tools.base import ToolResult
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

PNG = b"\x89PNG\r\n\x1a\n-fake-"
CHECK_A = SafetyCheck("sc_a", "malicious_instructions", "Review before clicking.")
CHECK_B = SafetyCheck("sc_b", "sensitive_domain")


def computer(call_id: str, *checks: SafetyCheck) -> ComputerCall:
    actions = (Click(10, 20), TypeText("penguin"), KeyPress(("Return",)))
    return ComputerCall(f"cu_{call_id}", call_id, actions, tuple(checks))


def result(call_id: str, *acks: SafetyCheck) -> ComputerResult:
    return ComputerResult(call_id, ScreenshotRef(data=PNG), tuple(acks))


def test_pending_checks_must_be_acknowledged_exactly() -> None:
    session = ComputerSession()
    assert session.receive([computer("call_1", CHECK_A, CHECK_B)])[0].call_id == "call_1"
    with pytest.raises(SafetyCheckMismatch, match=r"not acknowledged: sc_b"):
        session.submit(result("call_1", CHECK_A))
    with pytest.raises(SafetyCheckMismatch, match=r"acknowledged but not pending.*sc_x"):
        session.submit(result("call_1", CHECK_A, CHECK_B, SafetyCheck("sc_x")))
    with pytest.raises(SafetyCheckMismatch, match=r"\(or twice\): sc_a"):
        session.submit(result("call_1", CHECK_A, CHECK_A, CHECK_B))
    assert session.user_input_requests  # still waiting: nothing was accepted
    session.submit(result("call_1", CHECK_B, CHECK_A))  # order does not matter
    assert session.complete and session.user_input_requests == []


def test_a_result_must_match_exactly_one_pending_call() -> None:
    session = ComputerSession()
    session.receive([computer("call_1"), computer("dup"), computer("dup")])
    with pytest.raises(ComputerFlowError, match=r"'call_9' must match exactly one .* matches 0"):
        session.submit(result("call_9"))
    with pytest.raises(ComputerFlowError, match=r"'dup' .* matches 2"):
        session.submit(result("dup"))
    session.submit(result("call_1"))
    with pytest.raises(ComputerFlowError, match="matches 0"):  # answered calls are not pending
        session.submit(result("call_1"))
    with pytest.raises(ComputerFlowError, match="still need a result: dup, dup"):
        session.results()


def test_calls_and_results_round_trip_through_dicts() -> None:
    call = ComputerCall(
        "cu_1",
        "call_1",
        (Drag(((1, 2), (3, 4))), TypeText("a\u200bb")),
        (CHECK_A,),
        window="42/123",
        meta={"toolset_name": "computer"},
    )
    outputs = [
        ComputerResult(
            "call_1",
            ScreenshotRef(data=PNG),
            (CHECK_A,),
            "X=1,Y=2",
            False,
            (ScreenshotRef(uri="https://example.test/z.png"),),
        ),
        ComputerResult("call_2", ScreenshotRef(file_id="file_123")),
        FunctionResult("call_3", "ok", images=(ScreenshotRef(data=PNG, mime="image/jpeg"),)),
        CallError("call_4", "Computer call call_4 was cancelled without a result.", True),
    ]
    assert item_from_dict(json.loads(json.dumps(call.to_dict()))) == call
    fc = FunctionCall("call_3", "read_screen_ax", {"windowID": "1/2"})
    assert item_from_dict(json.loads(json.dumps(fc.to_dict()))) == fc
    for out in outputs:
        assert output_from_dict(json.loads(json.dumps(out.to_dict()))) == out
    assert outputs[3].to_dict()["additional_properties"] == {"cancelled_computer_call": True}


def test_a_screenshot_is_exactly_one_of_bytes_uri_or_file() -> None:
    with pytest.raises(ComputerFlowError):
        ScreenshotRef()
    with pytest.raises(ComputerFlowError):
        ScreenshotRef(data=PNG, uri="https://x")
    assert ScreenshotRef(data=b"ab").data_url() == "data:image/png;base64,YWI="


def test_a_paused_batch_resumes_from_a_checkpoint_intact() -> None:
    session = ComputerSession()
    session.receive(
        [FunctionCall("f_1", "list_windows"), computer("call_1", CHECK_A), computer("call_2")]
    )
    session.submit_function(FunctionResult("f_1", "Open Windows (0 total):"))
    saved = json.dumps(session.to_dict())

    resumed = ComputerSession.from_dict(json.loads(saved))
    assert resumed.id == session.id
    assert [c.call_id for c in resumed.user_input_requests] == ["call_1", "call_2"]
    assert resumed.user_input_requests[0].actions == computer("x").actions  # order intact
    assert resumed.user_input_requests[0].pending_safety_checks == (CHECK_A,)
    with pytest.raises(SafetyCheckMismatch):
        resumed.submit(result("call_1"))  # the checks survived: still required
    resumed.submit(result("call_2"))
    resumed.submit(result("call_1", CHECK_A))
    assert [o.call_id for o in resumed.results()] == ["f_1", "call_1", "call_2"]


def test_results_come_back_in_the_original_call_order() -> None:
    session = ComputerSession()
    session.receive(
        [FunctionCall("f_a", "a"), computer("c_1"), FunctionCall("f_b", "b"), computer("c_2")]
    )
    session.submit(result("c_2"))
    session.submit_function(FunctionResult("f_b", "B"))
    session.submit(result("c_1"))
    session.submit_function(FunctionResult("f_a", "A"))
    assert [o.call_id for o in session.results()] == ["f_a", "c_1", "f_b", "c_2"]


def test_cancelling_one_request_cancels_the_rest_of_its_batch() -> None:
    session = ComputerSession()
    session.receive(
        [
            computer("c_1"),
            FunctionCall("f_1", "list_windows"),
            computer("c_2"),
            computer("c_3"),
            FunctionCall("f_2", "wait"),
        ]
    )
    session.submit(result("c_1"))
    session.submit_function(FunctionResult("f_1", "listed"))
    errors = session.cancel("c_2")
    assert [e.message for e in errors] == [
        "Computer call c_2 was cancelled without a result.",
        "Computer call c_3 was cancelled without a result.",
        "Function call f_2 was cancelled without a result.",
    ]
    assert [e.cancelled_computer_call for e in errors] == [True, True, False]
    out = session.results()
    assert isinstance(out[0], ComputerResult) and isinstance(out[1], FunctionResult)  # stay
    assert all(isinstance(o, CallError) and o.screenshot is None for o in out[2:])  # no fakes
    with pytest.raises(ComputerFlowError, match="was cancelled"):
        session.submit(result("c_3"))
    fresh = session.next_turn()
    assert fresh.id != session.id and fresh.items == [] and fresh.state == "open"
    restored = ComputerSession.from_dict(json.loads(json.dumps(session.to_dict())))
    assert restored.state == "cancelled" and restored.results() == out


def test_cancel_needs_a_pending_request() -> None:
    session = ComputerSession()
    session.receive([computer("c_1")])
    with pytest.raises(ComputerFlowError, match="matches 0"):
        session.cancel("c_9")
    with pytest.raises(ComputerFlowError, match="unanswered"):
        session.next_turn()


def test_the_request_shows_every_action_and_warning_exactly() -> None:
    call = ComputerCall(
        "cu",
        "c_1",
        (Click(10, 20, count=2), TypeText("rm -rf /\u202e\n")),
        (SafetyCheck("sc_1", "malicious_instructions", "Odd\u200btext"),),
        window="7/99",
    )
    verdict = call_verdict(call.actions, call.window, call.pending_safety_checks)
    assert verdict.details == (
        "1. left double click at (10, 20)",
        '2. type "rm -rf /\\u202e{RIGHT-TO-LEFT OVERRIDE}\\n"',
        'WARNING: safety check sc_1 [malicious_instructions]: "Odd\\u200b{ZERO WIDTH SPACE}text"',
    )
    assert "window 7/99" in verdict.reason and "1 safety warning" in verdict.reason
    assert verdict.person_only


def decide(
    settings: Settings, call: ComputerCall, approver: Approver, confirm: str = "consequential"
) -> tuple[ToolResult, list[Event]]:
    """One computer call through the door (ToolSet.call of computer_call) on a FakeDesktop."""
    import asyncio

    events: list[Event] = []
    ctx = ToolContext(
        FakeDesktop(),
        settings.with_overrides(confirm=confirm),
        audit=events.append,
        approver=approver,
    )
    executor = NativeExecutor(ToolSet(), ctx)
    return asyncio.run(executor.decide(call, window=None, screenshot=False)), events


def answered(events: list[Event]) -> list[bool]:
    return [e.data["approved"] for e in events if e.kind == "confirm.answered"]


def test_safety_checks_are_never_acknowledged_automatically(settings: Settings) -> None:
    flagged = computer("c_1", CHECK_A)
    for mode in ("consequential", "none"):  # in every confirm mode
        result, events = decide(settings, flagged, AllowAll(), mode)
        assert result.data == {
            "refused": "declined",
            "why": ("only a person may approve it; the approver is automatic"),
        }
        assert not isinstance(result.value, BatchOutcome)
        assert [e.kind for e in events] == [
            "tool.call",
            "confirm.asked",
            "confirm.answered",
            "policy.decided",
            "tool.result",
        ]
        assert answered(events) == [False]
        assert events[-1].data["refused"] == "declined"

    plain, events = decide(settings, computer("c_2"), AllowAll())
    assert isinstance(plain.value, BatchOutcome) and plain.value.ok
    assert answered(events) == []  # nobody is asked for a plain call in consequential mode

    seen: list[ApprovalRequest] = []
    person = CallbackApprover(lambda r: seen.append(r) or True, person=True)
    yes, events = decide(settings, flagged, person)
    assert isinstance(yes.value, BatchOutcome) and yes.value.ok
    assert seen[0].details[-1].startswith("WARNING: safety check sc_a")
    assert seen[0].person_only and seen[0].tool == "computer_call"
    assert answered(events) == [True]
    # the person's yes covered the plain actions: nothing else was asked
    assert [e.data["tool"] for e in events if e.kind == "confirm.asked"] == ["computer_call"]

    no, events = decide(settings, flagged, CallbackApprover(lambda r: False, person=True))
    assert no.data is not None and no.data["why"] == "the user declined"
    no, events = decide(settings, flagged, DenyAll())  # automatic: not even asked
    assert no.data is not None and no.data["why"].startswith("only a person may approve it")


def test_confirm_all_asks_once_per_computer_call(settings: Settings) -> None:
    seen: list[str] = []
    _result, events = decide(
        settings,
        computer("c_1"),
        CallbackApprover(lambda r: seen.append(r.tool) or True, person=True),
        "all",
    )
    assert seen == ["computer_call"]  # its three actions were shown in it, and covered
    assert [e.data["tool"] for e in events if e.kind == "tool.call"] == [
        "computer_call",
        "computer",
        "computer",
        "computer",
    ]


def test_an_approver_can_cancel_instead_of_declining(settings: Settings) -> None:
    def cancel(request: ApprovalRequest) -> bool:
        raise CancelRequest

    events: list[Event] = []
    person = CallbackApprover(cancel, person=True)
    ctx = ToolContext(
        FakeDesktop(), settings.with_overrides(confirm="all"), audit=events.append, approver=person
    )
    import asyncio

    with pytest.raises(CancelRequest):
        asyncio.run(NativeExecutor(ToolSet(), ctx).decide(computer("c_1"), window=None))
    confirm = [e for e in events if e.kind == "confirm.answered"]
    assert confirm[-1].data["cancelled"] is True
    assert events[-1].kind == "tool.result" and events[-1].data["ok"] is False


def test_a_checkpoint_cannot_smuggle_in_answers_or_acknowledgements() -> None:
    session = ComputerSession()
    session.receive([computer("call_1", CHECK_A), computer("call_2")])
    saved = session.to_dict()
    wrong_call = {**saved, "answers": {"1": result("call_9").to_dict()}}
    with pytest.raises(ComputerFlowError, match="answers no call"):
        ComputerSession.from_dict(json.loads(json.dumps(wrong_call)))
    out_of_range = {**saved, "answers": {"7": result("call_2").to_dict()}}
    with pytest.raises(ComputerFlowError, match="answers no call"):
        ComputerSession.from_dict(json.loads(json.dumps(out_of_range)))
    unacknowledged = {**saved, "answers": {"0": result("call_1").to_dict()}}
    with pytest.raises(SafetyCheckMismatch):  # a check passes only through submit's rule
        ComputerSession.from_dict(json.loads(json.dumps(unacknowledged)))
