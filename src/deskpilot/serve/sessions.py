"""The console's sessions: computer-use tasks running in the background, side by side.

A :class:`ConsoleSession` is one context (goal, model, confirm mode, per-run settings, where it
runs, an optional window to bind it to) on one desktop. :class:`Sessions` starts them (up to
``max_live`` running at once), runs each as an asyncio task, and stops them. Every session is
opened through the door, :func:`deskpilot.runtime.open_session` (``surface="console"``): policy
and the audit log come from there; the console adds only its approver
(:class:`~deskpilot.serve.approver.ConsoleApprover`: confirmation cards), an observer that
turns the recorded events into chips and status for the pages
(:class:`~deskpilot.serve.hub.Hub`), and a meter on the model's HTTP client
(:mod:`deskpilot.serve.metering`: tokens, cost and the raw exchange of every step, the usage
recorded as ``model.usage`` events).

A session bound to a window runs with it as ``ToolContext.fallback_window`` (step 3 of the
window resolution order: used when the model omits windowID and has no tracked target). Every
step of a session leaves a picture in the audit log for the replay (``step_frames``: the
door records a screened frame of its window after each call that took none).

Talking to a session (:meth:`Sessions.message`):

* while it runs, a message reaches the model's next turn (the run's
  :class:`~deskpilot.serve.inbox.Inbox`); with ``interrupt`` the run is stopped at once (its
  model call or tool call cancelled) and carries on with the message, in the same context;
* when its run has ended, its desktop is kept (``keep`` seconds, default 10 minutes, or until
  closed) and a message continues it in the same context on the same desktop
  (:mod:`deskpilot.serve.runs`); "run again" starts a new session with the same request.

Take over (:mod:`deskpilot.serve.takeover`) pauses the session's agent and hands the page's
pointer and keyboard to the person, on the session's own desktop, through its display's input
lock.

Stop ends a session at once: the run is stopped (its model call and its tool call are
cancelled), confirmations still open are withdrawn, the provider's connection closes, and the
session's place is taken down — its sandbox with every process on it, or on this desktop the
apps it launched (:mod:`deskpilot.serve.places`). It ends as Stopped. Stop on a finished
session closes the desktop it kept.
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

from deskpilot.agent.loop import RunResult, StopController
from deskpilot.agent.providers import get_provider
from deskpilot.agent.task import stable_window_id
from deskpilot.config import CONFIRM_MODES, ConfirmMode, Settings
from deskpilot.errors import ConfigError, DeskpilotError
from deskpilot.events import Event
from deskpilot.runtime import open_session
from deskpilot.serve.approver import CONFIRM_TIMEOUT, Confirmations, ConsoleApprover
from deskpilot.serve.chips import chip_data
from deskpilot.serve.hub import Hub
from deskpilot.serve.inbox import Inbox
from deskpilot.serve.metering import Exchange, Exchanges, MeteredHttp
from deskpilot.serve.places import TARGETS, Place, Target, open_place
from deskpilot.serve.prices import PriceTable, Tokens
from deskpilot.serve.runs import INTERRUPTED, WHILE_RUNNING, RunSettings, SessionRuns
from deskpilot.serve.shared_input import InputLocks, shared
from deskpilot.serve.status import END_STATES, LABELS, State, end_state, status_line
from deskpilot.serve.takeover import TakeOver
from deskpilot.session import Session
from deskpilot.tools.context import ToolContext

log = logging.getLogger(__name__)

MAX_SESSIONS = 6
FINAL_STATUS = {"done": "Finished", "needs_attention": "Needs your attention", "stopped": "Stopped"}
MAX_GOAL = 4000
MAX_MESSAGE = 4000
#: Seconds a finished session keeps its desktop for a follow-up (``--keep-finished``).
KEEP_FINISHED = 600.0


class SessionLimit(ConfigError):
    """Too many sessions are running."""


class SessionClosed(ConfigError):
    """The session's desktop is closed: it cannot take a message or be taken over."""


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
    #: how each run works: steps, timeout, tool protocol, mode (None: the console's settings)
    run: RunSettings | None = None

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
            raise ConfigError(
                "a window can only be chosen on this desktop (target 'desktop'): a sandbox is "
                "a new desktop, none of whose windows exist yet"
            )
        run = RunSettings.parse(body, settings)
        wait = body.get("confirm_timeout")
        if wait is not None and (
            not isinstance(wait, int | float) or isinstance(wait, bool) or not 1 <= wait <= 86400
        ):
            raise ConfigError("confirm_timeout must be a number of seconds from 1 to 86400")
        return cls(goal, model, confirm, target, window, body.get("max_steps"), wait, run)

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "model": self.model,
            "confirm": self.confirm,
            "target": self.target,
            "window": self.window,
            "confirm_timeout": self.confirm_timeout,
            **(self.run.as_dict() if self.run else {}),
        }


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
    run_id: str = ""  # the first run's (the audit log's id of the session's goal)
    app: str = ""  # the target window's app and title, as last seen
    title: str = ""
    steps: int = 0  # model steps of the finished runs (an MCP client's: its tool calls)
    created: float = field(default_factory=time.time)
    ended: float | None = None
    display: str = ""
    request: NewSession | None = field(default=None, repr=False)
    runs: list[str] = field(default_factory=list)  # every run's id, in order
    active_run: str = ""  # the run going on now
    run_steps: int = 0  # model steps of the run going on (its replies so far)
    calls: int = 0  # tool calls, all runs
    tokens: Tokens = field(default_factory=Tokens)
    #: seconds since the epoch until which the finished session keeps its desktop
    kept_until: float | None = None
    closed: bool = False  # its desktop is closed: no more runs
    controller: StopController = field(default_factory=StopController, repr=False)
    inbox: Inbox = field(default_factory=Inbox, repr=False)
    exchanges: Exchanges = field(default_factory=Exchanges, repr=False)
    takeover: TakeOver | None = field(default=None, repr=False)
    task: asyncio.Task[None] | None = field(default=None, repr=False)
    place: Place | None = field(default=None, repr=False)
    session: Session | None = field(default=None, repr=False)
    ctx: ToolContext | None = field(default=None, repr=False)
    #: how a session that is not a task of ours stops (an MCP client's: its host ends it)
    on_stop: Callable[[], Awaitable[None]] | None = field(default=None, repr=False)
    #: messages that continue a finished session (None: close it)
    mailbox: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue, repr=False)
    interrupt: str | None = field(default=None, repr=False)

    @property
    def stopping(self) -> bool:
        return self.state == "stopping"

    @property
    def live(self) -> bool:
        return self.state not in END_STATES

    @property
    def open(self) -> bool:
        """Whether its task still holds its desktop (running, or finished and kept)."""
        return self.task is not None and not self.task.done() and not self.closed

    @property
    def kept(self) -> bool:
        return not self.live and self.kept_until is not None and self.open

    def all_steps(self) -> int:
        return self.steps + self.run_steps

    def shown_state(self, confirmations: Confirmations) -> str:
        if self.live and confirmations.of(self.id):
            return "waiting"
        if self.live and self.takeover is not None and self.takeover.active:
            return "taken_over"
        return self.state

    def card(
        self, confirmations: Confirmations, prices: PriceTable | None = None
    ) -> dict[str, Any]:
        pending = confirmations.of(self.id)
        shown = self.shown_state(confirmations)
        cost = prices.cost(self.model, self.tokens) if prices is not None else None
        over = self.takeover
        return {
            "id": self.id,
            "kind": self.kind,
            "goal": self.goal,
            "model": self.model,
            "confirm": self.confirm,
            "target": self.target,
            "window": self.window,
            "state": shown,
            "label": LABELS[shown],
            "status": self.status,
            "answer": self.answer,
            "reason": self.reason,
            "run_id": self.run_id,
            "runs": list(self.runs),
            "app": self.app,
            "title": self.title,
            "steps": self.all_steps(),
            "calls": self.calls,
            "tokens": self.tokens.as_dict(),
            "cost": cost,
            "display": self.display,
            "created": self.created,
            "ended": self.ended,
            "pending": [p.card() for p in pending],
            "settings": self.request.as_dict() if self.request is not None else None,
            "kept": self.kept,
            "kept_until": self.kept_until if self.kept else None,
            "messages_waiting": self.inbox.waiting,
            "taken_over": bool(over and over.active),
            "takeover": {
                "allowed": bool(over and over.allowed and self.open),
                "why_not": self._why_not_take_over(),
            },
        }

    def _why_not_take_over(self) -> str:
        if self.kind != "task":
            return "an MCP client's session is driven by the client"
        if self.takeover is not None and self.takeover.why_not:
            return self.takeover.why_not
        return "" if self.open or self.takeover is None else "this session's desktop is closed"

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
        keep: float = KEEP_FINISHED,
        takeover_here: bool = False,
        prices: PriceTable | None = None,
    ) -> None:
        self.settings = settings
        self.hub = hub
        self.max_live = max_live
        self.confirm_timeout = confirm_timeout
        self.locks = locks or InputLocks()
        self.keep = keep
        self.takeover_here = takeover_here
        self.prices = prices or PriceTable(settings.config_dir / "prices.toml")
        self.all: dict[str, ConsoleSession] = {}
        self.confirmations = Confirmations(self.changed)
        #: called when a run of a session starts (its place is ready), and when it has ended
        self.on_running: list[Callable[[ConsoleSession], None]] = []
        self.on_end: list[Callable[[ConsoleSession], None]] = []
        #: called when a session's place is about to be taken down (it runs no more)
        self.on_close: list[Callable[[ConsoleSession], None]] = []

    # -- cards ------------------------------------------------------------------------------

    def card(self, session: ConsoleSession) -> dict[str, Any]:
        return session.card(self.confirmations, self.prices)

    def changed(self, session_id: str) -> None:
        session = self.all.get(session_id)
        if session is not None:
            self.hub.publish(session.id, "session", self.card(session))

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
            task = session.kind == "task"
            if event.kind == "run.started" and not event.data.get("parent_run"):
                session.run_id = session.run_id or event.run_id
                session.runs.append(event.run_id)
                session.active_run, session.run_steps = event.run_id, 0
            elif event.kind == "run.finished" and event.run_id == session.active_run and task:
                # the run's own count (model replies), as the audit log has it
                steps = event.data.get("steps")
                session.steps += steps if isinstance(steps, int) else session.run_steps
                session.active_run, session.run_steps = "", 0
            if event.kind == "tool.call":
                session.calls += 1
                if not task:  # an MCP client has no model steps: its calls are its steps
                    session.steps += 1
            data = chip_data(event)
            if event.kind == "model.usage":
                used = event.data.get("tokens")
                if isinstance(used, dict):
                    data["data"]["cost"] = self.prices.cost(session.model, Tokens(**used))
            self.hub.publish(session.id, "event", data, ts=event.ts)
            line = status_line(event.kind, event.data)
            if line is not None and session.live:
                session.status = line
            self.changed(session.id)

        return observe

    def _record(self, session: ConsoleSession, kind: str, data: dict[str, Any]) -> None:
        """An event of the console's own (usage, take-over) into the session's audit log."""
        if session.ctx is not None:
            session.ctx.emit(Event(kind, data, run_id=session.active_run))

    def _exchange(self, session: ConsoleSession, exchange: Exchange) -> None:
        exchange.run_id = session.active_run
        session.exchanges.add(exchange)
        if not exchange.error:
            session.tokens = session.tokens + exchange.tokens
            if session.active_run:
                session.run_steps += 1
        self._record(
            session,
            "model.usage",
            {
                "exchange": exchange.n,
                "model": session.model,
                "usage": exchange.usage,
                "tokens": exchange.tokens.as_dict(),
                "ms": round(exchange.ms),
                **({"error": exchange.error[:500]} if exchange.error else {}),
            },
        )

    # -- starting ---------------------------------------------------------------------------

    def start(self, request: NewSession) -> ConsoleSession:
        if len(self.live()) >= self.max_live:
            raise SessionLimit(
                f"{self.max_live} sessions are running already (the most at once): wait for one "
                "to finish or stop one"
            )
        self._make_room()
        if request.run is None:
            request.run = RunSettings.parse({}, self.settings)
        session = ConsoleSession(
            id=secrets.token_hex(4),
            goal=request.goal,
            model=request.model,
            confirm=request.confirm,
            target=request.target,
            window=request.window,
            request=request,
        )
        self.add(session)
        session.task = asyncio.create_task(
            self._run(session, request), name=f"session-{session.id}"
        )
        return session

    def again(self, session: ConsoleSession) -> ConsoleSession:
        """A new session with ``session``'s goal and settings (on a new desktop if it had one)."""
        if session.request is None:
            raise ConfigError("only a task started here can be run again")
        return self.start(dataclasses.replace(session.request))

    def _make_room(self) -> None:
        """Close the desktop kept longest by a finished session when every place is taken."""
        kept = sorted((s for s in self.all.values() if s.kept), key=lambda s: s.ended or 0)
        holding = len(self.live()) + len(kept)
        for session in kept[: max(0, holding - self.max_live + 1)]:
            session.mailbox.put_nowait(None)

    async def _run(self, session: ConsoleSession, request: NewSession) -> None:
        settings = self.settings.with_overrides(confirm=request.confirm)
        assert request.run is not None
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
                stack.callback(self._closing, session)  # before the place is taken down
                provider = get_provider(request.model, place.settings)
                provider.http = MeteredHttp(provider.http, lambda x: self._exchange(session, x))
                await stack.enter_async_context(provider)
                approver = ConsoleApprover(
                    session.id,
                    self.confirmations,
                    lambda: self.hub.watching,
                    timeout=request.confirm_timeout or self.confirm_timeout,
                )
                session.session = Session(name=f"console-{session.id}")
                # raw input through the display's lock, which a take-over's input takes too
                desktop = (
                    place.desktop
                    if place.target == "desktop"
                    else (shared(place.desktop, self.locks.of(place.display)))
                )
                ctx = await stack.enter_async_context(
                    open_session(
                        place.settings,
                        surface="console",
                        approver=approver,
                        observe=self.observer(session),
                        desktop=desktop,
                        session=session.session,
                        label=request.goal,
                    )
                )
                ctx = dataclasses.replace(ctx, step_frames=True)  # a frame per step: the replay
                session.ctx = ctx
                session.takeover = self._takeover(session, place, desktop)
                self.confirmations.track(session.id, ctx.grants)  # listed, revocable
                window = None
                if request.window:
                    window = await stable_window_id(ctx, request.window)
                    if window is None:
                        raise ConfigError(f"window {request.window!r} is not open on this desktop")
                    session.window = window
                    ctx = dataclasses.replace(ctx, fallback_window=window)
                    session.ctx = ctx
                runs = SessionRuns(
                    provider,
                    ctx,
                    request.run,
                    window=window,
                    controller=session.controller,
                    inbox=session.inbox,
                )
                message: str | None = None
                while True:
                    outcome, answer, reason = await self._one_run(session, runs, message)
                    if session.stopping:
                        break
                    message = session.interrupt
                    session.interrupt = None
                    if message is None and session.inbox.waiting and not session.inbox.paused:
                        # written as the run ended: it reads them now rather than never
                        message = "\n\n".join(session.inbox.take())
                    if message is not None:
                        continue
                    self._ended(session, outcome, answer, reason)
                    message = await self._next_message(session)
                    if message is None:
                        break
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
            session.closed, session.kept_until = True, None
            if session.live:
                self._ended(session, outcome, answer, reason)
            elif session.status == "Cleaning up":
                session.status = FINAL_STATUS[session.state]
            self.changed(session.id)

    async def _one_run(
        self, session: ConsoleSession, runs: SessionRuns, message: str | None
    ) -> tuple[str, str, str]:
        """One run (the goal's, or a continuation with ``message``): (outcome, answer, reason)."""
        session.state, session.kept_until, session.ended = "running", None, None
        self._status(session, "Thinking")
        for hook in self.on_running:
            hook(session)
        try:
            result: RunResult = await (
                runs.first(session.goal) if message is None else runs.next(message)
            )
        except DeskpilotError as exc:  # this run could not go on; the desktop stays
            session.status = "Could not run"
            return "needs_attention", type(exc).__name__, str(exc)
        if session.stopping:
            return "stopped", result.answer, "stopped"
        return result.outcome, result.answer, result.reason

    def _ended(self, session: ConsoleSession, outcome: str, answer: str, reason: str) -> None:
        """A run ended (and no other follows at once): the card says how, the hooks run."""
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

    async def _next_message(self, session: ConsoleSession) -> str | None:
        """Keep the desktop until a message continues the session; None: close it."""
        if self.keep <= 0:
            return None
        session.kept_until = time.time() + self.keep
        self.changed(session.id)
        try:
            async with asyncio.timeout(self.keep):
                return await session.mailbox.get()
        except TimeoutError:
            return None
        finally:
            session.kept_until = None

    def _closing(self, session: ConsoleSession) -> None:
        session.closed = True
        if session.takeover is not None and session.takeover.active:
            session.takeover.since = None  # its desktop goes: nothing to hand back
        for hook in self.on_close:
            hook(session)

    def _takeover(self, session: ConsoleSession, place: Place, desktop: Any) -> TakeOver:
        here = place.target == "desktop"
        why = (
            "taking over this desktop from the console is off: start `deskpilot serve "
            "--takeover-here` to allow it (you would drive your own screen from the page)"
        )
        refused = here and not self.takeover_here
        return TakeOver(
            desktop,
            session.inbox,
            lambda kind, data: self._record(session, kind, data),
            allowed=not refused,
            why_not=why if refused else "",
        )

    def _status(self, session: ConsoleSession, text: str) -> None:
        session.status = text
        self.changed(session.id)

    # -- talking to a session ---------------------------------------------------------------

    def message(self, session: ConsoleSession, text: str, *, interrupt: bool = False) -> str:
        """A message from the person (see the module docstring); how it was taken:
        ``queued`` (for the next turn), ``interrupted`` or ``continued``."""
        text = text.strip()
        if not text:
            raise ConfigError("the message is empty: write what the session should do")
        if len(text) > MAX_MESSAGE:
            raise ConfigError(
                f"the message is too long ({len(text)} characters, at most {MAX_MESSAGE})"
            )
        if session.kind != "task":
            raise SessionClosed("an MCP client's session takes its instructions from the client")
        if not session.open or session.stopping or (not session.live and not session.kept):
            raise SessionClosed(
                "this session's desktop is closed, so it cannot continue: use Run again to "
                "start it afresh with the same goal and settings"
            )
        if not session.live:
            session.mailbox.put_nowait(text)
            return "continued"
        if interrupt and session.controller.active and not session.inbox.paused:
            session.interrupt = INTERRUPTED + text
            session.controller.stop()
            self._status(session, "Interrupted: reading your message")
            return "interrupted"
        session.inbox.post(WHILE_RUNNING + text)
        self.changed(session.id)
        return "queued"

    async def take_over(self, session: ConsoleSession, on: bool, note: str = "") -> str:
        over = session.takeover
        if over is None or not session.open:
            raise SessionClosed("this session has no desktop open to take over")
        if on:
            over.start()
            self._status(session, "The agent waits until you hand back")
            return ""
        said = await over.hand_back(note)
        if not session.live and note.strip():
            # its run ended meanwhile: the note is what it carries on with (no note: it waits
            # in the inbox for the next message)
            session.mailbox.put_nowait("\n\n".join(session.inbox.take()))
        self._status(session, "Handed back" if session.live else session.status)
        return said

    # -- stopping ---------------------------------------------------------------------------

    async def stop(self, session: ConsoleSession, timeout: float = 30.0) -> None:
        """Stop ``session`` and wait until its place is taken down (see the module docstring)."""
        if session.live and session.on_stop is not None:
            await session.on_stop()
            return
        if session.task is None or session.task.done():
            return
        if not session.live:  # finished, its desktop kept: close it
            session.mailbox.put_nowait(None)
        else:
            if session.state != "stopping":
                session.state = "stopping"
                self._status(session, "Stopping")
            self.confirmations.cancel_all(session.id)
            session.inbox.resume()  # a paused run must not hold the stop
            if not session.controller.stop(pending=True):
                session.task.cancel()  # still starting (no run yet): cancel the start
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(session.task), timeout)
        if not session.task.done():
            session.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await session.task

    async def stop_all(self) -> None:
        await asyncio.gather(
            *(self.stop(s) for s in list(self.all.values()) if s.kind == "task" and s.open)
        )
