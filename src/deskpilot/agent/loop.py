"""The agent loop: ask the model, act on what it asks for, feed the results back, repeat.

::

    acting = ElementTools(provider, tools, conversation)        # or ComputerCalls(...)
    run = AgentRun(acting, ctx, RunOptions(max_steps=30, timeout=600), goal=goal)
    result = await run.run()          # run.stop() from elsewhere ends it early
    result.outcome, result.answer, result.exit_code

There is one loop, whatever the model acts with. How it acts is an :class:`Acting`:

====================  =============================================================  ==========
acting                the model acts with                                            module
====================  =============================================================  ==========
element tools         the nine tools, through the provider's function calling        element
text protocol         the same tools, through ``@@TOOL@@`` blocks in plain text      element
computer calls        the vendor's native computer tool (screenshots, coordinates)   computer
hybrid                the computer tool and the element tools side by side           computer
====================  =============================================================  ==========

The loop owns what every run shares: the events, the step budget, the timeout, stopping,
provider failures, the tools-free last answer, usage, and how the run ends. A step is one model
reply plus what it asked for. How a run ends:

===================  ==================  =========  =============================================
how                  ``outcome``          exit code  answer
===================  ==================  =========  =============================================
model answers        ``done``             0          the model's final answer
step budget used up  ``needs_attention``  3          notice + one last tools-free answer
timeout              ``needs_attention``  3          timeout notice + a short tools-free answer
provider fails       ``needs_attention``  3          the error + a progress summary
the run cannot go on ``needs_attention``  3          the error (the screen cannot be read…)
repeated bad format  ``needs_attention``  3          a progress summary
paused at a call     ``needs_attention``  3          how to resume (a checkpoint file)
``stop()``, or "stop"
at a call            ``stopped``          4          a progress summary; never retried
===================  ==================  =========  =============================================

Every step is reported as events (``run.started``, ``model.text``, the ToolSet's ``tool.*`` and
``confirm.*``, ``run.finished``) through ``ctx.emit``. The final answer travels in
``run.finished``; ``model.text`` carries the model's text from steps that act.

Hooks let a person talk to a run:

* ``inbox`` — anything with ``take()``: before each model turn, each message it gives (the user
  wrote while the run goes on) joins the conversation (:meth:`Acting.say`) and is recorded as
  a ``user.message`` event;
* ``before_call`` — awaited before each call the model asked for: ``None`` runs it, a text
  answers it instead (a person took the screen over; the model reads why); the time it takes
  (a person holding the screen) does not count against the timeout;
* :func:`follow_up` — continue a finished run in the same context: its way of acting
  (``result.acting``, with its conversation) hears the new message and runs again, under a
  new run id.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from deskpilot.agent.conversation import Conversation, ToolProtocol
from deskpilot.agent.prompts import final_call_note
from deskpilot.errors import DeskpilotError, ProviderError
from deskpilot.events import Event
from deskpilot.tools.context import ToolContext, persons_goal

log = logging.getLogger(__name__)

Outcome = Literal["done", "needs_attention", "stopped"]
EXIT_CODES: dict[Outcome, int] = {"done": 0, "needs_attention": 3, "stopped": 4}

NOT_RUN_STOPPED = "Not run: the user stopped the task."
NOT_RUN_TIMEOUT = "Not run: the task ran out of time."

#: asked before each call: None runs it; a text answers it instead
BeforeCall = Callable[[], Awaitable[str | None]]


class Inbox(Protocol):
    """Where the messages a person sends to a running agent wait for its next model turn."""

    def take(self) -> Sequence[str]:
        """The messages that came since the last call, oldest first."""
        ...


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
class Reply:
    """One model reply as the loop sees it."""

    text: str
    done: bool  # no calls: this is the answer
    usage: dict[str, int] = field(default_factory=dict)


@dataclass
class Acted:
    """What acting on one reply came to."""

    #: every call of the reply was malformed (nothing ran)
    malformed: bool = False
    #: a person paused the run at a call: how to resume it
    paused: str = ""
    #: a person stopped the run at a call
    cancelled: bool = False


class Acting(Protocol):
    """A way of acting: the model's conversation, what it is offered, and how its calls run.

    The loop calls :meth:`begin` once, then :meth:`ask` and :meth:`act` in turn; :meth:`say`
    adds a user message before the next :meth:`ask` (a note from the runtime, the inbox, a
    follow-up); ``ask(final=True)`` offers no tools (the last answer)."""

    def attach(self, ctx: ToolContext) -> ToolContext:
        """The context this acting's calls run with (``ctx`` plus any observer it needs)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What ``run.started`` says about it: ``model``, ``tool_protocol``, ``window``…"""
        ...

    def goal(self) -> str:
        """What the run was asked, when the caller does not say."""
        ...

    async def begin(self) -> tuple[int, bool]:
        """Get ready: (steps already taken, True when a turn is waiting to be acted on) — both
        zero/False except for a run resumed from a checkpoint."""
        ...

    def say(self, text: str) -> None: ...

    async def ask(self, *, final: bool = False) -> Reply: ...

    async def act(self, before_call: BeforeCall | None = None) -> Acted:
        """Run the last reply's calls in order (``before_call`` asked before each)."""
        ...

    async def close_pending(self, text: str, *, fresh: bool) -> None:
        """Answer every call still without a result with ``text`` (``fresh``: there is time to
        look at the screen again for it)."""
        ...

    def summary(self) -> str:
        """What the run did so far, for an answer the model did not write."""
        ...

    def conversation(self) -> Conversation:
        """The conversation in the neutral form (a computer-use run: its system and goal)."""
        ...


@dataclass
class RunResult:
    outcome: Outcome
    answer: str
    reason: str  # answered | budget | timeout | stopped | provider_error | error | …
    steps: int
    run_id: str
    conversation: Conversation = field(repr=False)
    #: the providers' usage counts (tokens…) summed over the run's replies, as they named them
    usage: dict[str, int] = field(default_factory=dict)
    #: the run's way of acting, with its conversation: :func:`follow_up` continues from it
    acting: Acting | None = field(default=None, repr=False, compare=False)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]


class StopController:
    """Stops the innermost active run (a subagent before its parent): Ctrl-C, API cancel."""

    def __init__(self) -> None:
        self._runs: list[AgentRun] = []
        self._pending = False

    @contextlib.contextmanager
    def track(self, run: AgentRun) -> Iterator[None]:
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


class AgentRun:
    """One run of the loop (see the module docstring)."""

    def __init__(
        self,
        acting: Acting,
        ctx: ToolContext,
        options: RunOptions | None = None,
        *,
        goal: str = "",
        constraints: Sequence[str] = (),
        controller: StopController | None = None,
        parent_run: str | None = None,
        inbox: Inbox | None = None,
        before_call: BeforeCall | None = None,
        started: Mapping[str, Any] | None = None,
    ) -> None:
        self.acting = acting
        self.options = options or RunOptions()
        self.controller = controller
        self.parent_run = parent_run
        self.inbox = inbox
        self.before_call = before_call
        self.run_id = ctx.run_id or uuid.uuid4().hex[:16]
        self.ctx = acting.attach(
            ctx if ctx.run_id == self.run_id else dataclasses.replace(ctx, run_id=self.run_id)
        )
        self.goal = goal or acting.goal()
        self.constraints = list(constraints)
        self.started = dict(started or {})  # more for run.started (a resumed run says so)
        self.steps = 0
        self.usage: dict[str, int] = {}
        self._asking = False  # waiting for the model's reply (not for a tool)
        self._stopping = False
        self._task: asyncio.Task[RunResult] | None = None
        self._deadline: asyncio.Timeout | None = None  # the run's timeout (see _held)

    async def run(self) -> RunResult:
        self._emit(
            "run.started",
            {
                "goal": self.goal,
                **self.acting.describe(),
                "max_steps": self.options.max_steps,
                "timeout": self.options.timeout,
                **({"parent_run": self.parent_run} if self.parent_run else {}),
                **self.started,
            },
        )
        self.ctx.grants.announce()  # policy: what the person's goal allows, once, here
        with self.controller.track(self) if self.controller else contextlib.nullcontext():
            if self._stopping:
                return await self._stopped()
            self._task = asyncio.create_task(self._body())
            try:
                return await self._task
            except asyncio.CancelledError:
                if not self._stopping or not self._task.cancelled():
                    raise
                return await self._stopped()

    def stop(self) -> None:
        """End the run now, with a progress summary (no model call, no retry)."""
        self._stopping = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    # -- the loop --------------------------------------------------------------------------

    async def _body(self) -> RunResult:
        try:
            async with asyncio.timeout(self.options.timeout) as self._deadline:
                return await self._work()
        except TimeoutError:
            return await self._timed_out()

    async def _work(self) -> RunResult:
        try:
            return await self._turns()
        except ProviderError as exc:
            why = f"The model provider failed: {exc}"
            return self._finish("needs_attention", "provider_error", f"{why}\n\n{self._summary()}")
        except DeskpilotError as exc:  # the screen could not be read, a broken call flow
            why = f"The run could not go on: {exc}"
            return self._finish("needs_attention", "error", f"{why}\n\n{self._summary()}")

    async def _turns(self) -> RunResult:
        format_errors = 0
        self.steps, waiting = await self.acting.begin()
        self.steps = min(self.steps, self.options.max_steps)
        while True:
            if not waiting:
                self._read_inbox()
                if self.steps >= self.options.max_steps:
                    reason = f"The step budget of {self.options.max_steps} steps is used up"
                    answer = await self._last_answer(reason)
                    notice = f"⚠ Step budget reached ({self.options.max_steps} steps)"
                    return self._finish("needs_attention", "budget", f"{notice}.\n\n{answer}")
                self._asking = True  # left set if the time runs out here (see _timed_out)
                reply = await self.acting.ask()
                self._asking = False
                self.steps += 1
                self._count(reply.usage)
                if reply.done:
                    return self._finish("done", "answered", reply.text or "(no answer)")
                if reply.text:
                    self._emit("model.text", {"text": reply.text, "step": self.steps})
            waiting = False
            acted = await self.acting.act(self._held(self.before_call))
            if acted.cancelled:
                return await self._stopped()
            if acted.paused:
                return self._finish(
                    "needs_attention",
                    "paused",
                    (
                        f"Paused before a computer call; the task is not finished.\n"
                        f"{self._summary()}\n{acted.paused}"
                    ),
                )
            format_errors = format_errors + 1 if acted.malformed else 0
            if format_errors >= self.options.max_format_errors:
                why = f"{format_errors} replies in a row held only malformed tool calls."
                return self._finish(
                    "needs_attention", "format_errors", f"{why}\n\n{self._summary()}"
                )

    def _held(self, before_call: BeforeCall | None) -> BeforeCall | None:
        """``before_call`` with the run's clock stopped while it is awaited: a person holding
        the screen (a console's take-over) does not eat the run's time."""
        if before_call is None:
            return None
        hook = before_call

        async def held() -> str | None:
            deadline = self._deadline
            due = deadline.when() if deadline is not None else None
            if deadline is None or due is None:
                return await hook()
            clock = asyncio.get_running_loop()
            start = clock.time()
            deadline.reschedule(None)
            try:
                return await hook()
            finally:
                deadline.reschedule(due + clock.time() - start)

        return held

    def _read_inbox(self) -> None:
        for text in self.inbox.take() if self.inbox else ():
            self._emit("user.message", {"text": text, "step": self.steps})
            self.acting.say(text)

    async def _last_answer(self, reason: str) -> str:
        """One last call without tools, to answer with what the run has."""
        self.acting.say(final_call_note(reason, self.goal, self.constraints))
        try:
            reply = await self.acting.ask(final=True)
        except DeskpilotError as exc:
            log.warning("run %s: the last answer failed: %s", self.run_id, exc)
            return self._summary()
        self._count(reply.usage)
        return reply.text or self._summary()

    async def _timed_out(self) -> RunResult:
        with contextlib.suppress(DeskpilotError):
            await self.acting.close_pending(NOT_RUN_TIMEOUT, fresh=True)
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

    async def _stopped(self) -> RunResult:
        with contextlib.suppress(DeskpilotError):
            await self.acting.close_pending(NOT_RUN_STOPPED, fresh=False)
        answer = (
            f"Stopped by the user after {self.steps} step(s); the task is not finished.\n"
            f"{self._summary()}\n"
            "Ask the user how to proceed. Do not retry this task automatically."
        )
        return self._finish("stopped", "stopped", answer)

    # -- reporting -------------------------------------------------------------------------

    def _summary(self) -> str:
        return self.acting.summary()

    def _count(self, usage: Mapping[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value

    def _finish(self, outcome: Outcome, reason: str, answer: str) -> RunResult:
        self._emit(
            "run.finished",
            {"outcome": outcome, "answer": answer, "steps": self.steps, "reason": reason},
        )
        return RunResult(
            outcome,
            answer,
            reason,
            self.steps,
            self.run_id,
            self.acting.conversation(),
            dict(self.usage),
            self.acting,
        )

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        self.ctx.emit(Event(kind, dict(data), run_id=self.run_id))


async def follow_up(
    previous: RunResult,
    text: str,
    ctx: ToolContext,
    options: RunOptions | None = None,
    *,
    controller: StopController | None = None,
    inbox: Inbox | None = None,
    before_call: BeforeCall | None = None,
) -> RunResult:
    """Continue a finished run in the same context: the model hears ``text`` after everything
    the previous run said and did, and the loop runs again (a new run id; ``ctx.run_id`` is
    ignored)."""
    if previous.acting is None:
        raise ValueError("this result has no way of acting to continue (it was not run here)")
    previous.acting.say(text)
    # policy: the follow-up is the person's own words; it grants what it names
    with persons_goal(dataclasses.replace(ctx, run_id=""), text) as run_ctx:
        run = AgentRun(
            previous.acting,
            run_ctx,
            options,
            goal=text,
            controller=controller,
            inbox=inbox,
            before_call=before_call,
        )
        return await run.run()


def render_progress(lines: Sequence[str], last_text: str, *, empty: str, limit: int = 20) -> str:
    """A progress summary: the last ``limit`` lines (one per call), numbered, and the model's
    last note."""
    if not lines:
        return f"Progress so far: {empty}"
    shown = lines[-limit:]
    skipped = len(lines) - len(shown)
    out = ["Progress so far:"]
    if skipped:
        out.append(f"  ({skipped} earlier step(s) not shown)")
    out += [f"  {i}. {line}" for i, line in enumerate(shown, start=skipped + 1)]
    if last_text:
        out.append(f"Last note from the model: {last_text.strip()[:300]}")
    return "\n".join(out)
