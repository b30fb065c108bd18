"""One model turn's calls and their results: the native call/result flow as a state machine.

A :class:`ComputerSession` receives the calls of a model turn in their original order (computer
calls and local function calls). Unanswered computer calls are its ``user_input_requests``.
Results come back in any order and are checked:

* a :class:`ComputerResult` must name exactly one pending computer call, and acknowledge exactly
  that call's pending safety checks (otherwise :class:`ComputerFlowError` with a clear message);
* ``results()`` returns every answer in the original call order, local function results
  interleaved with computer results;
* ``cancel(call_id)`` cancels that request and every other unanswered call of the batch
  (``"Computer call X was cancelled without a result."``); finished results stay; the session
  is then closed and ``next_turn()`` starts a fresh one;
* ``to_dict``/``from_dict`` checkpoint it: call ids, action order and pending checks survive.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from deskpilot.native.calls import (
    CallError,
    ComputerCall,
    ComputerFlowError,
    ComputerResult,
    FunctionCall,
    FunctionResult,
    Item,
    Output,
    ScreenshotRef,
    item_from_dict,
    output_from_dict,
)
from deskpilot.native.safety import require_exact_ack

State = Literal["open", "cancelled"]
CHECKPOINT_VERSION = 1


def cancelled_message(call: Item) -> str:
    kind = "Computer" if isinstance(call, ComputerCall) else "Function"
    return f"{kind} call {call.call_id} was cancelled without a result."


class ComputerSession:
    """The calls of one model turn and their answers."""

    def __init__(self, session_id: str | None = None) -> None:
        self.id = session_id or f"cs_{uuid.uuid4().hex[:16]}"
        self.items: list[Item] = []
        self.answers: dict[int, Output] = {}  # index in items → answer
        self.state: State = "open"

    # -- receiving ---------------------------------------------------------------------------

    def receive(self, items: Iterable[Item]) -> list[ComputerCall]:
        """Add a turn's calls (in order); returns the computer calls awaiting a person."""
        self._require_open()
        self.items.extend(items)
        return self.user_input_requests

    @property
    def user_input_requests(self) -> list[ComputerCall]:
        return [
            c
            for i, c in enumerate(self.items)
            if isinstance(c, ComputerCall) and i not in self.answers
        ]

    @property
    def pending_function_calls(self) -> list[FunctionCall]:
        return [
            c
            for i, c in enumerate(self.items)
            if isinstance(c, FunctionCall) and i not in self.answers
        ]

    @property
    def complete(self) -> bool:
        return len(self.answers) == len(self.items)

    # -- answering ---------------------------------------------------------------------------

    def _pending_index(self, call_id: str, kind: type[ComputerCall] | type[FunctionCall]) -> int:
        what = "computer" if kind is ComputerCall else "function"
        hits = [
            i
            for i, c in enumerate(self.items)
            if isinstance(c, kind) and c.call_id == call_id and i not in self.answers
        ]
        if len(hits) == 1:
            return hits[0]
        pending = [
            c.call_id
            for i, c in enumerate(self.items)
            if isinstance(c, kind) and i not in self.answers
        ]
        shown = ", ".join(pending) or "none"
        raise ComputerFlowError(
            f"A {what} result's call_id {call_id!r} must match exactly one pending request; "
            f"it matches {len(hits)} (pending {what} calls: {shown})."
        )

    def submit(self, result: ComputerResult) -> None:
        """Accept the result of a computer call that ran."""
        self._require_open()
        index = self._pending_index(result.call_id, ComputerCall)
        call = self.items[index]
        assert isinstance(call, ComputerCall)
        require_exact_ack(
            call.call_id, call.pending_safety_checks, result.acknowledged_safety_checks
        )
        self.answers[index] = result

    def submit_function(self, result: FunctionResult) -> None:
        """Accept the result of a local function call of the same turn."""
        self._require_open()
        self.answers[self._pending_index(result.call_id, FunctionCall)] = result

    def fail(
        self, call_id: str, message: str, *, screenshot: ScreenshotRef | None = None
    ) -> CallError:
        """End a pending computer call without running it (declined, invalid, not executed)."""
        self._require_open()
        index = self._pending_index(call_id, ComputerCall)
        error = CallError(call_id, message, screenshot=screenshot)
        self.answers[index] = error
        return error

    def cancel(self, call_id: str) -> list[CallError]:
        """Cancel one pending request (a computer call, or a function call whose approval was
        cancelled) and, with it, every unanswered call of the batch."""
        self._require_open()
        if not any(c.call_id == call_id for c in self.pending_function_calls):
            self._pending_index(call_id, ComputerCall)
        errors: list[CallError] = []
        for i, call in enumerate(self.items):
            if i in self.answers:
                continue
            computer = isinstance(call, ComputerCall)
            error = CallError(
                call.call_id,
                cancelled_message(call),
                cancelled_computer_call=computer,
                computer=computer,
            )
            self.answers[i] = error
            errors.append(error)
        self.state = "cancelled"
        return errors

    # -- results -----------------------------------------------------------------------------

    def results(self) -> list[Output]:
        """Every answer in the original call order (the batch must be complete)."""
        if not self.complete:
            waiting = [c.call_id for i, c in enumerate(self.items) if i not in self.answers]
            raise ComputerFlowError(
                f"{len(waiting)} call(s) still need a result: {', '.join(waiting)}."
            )
        return [self.answers[i] for i in range(len(self.items))]

    def next_turn(self) -> ComputerSession:
        """A fresh session for the next turn (after completion or cancellation)."""
        if self.state == "open" and not self.complete:
            raise ComputerFlowError("this turn still has unanswered calls; answer or cancel them")
        return ComputerSession()

    def _require_open(self) -> None:
        if self.state == "cancelled":
            raise ComputerFlowError(
                f"session {self.id} was cancelled; start the next turn with next_turn()"
            )

    # -- checkpoints -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": CHECKPOINT_VERSION,
            "id": self.id,
            "state": self.state,
            "items": [c.to_dict() for c in self.items],
            "answers": {str(i): a.to_dict() for i, a in sorted(self.answers.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComputerSession:
        if data.get("version") != CHECKPOINT_VERSION:
            raise ComputerFlowError(
                f"unsupported computer session checkpoint version {data.get('version')!r}"
            )
        session = cls(str(data["id"]))
        session.items = [item_from_dict(c) for c in data.get("items", ())]
        session.answers = {int(i): output_from_dict(a) for i, a in data.get("answers", {}).items()}
        for index, answer in session.answers.items():
            call = session.items[index] if 0 <= index < len(session.items) else None
            if call is None or call.call_id != answer.call_id:
                raise ComputerFlowError(
                    f"checkpoint answer {index} ({answer.call_id!r}) answers no call of its turn"
                )
            if isinstance(call, ComputerCall) and isinstance(answer, ComputerResult):
                require_exact_ack(
                    call.call_id, call.pending_safety_checks, answer.acknowledged_safety_checks
                )
        state = data.get("state", "open")
        if state not in ("open", "cancelled"):
            raise ComputerFlowError(f"unknown session state {state!r}")
        session.state = state
        return session
