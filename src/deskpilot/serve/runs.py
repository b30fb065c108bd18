"""The runs of one console session: the first on its goal, then each continuation.

A session is one context on one desktop. Its first run works on the goal; when it ends, the
person may write again and the next run carries on **in the same conversation** (the model
sees the goal, everything it did and answered, and then the new message), on the same desktop,
with the same tools, model and settings (:func:`deskpilot.agent.loop.follow_up`). Every run
takes the session's :class:`~deskpilot.serve.inbox.Inbox` as its ``inbox`` and ``before_call``
hooks, so messages written while it works reach its next model turn and a take-over holds it.

How a run works is the session's per-run settings (:class:`RunSettings`, from the form): step
budget, timeout, tool protocol (``native`` function calling or the ``text`` protocol), and
mode — the element tools (the default), or the provider's native computer tool (``native``, or
``hybrid`` with the element tools beside it). A native run's history is the vendor's own
conversation, kept by its way of acting; the next run goes on in it with a fresh screenshot.
Only when the first run never got going does the next start afresh, with a first message that
recalls the earlier requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from deskpilot.agent.conversation import ToolProtocol
from deskpilot.agent.loop import RunOptions, RunResult, StopController, follow_up
from deskpilot.agent.providers.base import Provider
from deskpilot.agent.task import computer_use_task
from deskpilot.config import Settings
from deskpilot.errors import ConfigError
from deskpilot.serve.inbox import Inbox
from deskpilot.tools.context import ToolContext

Mode = Literal["elements", "native", "hybrid"]
MODES: tuple[Mode, ...] = ("elements", "native", "hybrid")
PROTOCOLS: tuple[str, ...] = ("native", "text")

#: What a message written to a running session is prefixed with, for the model.
WHILE_RUNNING = "Message from the user while you work: "
#: …and one sent with "Interrupt" (the run was stopped to read it).
INTERRUPTED = "The user interrupted you. Their message: "


@dataclass(frozen=True)
class RunSettings:
    """How each run of a session works (see the module docstring)."""

    max_steps: int
    timeout: float
    tool_protocol: ToolProtocol | None = None
    mode: Mode = "elements"

    @classmethod
    def parse(cls, body: dict[str, Any], settings: Settings) -> RunSettings:
        """From a new-session request (missing fields: the console's settings)."""
        steps = body.get("max_steps")
        if steps is not None and (
            not isinstance(steps, int) or isinstance(steps, bool) or not 1 <= steps <= 1000
        ):
            raise ConfigError("max_steps must be a whole number from 1 to 1000")
        timeout = body.get("timeout")
        if timeout is not None and (
            not isinstance(timeout, int | float)
            or isinstance(timeout, bool)
            or not 10 <= timeout <= 86400
        ):
            raise ConfigError("timeout must be a number of seconds from 10 to 86400")
        protocol = body.get("tool_protocol") or None
        if protocol is not None and protocol not in PROTOCOLS:
            raise ConfigError(
                f"tool_protocol must be 'native' (function calling) or 'text', not {protocol!r}"
            )
        mode = body.get("mode") or "elements"
        if mode not in MODES:
            raise ConfigError(
                f"mode must be 'elements', 'native' or 'hybrid' (native computer use), not {mode!r}"
            )
        return cls(
            steps or settings.max_steps,
            float(timeout or settings.timeout),
            protocol or settings.tool_protocol,
            mode,
        )

    def options(self) -> RunOptions:
        return RunOptions(
            max_steps=self.max_steps, timeout=self.timeout, tool_protocol=self.tool_protocol
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_steps": self.max_steps,
            "timeout": self.timeout,
            "tool_protocol": self.tool_protocol,
            "mode": self.mode,
        }


class SessionRuns:
    """Starts a session's runs (see the module docstring)."""

    def __init__(
        self,
        provider: Provider,
        ctx: ToolContext,
        settings: RunSettings,
        *,
        window: str | None,
        controller: StopController,
        inbox: Inbox,
    ) -> None:
        self.provider = provider
        self.ctx = ctx
        self.settings = settings
        self.window = window
        self.controller = controller
        self.inbox = inbox
        self.last: RunResult | None = None
        self.said: list[tuple[str, str]] = []  # (what the person asked, what the run answered)

    async def first(self, goal: str) -> RunResult:
        result = await self._start(goal)
        self.said.append((goal, result.answer))
        return result

    async def next(self, message: str) -> RunResult:
        """Carry on with ``message`` in the same context (see the module docstring)."""
        last = self.last
        if last is None or last.acting is None:  # the first run never got going: start afresh
            result = await self._start(self._recall(message) if self.said else message)
        else:
            result = await follow_up(
                last,
                message,
                self.ctx,
                self.settings.options(),
                controller=self.controller,
                inbox=self.inbox,
                before_call=self.inbox.before_call,
            )
            self.last = result
        self.said.append((message, result.answer))
        return result

    async def _start(self, goal: str) -> RunResult:
        options = self.settings.options()
        if self.settings.mode == "elements":
            result = await computer_use_task(
                goal,
                self.window,
                provider=self.provider,
                ctx=self.ctx,
                options=options,
                controller=self.controller,
                inbox=self.inbox,
                before_call=self.inbox.before_call,
            )
        else:
            from deskpilot.agent.native_run import run_native_task

            result = await run_native_task(
                goal,
                self.window,
                provider=self.provider,
                ctx=self.ctx,
                options=options,
                hybrid=self.settings.mode == "hybrid",
                controller=self.controller,
                inbox=self.inbox,
                before_call=self.inbox.before_call,
            )
        self.last = result
        return result

    def _recall(self, message: str) -> str:
        lines = ["This continues earlier work on this same desktop."]
        for n, (asked, answer) in enumerate(self.said, 1):
            lines += [f"Request {n}: {asked}", f"Your answer {n}: {answer.strip()[:2000]}"]
        lines += ["", f"Now: {message}"]
        return "\n".join(lines)
