"""The console's sessions: computer-use tasks running in the background, side by side.

A :class:`ConsoleSession` is one task (goal, model, confirm mode, where it runs, an optional
window to bind it to). :class:`Sessions` starts them (up to ``max_live`` at once), runs each as
an asyncio task, and stops them. Every session is opened through the door,
:func:`deskpilot.runtime.open_session` (``surface="console"``): policy and the audit log come
from there; the console adds only its approver (:class:`~deskpilot.serve.approver.
ConsoleApprover`: confirmation cards) and an observer that turns the recorded events into
chips and status for the pages (:class:`~deskpilot.serve.hub.Hub`).

A session bound to a window runs with it as ``ToolContext.fallback_window`` (step 3 of the
window resolution order: used when the model omits windowID and has no tracked target). Every
step of a session leaves a picture in the audit log for the replay (``step_frames``: the
door records a screened frame of its window after each call that took none).

Stop ends a session at once: the run is stopped (its model call and its tool call are
cancelled), confirmations still open are withdrawn, the provider's connection closes, and the
session's place is taken down — its sandbox with every process on it, or on this desktop the
apps it launched (:mod:`deskpilot.serve.places`). It ends as Stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from deskpilot.agent.loop import RunOptions, StopController
from deskpilot.agent.providers import get_provider
from deskpilot.agent.task import computer_use_task, resolve_window
from deskpilot.config import CONFIRM_MODES, ConfirmMode, Settings
from deskpilot.errors import ConfigError, DeskpilotError
from deskpilot.events import Event
from deskpilot.runtime import open_session
from deskpilot.serve.approver import CONFIRM_TIMEOUT, Confirmations, ConsoleApprover
from deskpilot.serve.chips import chip_data
from deskpilot.serve.hub import Hub
from deskpilot.serve.places import TARGETS, Place, Target, open_place
from deskpilot.serve.shared_input import InputLocks
from deskpilot.serve.status import END_STATES, LABELS, State, end_state, status_line
from deskpilot.session import Session

log = logging.getLogger(__name__)

MAX_SESSIONS = 6
FINAL_STATUS = {"done": "Finished", "needs_attention": "Needs your attention", "stopped": "Stopped"}
MAX_GOAL = 4000


class SessionLimit(ConfigError):
    """Too many sessions are running."""


@dataclass
class NewSession:
    """What the console's form (or a script) asks for; :meth:`parse` checks it."""

    goal: str
    model: str
    confirm: ConfirmMode
    target: Target
    window: str | None = None
    max_steps: int | None = None
    #: seconds a confirmation card waits (default: the console's ``--confirm-timeout``)
    confirm_timeout: float | None = None

    @classmethod
    def parse(cls, body: Any, settings: Settings) -> NewSession:
        if not isinstance(body, dict):
            raise ConfigError("expected a JSON object with goal, model, confirm and target")
        goal = str(body.get("goal") or "").strip()
        if not goal:
            raise ConfigError("goal is missing: say what the session should do")
        if len(goal) > MAX_GOAL:
            raise ConfigError(f"goal is too long ({len(goal)} characters, at most {MAX_GOAL})")
        model = str(body.get("model") or settings.model or "").strip()
        if not model:
            raise ConfigError(
                "model is missing: give one (e.g. anthropic:claude-sonnet-4-5) or set `model` "
                f"in {settings.user_config_file}"
            )
        confirm = body.get("confirm") or settings.confirm
        if confirm not in CONFIRM_MODES:
            raise ConfigError(f"confirm must be one of {', '.join(CONFIRM_MODES)}, not {confirm!r}")
        target = body.get("target") or "sandbox"
        if target not in TARGETS:
            raise ConfigError(
                f"target must be 'sandbox' (a new desktop) or 'desktop', not {target!r}"
            )
        window = body.get("window") or None
        if window is not None and not isinstance(window, str):
            raise ConfigError("window must be a window ID such as '1234/56789'")
        if window and target == "sandbox":
            raise ConfigError("a window can only be chosen on this desktop (target 'desktop')")
        steps = body.get("max_steps")
        if steps is not None and (not isinstance(steps, int) or not 1 <= steps <= 1000):
            raise ConfigError("max_steps must be a whole number from 1 to 1000")
        wait = body.get("confirm_timeout")
        if wait is not None and (
            not isinstance(wait, int | float) or isinstance(wait, bool) or not 1 <= wait <= 86400
        ):
            raise ConfigError("confirm_timeout must be a number of seconds from 1 to 86400")
        return cls(goal, model, confirm, target, window, steps, wait)


@dataclass
class ConsoleSession:
    id: str
    goal: str
    model: str
    confirm: str
    target: str  # sandbox | desktop | mcp
    window: str | None = None
    kind: str = "task"  # task | mcp
    state: State = "starting"
    status: str = "Starting"
    answer: str = ""
    reason: str = ""
    run_id: str = ""
    app: str = ""  # the target window's app and title, as last seen
    title: str = ""
    steps: int = 0
    created: float = field(default_factory=time.time)
    ended: float | None = None
    display: str = ""
    controller: StopController = field(default_factory=StopController, repr=False)
    task: asyncio.Task[None] | None = field(default=None, repr=False)
    place: Place | None = field(default=None, repr=False)
    session: Session | None = field(default=None, repr=False)
    #: how a session that is not a task of ours stops (an MCP client's: its host ends it)
    on_stop: Callable[[], Awaitable[None]] | None = field(default=None, repr=False)

    @property
    def stopping(self) -> bool:
        return self.state == "stopping"

    @property
    def live(self) -> bool:
        return self.state not in END_STATES

    def card(self, confirmations: Confirmations) -> dict[str, Any]:
        pending = confirmations.of(self.id)
        return {
            "id": self.id,
            "kind": self.kind,
            "goal": self.goal,
            "model": self.model,
            "confirm": self.confirm,
            "target": self.target,
            "window": self.window,
            "state": "waiting" if pending and self.live else self.state,
            "label": LABELS["waiting" if pending and self.live else self.state],
            "status": self.status,
            "answer": self.answer,
            "reason": self.reason,
            "run_id": self.run_id,
            "app": self.app,
            "title": self.title,
            "steps": self.steps,
            "display": self.display,
            "created": self.created,
            "ended": self.ended,
            "pending": [p.card() for p in pending],
        }

    def bound_window(self) -> str | None:
        """The window the preview shows: the tracked target, else the bound window."""
        if self.session is not None and self.session.target:
            return self.session.target
        return self.window


class Sessions:
    """Every session of the console (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        hub: Hub,
        *,
        max_live: int = MAX_SESSIONS,
        confirm_timeout: float = CONFIRM_TIMEOUT,
        locks: InputLocks | None = None,
    ) -> None:
        self.settings = settings
        self.hub = hub
        self.max_live = max_live
        self.confirm_timeout = confirm_timeout
        self.locks = locks or InputLocks()
        self.all: dict[str, ConsoleSession] = {}
        self.confirmations = Confirmations(self.changed)
        #: called when a session's place is ready and its run starts, and when it has ended
        self.on_running: list[Callable[[ConsoleSession], None]] = []
        self.on_end: list[Callable[[ConsoleSession], None]] = []

    # -- cards ------------------------------------------------------------------------------

    def changed(self, session_id: str) -> None:
        session = self.all.get(session_id)
        if session is not None:
            self.hub.publish(session.id, "session", session.card(self.confirmations))

    def add(self, session: ConsoleSession) -> None:
        self.all[session.id] = session
        self.changed(session.id)

    def live(self) -> list[ConsoleSession]:
        return [s for s in self.all.values() if s.live]

    def get(self, session_id: str) -> ConsoleSession | None:
        return self.all.get(session_id)

    def observer(self, session: ConsoleSession) -> Callable[[Event], None]:
        """The session's observer: each recorded event becomes a chip and a status."""

        def observe(event: Event) -> None:
            if event.kind == "run.started" and not event.data.get("parent_run"):
                session.run_id = session.run_id or event.run_id
            if event.kind == "tool.call":
                session.steps += 1
            self.hub.publish(session.id, "event", chip_data(event), ts=event.ts)
            line = status_line(event.kind, event.data)
            if line is not None and session.live:
                session.status = line
            self.changed(session.id)

        return observe

    # -- starting ---------------------------------------------------------------------------

    def start(self, request: NewSession) -> ConsoleSession:
        if len(self.live()) >= self.max_live:
            raise SessionLimit(
                f"{self.max_live} sessions are running already (the most at once): wait for one "
                "to finish or stop one"
            )
        session = ConsoleSession(
            id=secrets.token_hex(4),
            goal=request.goal,
            model=request.model,
            confirm=request.confirm,
            target=request.target,
            window=request.window,
        )
        self.add(session)
        session.task = asyncio.create_task(
            self._run(session, request), name=f"session-{session.id}"
        )
        return session

    async def _run(self, session: ConsoleSession, request: NewSession) -> None:
        settings = self.settings.with_overrides(confirm=request.confirm)
        outcome, answer, reason = "needs_attention", "", ""
        try:
            async with contextlib.AsyncExitStack() as stack:
                self._status(
                    session,
                    "Starting a sandbox desktop"
                    if request.target == "sandbox"
                    else "Connecting to this desktop",
                )
                place = await stack.enter_async_context(
                    open_place(settings, request.target, self.locks)
                )
                session.place = place
                session.display = place.display
                provider = get_provider(request.model, place.settings)
                await stack.enter_async_context(provider)
                approver = ConsoleApprover(
                    session.id,
                    self.confirmations,
                    lambda: self.hub.watching,
                    timeout=request.confirm_timeout or self.confirm_timeout,
                )
                session.session = Session(name=f"console-{session.id}")
                ctx = await stack.enter_async_context(
                    open_session(
                        place.settings,
                        surface="console",
                        approver=approver,
                        observe=self.observer(session),
                        desktop=place.desktop,
                        session=session.session,
                        label=request.goal,
                    )
                )
                ctx = dataclasses.replace(ctx, step_frames=True)  # a frame per step: the replay
                self.confirmations.track(session.id, ctx.grants)  # listed, revocable
                window = None
                if request.window:
                    window = await resolve_window(ctx, request.window)
                    if window is None:
                        raise ConfigError(f"window {request.window!r} is not open on this desktop")
                    session.window = window
                    ctx = dataclasses.replace(ctx, fallback_window=window)
                session.state = "running"
                self._status(session, "Thinking")
                for hook in self.on_running:
                    hook(session)
                s = ctx.settings
                options = RunOptions(
                    max_steps=request.max_steps or s.max_steps,
                    timeout=s.timeout,
                    tool_protocol=s.tool_protocol,
                )
                result = await computer_use_task(
                    request.goal, window, provider=provider, ctx=ctx,
                    options=options, controller=session.controller,
                )  # fmt: skip
                outcome, answer, reason = result.outcome, result.answer, result.reason
                if session.stopping:
                    outcome = "stopped"
                self._status(session, "Cleaning up")
        except asyncio.CancelledError:
            outcome, reason = "stopped", "stopped"
            answer = answer or "Stopped by the user before the task finished."
        except DeskpilotError as exc:
            outcome, reason, answer = "needs_attention", type(exc).__name__, str(exc)
            session.status = "Could not run"
        except Exception as exc:  # a bug: the card says so, the log has the traceback
            log.exception("console session %s failed", session.id)
            outcome, reason = "needs_attention", "internal_error"
            answer = f"The session failed with an internal error ({type(exc).__name__})."
            session.status = "Could not run"
        finally:
            self.confirmations.cancel_all(session.id)
            if session.stopping:
                outcome = "stopped"
            session.state = end_state(outcome)
            session.answer, session.reason = answer, reason
            if session.status in ("Cleaning up", "Stopping") or session.state != "needs_attention":
                session.status = FINAL_STATUS[session.state]
            session.ended = time.time()
            self.changed(session.id)
            for hook in self.on_end:
                hook(session)

    def _status(self, session: ConsoleSession, text: str) -> None:
        session.status = text
        self.changed(session.id)

    # -- stopping ---------------------------------------------------------------------------

    async def stop(self, session: ConsoleSession, timeout: float = 30.0) -> None:
        """Stop ``session`` and wait until its place is taken down (see the module docstring)."""
        if session.live and session.on_stop is not None:
            await session.on_stop()
            return
        if not session.live or session.task is None:
            return
        if session.state != "stopping":
            session.state = "stopping"
            self._status(session, "Stopping")
        self.confirmations.cancel_all(session.id)
        if not session.controller.stop(pending=True):
            session.task.cancel()  # still starting (no run yet): cancel the start
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(session.task), timeout)
        if not session.task.done():
            session.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await session.task

    async def stop_all(self) -> None:
        await asyncio.gather(*(self.stop(s) for s in self.live() if s.kind == "task"))
