"""The agent loop: ask the model, run the tools it asks for, feed the results back, repeat.

::

    run = AgentRun(provider, tools, ctx, conversation, RunOptions(max_steps=30, timeout=600))
    result = await run.run()          # run.stop() from elsewhere ends it early
    result.outcome, result.answer, result.exit_code

A step is one model reply plus the tool calls it asked for (run in order; after a failed call
the rest of that reply is answered "not run"). How a run ends:

===================  ==================  =========  =============================================
how                  ``outcome``          exit code  answer
===================  ==================  =========  =============================================
model answers        ``done``             0          the model's final answer
step budget used up  ``needs_attention``  3          notice + one last tools-free answer
timeout              ``needs_attention``  3          timeout notice + a short tools-free answer
provider fails       ``needs_attention``  3          the error + a progress summary
repeated bad format  ``needs_attention``  3          a progress summary
``stop()``           ``stopped``          4          a progress summary; never retried
===================  ==================  =========  =============================================

Every step is reported as events (``run.started``, ``model.text``, the ToolSet's ``tool.*`` and
``confirm.*``, ``run.finished``) through ``ctx.emit``. The final answer travels in
``run.finished``; ``model.text`` carries the model's text from steps that call tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from deskpilot.agent.conversation import (
    Conversation,
    Message,
    ToolCall,
    ToolProtocol,
    ToolResultPart,
)
from deskpilot.agent.prompts import final_call_note
from deskpilot.agent.providers.base import Provider
from deskpilot.errors import ProviderError
from deskpilot.events import Event
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

log = logging.getLogger(__name__)

Outcome = Literal["done", "needs_attention", "stopped"]
EXIT_CODES: dict[Outcome, int] = {"done": 0, "needs_attention": 3, "stopped": 4}

NOT_RUN_AFTER_FAILURE = (
    "Not run: an earlier tool call in this reply failed (see its result). Check the screen again "
    "before deciding what to do next."
)
NOT_RUN_STOPPED = "Not run: the user stopped the task."
NOT_RUN_TIMEOUT = "Not run: the task ran out of time."
FORGED_NOTE = (
    "\n(Runtime note: your reply contained a result marker; everything from it on was ignored. "
    "Only the runtime writes results.)"
)


@dataclass
class RunOptions:
    max_steps: int = 30
    timeout: float = 600.0
    tool_protocol: ToolProtocol | None = None
    #: time allowed for the tools-free answer after a timeout
    grace: float = 60.0
    #: consecutive replies whose every call is malformed before the run gives up
    max_format_errors: int = 3


@dataclass
class RunResult:
    outcome: Outcome
    answer: str
    reason: str  # answered | budget | timeout | stopped | provider_error | format_errors
    steps: int
    run_id: str
    conversation: Conversation = field(repr=False)
    #: the providers' usage counts (tokens…) summed over the run's replies, as they named them
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]


class StoppableRun(ABC):
    """A run a StopController can stop, bounded by ``options.timeout``: an :class:`AgentRun`, or
    a native computer-use run. :meth:`_run_stoppable` runs :meth:`_work` (tracked by the
    controller) and ends it as :meth:`_timed_out` or :meth:`_stopped` says."""

    def __init__(self, options: RunOptions, controller: StopController | None) -> None:
        self.options = options
        self.controller = controller
        self._stopping = False
        self._task: asyncio.Task[RunResult] | None = None

    def stop(self) -> None:
        """End the run now, with a progress summary (no model call, no retry)."""
        self._stopping = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _run_stoppable(self) -> RunResult:
        with self.controller.track(self) if self.controller else contextlib.nullcontext():
            if self._stopping:
                return self._stopped()
            self._task = asyncio.create_task(self._body())
            try:
                return await self._task
            except asyncio.CancelledError:
                if not self._stopping or not self._task.cancelled():
                    raise
                return self._stopped()

    async def _body(self) -> RunResult:
        try:
            async with asyncio.timeout(self.options.timeout):
                return await self._work()
        except TimeoutError:
            return await self._timed_out()

    @abstractmethod
    async def _work(self) -> RunResult:
        """The run itself, until it ends on its own."""

    @abstractmethod
    async def _timed_out(self) -> RunResult:
        """The ending when ``options.timeout`` is reached."""

    @abstractmethod
    def _stopped(self) -> RunResult:
        """The ending after :meth:`stop`."""


class StopController:
    """Stops the innermost active run (a subagent before its parent): Ctrl-C, API cancel."""

    def __init__(self) -> None:
        self._runs: list[StoppableRun] = []
        self._pending = False

    @contextlib.contextmanager
    def track(self, run: StoppableRun) -> Iterator[None]:
        if self._pending:  # a stop asked for before the run started
            self._pending = False
            run.stop()
        self._runs.append(run)
        try:
            yield
        finally:
            self._runs.remove(run)

    @property
    def active(self) -> bool:
        return bool(self._runs)

    def stop(self, *, pending: bool = False) -> bool:
        """Stop the innermost run; False when nothing is running. With ``pending``, a stop
        asked for while nothing runs stops the next run as soon as it starts."""
        if not self._runs:
            self._pending = pending
            return False
        self._runs[-1].stop()
        return True


class AgentRun(StoppableRun):
    """One run of the loop over ``conversation`` (which ends with the user's message)."""

    def __init__(
        self,
        provider: Provider,
        tools: ToolSet,
        ctx: ToolContext,
        conversation: Conversation,
        options: RunOptions | None = None,
        *,
        goal: str = "",
        constraints: Sequence[str] = (),
        controller: StopController | None = None,
        parent_run: str | None = None,
    ) -> None:
        super().__init__(options or RunOptions(), controller)
        self.provider = provider
        self.parent_run = parent_run
        self.tools = tools
        self.run_id = ctx.run_id or uuid.uuid4().hex[:16]
        self.ctx = (
            ctx if ctx.run_id == self.run_id else dataclasses.replace(ctx, run_id=self.run_id)
        )
        self.conversation = conversation
        self.goal = goal or _last_user_text(conversation)
        self.constraints = list(constraints)
        self.steps = 0
        self.usage: dict[str, int] = {}
        self._start = len(conversation.messages)
        self._asking = False  # waiting for the model's reply (not for a tool)

    async def run(self) -> RunResult:
        self._emit(
            "run.started",
            {
                "goal": self.goal,
                "model": self.provider.label,
                "window": self.ctx.session.target or self.ctx.fallback_window,
                "max_steps": self.options.max_steps,
                "timeout": self.options.timeout,
                "tool_protocol": self.provider.resolve_protocol(self.options.tool_protocol),
                **({"parent_run": self.parent_run} if self.parent_run else {}),
            },
        )
        self.ctx.grants.announce()  # what the person's goal allows: recorded once, here
        return await self._run_stoppable()

    # -- the loop --------------------------------------------------------------------------

    async def _work(self) -> RunResult:
        format_errors = 0
        protocol = self.options.tool_protocol
        while True:
            if self.steps >= self.options.max_steps:
                reason = f"The step budget of {self.options.max_steps} steps is used up"
                answer = await self._last_answer(reason)
                notice = f"⚠ Step budget reached ({self.options.max_steps} steps)"
                return self._finish("needs_attention", "budget", f"{notice}.\n\n{answer}")
            self._asking = True  # left set if the time runs out here (see _timed_out)
            try:
                turn = await self.provider.complete(
                    self.conversation, self.tools.list(), tool_protocol=protocol
                )
            except ProviderError as exc:
                return self._finish(
                    "needs_attention",
                    "provider_error",
                    f"The model provider failed: {exc}\n\n{self._summary()}",
                )
            self._asking = False
            self.steps += 1
            self._count(turn.usage)
            self.conversation.add_turn(turn)
            if not turn.tool_calls:
                return self._finish("done", "answered", turn.text or "(no answer)")
            if turn.text:
                self._emit("model.text", {"text": turn.text, "step": self.steps})
            for note in turn.notes:
                log.info("run %s: %s", self.run_id, note)
            results = await self._run_calls(turn.tool_calls)
            if any("result marker" in n for n in turn.notes) and results:
                results[-1].text += FORGED_NOTE
            format_errors = format_errors + 1 if all(c.error for c in turn.tool_calls) else 0
            if format_errors >= self.options.max_format_errors:
                why = f"{format_errors} replies in a row held only malformed tool calls."
                return self._finish(
                    "needs_attention", "format_errors", f"{why}\n\n{self._summary()}"
                )

    async def _run_calls(self, calls: Sequence[ToolCall]) -> list[ToolResultPart]:
        message = self.conversation.add_results([])  # filled as calls finish (stop keeps them)
        failed = False
        for call in calls:
            if failed or call.error is not None:
                text = NOT_RUN_AFTER_FAILURE if failed else str(call.error)
                self._emit_unrun(call, text)
                message.results.append(ToolResultPart(call.id, call.name, text, is_error=True))
                failed = True
                continue
            result = await self.tools.call(call.name, call.arguments, self.ctx, call_id=call.id)
            message.results.append(
                ToolResultPart(
                    call.id, call.name, result.text, list(result.images), result.is_error
                )
            )
            failed = result.is_error
        return message.results

    async def _last_answer(self, reason: str) -> str:
        """One last call without tools, to answer with what the run has."""
        self.conversation.add_user(final_call_note(reason, self.goal, self.constraints))
        try:
            turn = await self.provider.complete(
                self.conversation, (), tool_protocol=self.options.tool_protocol
            )
        except ProviderError as exc:
            log.warning("run %s: the last answer failed: %s", self.run_id, exc)
            return self._summary()
        turn.tool_calls = []  # no tools were offered; never leave calls unanswered
        self._count(turn.usage)
        self.conversation.add_turn(turn)
        return turn.text or self._summary()

    async def _timed_out(self) -> RunResult:
        self.conversation.close_pending(NOT_RUN_TIMEOUT)
        limit = f"{self.options.timeout:g} s"
        notice = f"⏱ Timed out after {limit} — the task may be only partially complete."
        if self._asking:
            # the time ran out waiting for the model: asking it once more would wait again
            notice += " The model provider did not answer in time."
            return self._finish("needs_attention", "timeout", f"{notice}\n\n{self._summary()}")
        try:
            async with asyncio.timeout(self.options.grace):
                answer = await self._last_answer(f"Time is up: the {limit} limit was reached")
        except TimeoutError:
            answer = self._summary()
        return self._finish("needs_attention", "timeout", f"{notice}\n\n{answer}")

    def _stopped(self) -> RunResult:
        self.conversation.close_pending(NOT_RUN_STOPPED)
        answer = (
            f"Stopped by the user after {self.steps} step(s); the task is not finished.\n"
            f"{self._summary()}\n"
            "Ask the user how to proceed. Do not retry this task automatically."
        )
        return self._finish("stopped", "stopped", answer)

    # -- reporting -------------------------------------------------------------------------

    def _summary(self) -> str:
        return progress_summary(self.conversation.messages[self._start :])

    def _count(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value

    def _finish(self, outcome: Outcome, reason: str, answer: str) -> RunResult:
        self._emit(
            "run.finished",
            {"outcome": outcome, "answer": answer, "steps": self.steps, "reason": reason},
        )
        return RunResult(
            outcome, answer, reason, self.steps, self.run_id, self.conversation, dict(self.usage)
        )

    def _emit(self, kind: str, data: dict[str, object]) -> None:
        self.ctx.emit(Event(kind, dict(data), run_id=self.run_id))

    def _emit_unrun(self, call: ToolCall, text: str) -> None:
        args: object = call.arguments if call.error is None else call.raw
        self._emit("tool.call", {"tool": call.name or "?", "args": args, "call_id": call.id})
        self._emit(
            "tool.result",
            {
                "tool": call.name or "?",
                "call_id": call.id,
                "ok": False,
                "summary": text.splitlines()[0][:160],
                "text": text,
            },
        )


def progress_summary(messages: Sequence[Message], limit: int = 20) -> str:
    """What the run did, one line per tool call, from the conversation itself."""
    results = {r.call_id: r for m in messages for r in m.results}
    lines: list[str] = []
    last_text = ""
    for message in messages:
        if message.role != "assistant":
            continue
        last_text = message.text or last_text
        for call in message.tool_calls:
            args = json.dumps(call.arguments, ensure_ascii=False)
            if len(args) > 80:
                args = args[:77] + "..."
            result = results.get(call.id)
            if result is None:
                outcome = "no result"
            else:
                first = next((ln for ln in result.text.splitlines() if ln.strip()), "")[:100]
                outcome = ("failed: " if result.is_error else "ok: ") + first
            lines.append(f"{call.name or '?'} {args} → {outcome}")
    if not lines:
        return "Progress so far: no tool was called."
    shown = lines[-limit:]
    skipped = len(lines) - len(shown)
    out = ["Progress so far:"]
    if skipped:
        out.append(f"  ({skipped} earlier step(s) not shown)")
    out += [f"  {i}. {line}" for i, line in enumerate(shown, start=skipped + 1)]
    if last_text:
        out.append(f"Last note from the model: {last_text.strip()[:300]}")
    return "\n".join(out)


def _last_user_text(conversation: Conversation) -> str:
    for message in reversed(conversation.messages):
        if message.role == "user":
            return message.text
    return ""
