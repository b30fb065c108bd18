"""A goal run through the vendor's native computer tool (``deskpilot run --native`` / ``--hybrid``).

::

    result = await run_native_task(goal, provider=provider, ctx=ctx, hybrid=False)
    result.outcome, result.answer, result.exit_code      # as for the text/function-calling loop

The model sees screenshots and answers with its vendor's computer calls; a
:class:`~deskpilot.native.driver.NativeDriver` runs them through the same ``ToolSet.call`` door
as the element tools (blocked apps, confirmation, audit events and chips per action). With
``hybrid`` the nine element tools are offered as functions next to the computer tool.

The agent loop's rules hold (see :mod:`deskpilot.agent.loop` for the outcome table):

* **step budget** — ``max_steps`` model replies; then one last request with tool use switched
  off and a note to answer with what it has (``needs_attention``, exit 3);
* **timeout** — the run is cancelled; the turn's unanswered calls get "Not run: the task ran out
  of time" and the model gets a short tools-free last call (``needs_attention``);
* **stop** — :meth:`NativeRun.stop` (Ctrl-C through a StopController) or "stop" at a computer
  call's prompt ends the run with a progress summary (``stopped``, exit 4);
* **failures** — the provider failing (``provider_error``), or the screen becoming unreadable
  (``error``), end the run with the error and a progress summary (``needs_attention``);
* **image pruning** — only the newest images of a resent history go to the model;
* **pause** — "pause" at a computer call's prompt saves a checkpoint (the driver's state, the
  plan, a replay's position) under ``state_dir/native-runs/``; :func:`resume_native_task`
  (``deskpilot run --resume FILE``) carries on with the same run id (``needs_attention``).

Events: ``run.started`` / ``run.finished`` as in the loop; ``model.text``, ``tool.*`` and
``confirm.*`` from the driver and the ToolSet, written to the audit log as they are (one
``computer_call`` per model computer call, its actions nested under it);
:class:`~deskpilot.agent.native_setup.RunEvents` watches them for the progress summary.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deskpilot.agent.conversation import Conversation as NeutralConversation
from deskpilot.agent.loop import (
    NOT_RUN_TIMEOUT,
    Outcome,
    RunOptions,
    RunResult,
    StopController,
    StoppableRun,
)
from deskpilot.agent.native_setup import (
    RunEvents,
    native_system_prompt,
    native_target,
    provider_send,
)
from deskpilot.agent.native_wire import final_request, prune_images, without_calls
from deskpilot.agent.prompts import final_call_note, gather_context, negative_constraints
from deskpilot.agent.providers.base import Provider
from deskpilot.agent.providers.scripted import ScriptedProvider
from deskpilot.agent.session_store import write_json
from deskpilot.agent.task import computer_use_toolset, default_options, resolve_window
from deskpilot.errors import ConfigError, DeskpilotError, ProviderError
from deskpilot.events import Event, Fanout
from deskpilot.native.calls import ComputerCall, FunctionResult, ScreenshotRef
from deskpilot.native.driver import NativeDriver, Send, open_conversation
from deskpilot.native.driver import RunResult as DriverResult
from deskpilot.native.executor import NativeExecutor
from deskpilot.native.scaling import Vendor
from deskpilot.native.vendors.base import Conversation, parse_turn
from deskpilot.tools.context import ToolContext, persons_goal
from deskpilot.tools.toolset import ToolSet

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 1


@dataclass
class NativePlan:
    """What a native run is (saved with a pause checkpoint, so it resumes the same way)."""

    goal: str
    vendor: Vendor
    model: str
    spec: str  # the provider:model that ran it
    hybrid: bool = False
    window: str | None = None
    system: str = ""
    constraints: list[str] = field(default_factory=list)
    run_id: str = ""


class NativeRun(StoppableRun):
    """One native run (see the module docstring)."""

    def __init__(
        self,
        plan: NativePlan,
        provider: Provider,
        ctx: ToolContext,
        *,
        tools: ToolSet | None = None,
        options: RunOptions | None = None,
        controller: StopController | None = None,
        send: Send | None = None,
        checkpoint: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(options or default_options(ctx), controller)
        self.plan = plan
        self.provider = provider
        self.run_id = plan.run_id = plan.run_id or uuid.uuid4().hex[:16]
        self.events = RunEvents()  # watches what was recorded, for the progress summary
        self.ctx = dataclasses.replace(
            ctx, run_id=self.run_id, observe=Fanout(ctx.observe, self.events)
        )
        self.toolset = computer_use_toolset(tools)
        self.post = send or provider_send(provider)
        self.checkpoint = checkpoint
        self.driver: NativeDriver | None = None
        self._sent = int(checkpoint["checkpoint"].get("turns", 0)) if checkpoint else 0
        self.steps = min(self._sent, self.options.max_steps)
        self._final = False
        self._last_body: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        """The model as shown: ``native · openai:gpt-5.4`` (``hybrid · …`` with element tools)."""
        return f"{'hybrid' if self.plan.hybrid else 'native'} · {self.provider.label}"

    async def run(self) -> RunResult:
        self._emit("run.started", {
            "goal": self.plan.goal, "model": self.label, "window": self.plan.window,
            "max_steps": self.options.max_steps, "timeout": self.options.timeout,
            "tool_protocol": "native", "mode": "hybrid" if self.plan.hybrid else "native",
            **({"resumed": True} if self.checkpoint else {}),
        })  # fmt: skip
        self.ctx.grants.announce()  # what the person's goal allows: recorded once, here
        return await self._run_stoppable()

    # -- the run -----------------------------------------------------------------------------

    async def _work(self) -> RunResult:
        plan = self.plan
        try:
            conv = await open_conversation(
                plan.vendor, plan.model, self.ctx, window=plan.window,
                functions=self.toolset.list() if plan.hybrid else (), instructions=plan.system,
            )  # fmt: skip
            self.driver = driver = NativeDriver(
                conv, NativeExecutor(self.toolset, self.ctx), self._send,
                functions=self.toolset if plan.hybrid else None,
                max_turns=self.options.max_steps + 1,
            )  # fmt: skip
            if self.checkpoint is not None:
                result = await driver.resume(self.checkpoint["checkpoint"])
            else:
                result = await driver.run(plan.goal)
        except ProviderError as exc:
            return self._failed("provider_error", f"The model provider failed: {exc}")
        except DeskpilotError as exc:  # the screen could not be read, a broken call/result flow
            return self._failed("error", f"The run could not go on: {exc}")
        return self._outcome(result)

    async def _send(self, conv: Conversation, body: dict[str, Any]) -> Mapping[str, Any]:
        self._last_body = body
        self._sent += 1
        if self._sent > self.options.max_steps:
            reason = f"The step budget of {self.options.max_steps} steps is used up"
            body = final_request(conv.vendor, body, self._note(reason))
            self._final = True
        reply = await self.post(conv, prune_images(conv.vendor, body, self.provider.keep_images))
        self.steps = min(self._sent, self.options.max_steps)
        return without_calls(conv.vendor, reply) if self._final else reply

    def _outcome(self, result: DriverResult) -> RunResult:
        if result.status == "cancelled":
            return self._stopped()
        if result.status == "paused":
            path = self._save()
            return self._finish("needs_attention", "paused", (
                f"Paused before a computer call; the task is not finished.\n{self._summary()}\n"
                f"Resume with: deskpilot run --resume {path}"))  # fmt: skip
        if result.status == "done" and not self._final:
            return self._finish("done", "answered", result.text or "(no answer)")
        notice = f"⚠ Step budget reached ({self.options.max_steps} steps)"
        return self._finish("needs_attention", "budget",
                            f"{notice}.\n\n{result.text or self._summary()}")  # fmt: skip

    async def _timed_out(self) -> RunResult:
        limit = f"{self.options.timeout:g} s"
        answer = ""
        try:
            async with asyncio.timeout(self.options.grace):
                answer = await self._last_words(f"Time is up: the {limit} limit was reached")
        except (TimeoutError, DeskpilotError) as exc:
            log.warning("run %s: the last answer failed: %s", self.run_id, exc)
        notice = f"⏱ Timed out after {limit} — the task may be only partially complete."
        return self._finish(
            "needs_attention", "timeout", f"{notice}\n\n{answer or self._summary()}"
        )

    async def _last_words(self, reason: str) -> str:
        """A tools-free last call after a timeout, with the interrupted turn answered."""
        driver = self.driver
        if driver is None:
            return ""
        conv, session = driver.conv, driver.session
        body = self._last_body
        if session is not None:
            for index, item in enumerate(list(session.items)):
                if index in session.answers or session.state != "open":
                    continue
                if isinstance(item, ComputerCall):
                    shot = await self._screen(driver) if conv.screenshot_every_call else None
                    session.fail(item.call_id, NOT_RUN_TIMEOUT, screenshot=shot)
                else:
                    session.submit_function(FunctionResult(item.call_id, NOT_RUN_TIMEOUT, True))
            body = conv.reply(session.results())
            driver.session = None
        if body is None:
            return ""
        final = final_request(conv.vendor, body, self._note(reason))
        reply = await self.post(conv, prune_images(conv.vendor, final, self.provider.keep_images))
        return parse_turn(conv, without_calls(conv.vendor, reply)).text

    async def _screen(self, driver: NativeDriver) -> ScreenshotRef:
        shot = await driver.executor.capture(window=driver.conv.window, call_id="native.end")
        return ScreenshotRef(data=driver.conv.viewport.encode(shot.data))

    def _note(self, reason: str) -> str:
        return final_call_note(reason, self.plan.goal, self.plan.constraints)

    # -- endings -----------------------------------------------------------------------------

    def _failed(self, reason: str, why: str) -> RunResult:
        return self._finish("needs_attention", reason, f"{why}\n\n{self._summary()}")

    def _stopped(self) -> RunResult:
        answer = (
            f"Stopped by the user after {self.steps} step(s); the task is not finished.\n"
            f"{self._summary()}\n"
            "Ask the user how to proceed. Do not retry this task automatically."
        )
        return self._finish("stopped", "stopped", answer)

    def _finish(self, outcome: Outcome, reason: str, answer: str) -> RunResult:
        data = {"outcome": outcome, "answer": answer, "steps": self.steps, "reason": reason}
        self._emit("run.finished", data)
        conversation = NeutralConversation(system=self.plan.system)
        conversation.add_user(self.plan.goal)
        return RunResult(outcome, answer, reason, self.steps, self.run_id, conversation)

    def _save(self) -> Path:
        assert self.driver is not None
        data: dict[str, Any] = {
            "deskpilot_native_run": CHECKPOINT_FORMAT,
            "plan": dataclasses.asdict(self.plan),
            "checkpoint": self.driver.checkpoint(),
        }
        if isinstance(self.provider, ScriptedProvider):
            data["replay_position"] = self.provider.position
        path = self.ctx.settings.state_dir / "native-runs" / f"{self.run_id}.json"
        write_json(path, data, prefix=".native-run-")
        return path

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        self.ctx.emit(Event(kind, data, run_id=self.run_id))

    def _summary(self) -> str:
        return self.events.summary()


# -- entry points -----------------------------------------------------------------------------


async def run_native_task(
    goal: str,
    window_id: str | None = None,
    *,
    provider: Provider,
    ctx: ToolContext,
    tools: ToolSet | None = None,
    options: RunOptions | None = None,
    hybrid: bool = False,
    controller: StopController | None = None,
    send: Send | None = None,
) -> RunResult:
    """Run ``goal`` through ``provider``'s native computer tool (``hybrid``: plus the nine
    element tools). Raises ProviderNotConfigured when the provider has no native computer tool.
    With ``window_id`` the target is that window (coordinates relative to it)."""
    vendor, model = native_target(provider)
    window = None
    if window_id:
        window = await resolve_window(ctx, window_id) or window_id
        ctx.session.target = window
    live = await gather_context(ctx, window)
    constraints = negative_constraints(goal)
    with persons_goal(ctx, goal) as task_ctx:  # the person's goal grants what it names
        plan = NativePlan(goal, vendor, model, provider.spec, hybrid, window,
                          native_system_prompt(live, constraints, hybrid=hybrid),
                          constraints, run_id=task_ctx.run_id)  # fmt: skip
        run = NativeRun(plan, provider, task_ctx, tools=tools, options=options,
                        controller=controller, send=send)  # fmt: skip
        return await run.run()


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A paused native run saved by :class:`NativeRun` (ConfigError if it is not one)."""
    try:
        data = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the checkpoint {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} is not a paused deskpilot run ({exc})") from exc
    if not isinstance(data, dict) or data.get("deskpilot_native_run") != CHECKPOINT_FORMAT:
        raise ConfigError(f"{path} is not a paused deskpilot native run")
    if not isinstance(data.get("plan"), dict) or not isinstance(data.get("checkpoint"), dict):
        raise ConfigError(f"{path} is a damaged checkpoint (no plan or no saved turn)")
    return data


async def resume_native_task(
    checkpoint: Mapping[str, Any],
    *,
    provider: Provider,
    ctx: ToolContext,
    tools: ToolSet | None = None,
    options: RunOptions | None = None,
    controller: StopController | None = None,
    send: Send | None = None,
) -> RunResult:
    """Carry on with a paused run (:func:`load_checkpoint`) under the same run id."""
    try:
        plan = NativePlan(**checkpoint["plan"])
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"the paused run's checkpoint is damaged ({exc!r})") from exc
    vendor, model = native_target(provider)
    if (vendor, model) != (plan.vendor, plan.model):
        raise ConfigError(
            f"the paused run used {plan.spec}; resume it with --model {plan.spec}, "
            f"not {provider.spec}"
        )
    if isinstance(provider, ScriptedProvider):
        provider.position = int(checkpoint.get("replay_position", provider.position))
    if plan.window:
        ctx.session.target = plan.window
    task = dataclasses.replace(ctx, run_id=plan.run_id) if plan.run_id else ctx
    with persons_goal(task, plan.goal) as task_ctx:
        run = NativeRun(plan, provider, task_ctx, tools=tools, options=options,
                        controller=controller, send=send, checkpoint=checkpoint)  # fmt: skip
        return await run.run()


__all__ = [
    "NativePlan",
    "NativeRun",
    "load_checkpoint",
    "resume_native_task",
    "run_native_task",
]
