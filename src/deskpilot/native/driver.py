"""A small driver: one vendor conversation played on the desktop, turn by turn.

::

    conv = await open_conversation("anthropic", "claude-sonnet-4-5", ctx)
    driver = NativeDriver(conv, NativeExecutor(toolset, ctx), http_send(base_url, api_key))
    result = await driver.run("Compute 7×6 in the calculator")

Per model turn: the response is parsed into calls (original order) in a fresh
:class:`~deskpilot.native.session.ComputerSession`; each computer call goes through the door as
one ``computer_call`` (:meth:`~deskpilot.native.executor.NativeExecutor.decide`: the context's
approver is asked when the confirm mode or a safety check says so, with every action and
warning shown) and runs only when allowed; local function calls run through ``functions``
(hybrid mode: the element tools); the results go back in the original order. A failed,
refused or declined computer call stops the rest of the turn's computer calls ("Not
executed…"). An approver raising :class:`~deskpilot.policy.CancelRequest` cancels the rest of
the batch and ends the run; the next run starts a fresh conversation. An approver raising
:class:`~deskpilot.policy.PauseRequest` pauses the run: ``checkpoint()`` gives JSON-able
state (conversation, viewport, the turn in progress with its call ids, action order and pending
checks) and ``resume(checkpoint)`` — on a new driver, in a new process — carries on from there.

HTTP is injected (``send``), so the agent loop's providers can replace :func:`http_send`.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from PIL import Image

from deskpilot.errors import ProviderError
from deskpilot.events import Event
from deskpilot.events import Image as EventImage
from deskpilot.native.actions import CursorPosition, Zoom
from deskpilot.native.calls import (
    CallError,
    ComputerCall,
    ComputerFlowError,
    ComputerResult,
    FunctionCall,
    FunctionResult,
    Output,
    SafetyCheck,
    ScreenshotRef,
)
from deskpilot.native.executor import BatchOutcome, NativeExecutor
from deskpilot.native.scaling import (
    CoordinateOutOfBounds,
    Vendor,
    Viewport,
    fit_within,
    viewport_for,
)
from deskpilot.native.session import ComputerSession
from deskpilot.native.tools import target_of
from deskpilot.native.vendors import make_conversation
from deskpilot.native.vendors.base import (
    NOT_EXECUTED,
    Conversation,
    declined_message,
    parse_turn,
)
from deskpilot.policy import CancelRequest, PauseRequest
from deskpilot.tools.base import ToolSpec
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

Send = Callable[[Conversation, dict[str, Any]], Awaitable[Mapping[str, Any]]]


def http_send(base_url: str, api_key: str, *, timeout: float = 120.0) -> Send:
    """POST each request body to ``base_url + conversation.path`` with the vendor's headers."""

    async def send(conv: Conversation, body: dict[str, Any]) -> Mapping[str, Any]:
        url = base_url.rstrip("/") + conv.path
        try:
            async with httpx.AsyncClient(timeout=timeout) as client:
                reply = await client.post(url, json=body, headers=conv.headers(api_key))
        except httpx.HTTPError as exc:
            raise ProviderError(f"{conv.vendor}: request failed ({type(exc).__name__})") from exc
        if reply.status_code >= 400:
            raise ProviderError(
                f"{conv.vendor} returned HTTP {reply.status_code}: {reply.text[:300]}"
            )
        try:
            data = reply.json()
        except ValueError as exc:
            raise ProviderError(f"{conv.vendor} returned a body that is not JSON") from exc
        if not isinstance(data, Mapping):
            raise ProviderError(f"{conv.vendor} returned JSON that is not an object")
        return data

    return send


async def open_conversation(
    vendor: Vendor,
    model: str,
    ctx: ToolContext,
    *,
    window: str | None = None,
    functions: Sequence[ToolSpec] = (),
    instructions: str | None = None,
) -> Conversation:
    """A conversation whose viewport fits the target (the screen, or ``window``) right now."""
    _, rect = await target_of(ctx, window)
    viewport = viewport_for(vendor, rect.width, rect.height)
    return make_conversation(vendor, model, viewport, window=window, functions=functions,
                             instructions=instructions)  # fmt: skip


CHECKPOINT_VERSION = 1


@dataclass
class RunResult:
    status: Literal["done", "cancelled", "paused", "max_turns"]
    text: str
    turns: int
    sessions: list[ComputerSession] = field(default_factory=list)


def _failed(answer: Output) -> bool:
    if isinstance(answer, ComputerResult):
        return answer.is_error
    return isinstance(answer, CallError) and answer.computer


def _ref(image: EventImage) -> ScreenshotRef:
    return ScreenshotRef(data=image.data, mime=image.mime)


class NativeDriver:
    """Plays one conversation (see the module docstring)."""

    def __init__(
        self,
        conversation: Conversation,
        executor: NativeExecutor,
        send: Send,
        *,
        functions: ToolSet | None = None,
        max_turns: int = 30,
    ) -> None:
        self.conv = conversation
        self.executor = executor
        self.send = send
        self.functions = functions
        self.max_turns = max_turns
        self.session: ComputerSession | None = None  # the turn in progress (kept when paused)
        self.turns = 0

    @property
    def ctx(self) -> ToolContext:
        return self.executor.ctx

    # -- the loop ----------------------------------------------------------------------------

    async def run(self, goal: str) -> RunResult:
        """Start the conversation with ``goal`` and a screenshot; play it to the end."""
        first = await self.executor.capture(window=self.conv.window, call_id="native.start")
        self.session, self.turns = None, 0
        return await self._loop(self.conv.start(goal, self._encode(first)))

    async def resume(self, checkpoint: Mapping[str, Any]) -> RunResult:
        """Continue a paused run from :meth:`checkpoint` (the same vendor and model)."""
        if checkpoint.get("version") != CHECKPOINT_VERSION:
            raise ComputerFlowError("unsupported native run checkpoint")
        if (checkpoint.get("vendor"), checkpoint.get("model")) != (self.conv.vendor,
                                                                   self.conv.model):  # fmt: skip
            raise ComputerFlowError(
                f"this checkpoint is for {checkpoint.get('vendor')}:{checkpoint.get('model')}, "
                f"not {self.conv.vendor}:{self.conv.model}"
            )
        saved = checkpoint.get("session")
        if saved is None:
            raise ComputerFlowError("the checkpoint has no turn in progress to resume")
        try:
            self.conv.load(checkpoint["conversation"])
            self.conv.viewport = Viewport.from_dict(checkpoint["viewport"])
            self.session = ComputerSession.from_dict(saved)
            self.turns = int(checkpoint.get("turns", 0))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ComputerFlowError(
                f"the checkpoint is damaged ({exc!r}); start the task again"
            ) from exc
        return await self._loop(None)

    def checkpoint(self) -> dict[str, Any]:
        """JSON-able state of a paused run: the conversation and the turn in progress."""
        return {
            "version": CHECKPOINT_VERSION,
            "vendor": self.conv.vendor,
            "model": self.conv.model,
            "window": self.conv.window,
            "viewport": self.conv.viewport.to_dict(),
            "conversation": self.conv.state(),
            "session": None if self.session is None else self.session.to_dict(),
            "turns": self.turns,
        }

    async def _loop(self, body: dict[str, Any] | None) -> RunResult:
        sessions = [] if self.session is None else [self.session]
        text = ""
        while True:
            if self.session is None:
                if body is None or self.turns >= self.max_turns:
                    return RunResult("max_turns", text, self.turns, sessions)
                turn = parse_turn(self.conv, await self.send(self.conv, body))
                self.turns += 1
                text = turn.text
                if text and not turn.done:  # a final answer travels in the run's end
                    self.ctx.emit(Event("model.text", {"text": text}, run_id=self.ctx.run_id))
                if turn.done:
                    return RunResult("done", text, self.turns, sessions)
                ids = [c.call_id for c in turn.items]
                if len(set(ids)) != len(ids):  # results could not say which call they answer
                    raise ComputerFlowError(
                        f"the model's turn has several calls with one call_id ({', '.join(ids)}); "
                        "nothing was run"
                    )
                self.session = ComputerSession()
                self.session.receive(turn.items)
                sessions.append(self.session)
            state = await self.play(self.session)
            if state == "paused":
                return RunResult("paused", text, self.turns, sessions)
            if state == "cancelled":
                self.conv.restart()
                self.session = None
                return RunResult("cancelled", text, self.turns, sessions)
            body = self.conv.reply(self.session.results())
            self.session = None

    async def play(self, session: ComputerSession) -> Literal["done", "cancelled", "paused"]:
        """Answer every unanswered call of ``session``, in order."""
        computer = [c for c in session.items if isinstance(c, ComputerCall)]
        last = computer[-1].call_id if computer else None
        stopped = any(_failed(a) for a in session.answers.values())
        for index, item in enumerate(list(session.items)):
            if index in session.answers:
                continue
            if isinstance(item, FunctionCall):
                try:
                    await self._function(session, item)
                except PauseRequest:  # its approval was paused: it stays pending
                    return "paused"
                except CancelRequest:
                    session.cancel(item.call_id)
                    return "cancelled"
                continue
            if stopped or item.problem:
                shot = await self._now() if self.conv.screenshot_every_call else None
                session.fail(item.call_id, item.problem or NOT_EXECUTED, screenshot=shot)
                stopped = True
                continue
            wants_shot = self.conv.screenshot_every_call or item.call_id == last
            try:
                ran = await self.executor.decide(item, window=self.conv.window,
                                                 screenshot=wants_shot)  # fmt: skip
            except PauseRequest:
                return "paused"
            except CancelRequest:
                session.cancel(item.call_id)
                return "cancelled"
            outcome = ran.value
            if not isinstance(outcome, BatchOutcome):  # declined, or not runnable at all
                data = ran.data or {}
                why = str(data.get("why") or "")
                text = declined_message(item.call_id, why) if data.get("refused") else ran.text
                shot = await self._now() if self.conv.screenshot_every_call else None
                session.fail(item.call_id, text, screenshot=shot)
                stopped = True
                continue
            # it ran: with pending checks only after a person's yes, which acknowledges them
            session.submit(self._result(item, outcome, item.pending_safety_checks, wants_shot))
            stopped = not outcome.ok
        return "done"

    # -- helpers -----------------------------------------------------------------------------

    def _encode(self, shot: EventImage) -> bytes:
        """Adopt the capture's size as the target size, then scale it for the model."""
        vp = self.conv.viewport
        if (shot.width, shot.height) != (vp.target.width, vp.target.height):
            self.conv.viewport = vp.with_target(shot.width, shot.height)
        return self.conv.viewport.encode(shot.data)

    async def _now(self) -> ScreenshotRef:
        shot = await self.executor.capture(window=self.conv.window, call_id="native.now")
        return ScreenshotRef(data=self._encode(shot))

    def _zoomed(self, image: EventImage) -> ScreenshotRef:
        limit = self.conv.viewport.image
        size = fit_within(image.width, image.height, limit.width, limit.height)
        if (size.width, size.height) == (image.width, image.height):
            return _ref(image)
        with Image.open(io.BytesIO(image.data)) as img:
            small = img.convert("RGB").resize((size.width, size.height), Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        small.save(buf, format="PNG")
        return ScreenshotRef(data=buf.getvalue())

    def _result(
        self,
        call: ComputerCall,
        outcome: BatchOutcome,
        acknowledged: tuple[SafetyCheck, ...],
        with_shot: bool,
    ) -> ComputerResult:
        texts: list[str] = []
        images: list[ScreenshotRef] = []
        for step in outcome.steps:
            data = step.result.data or {}
            if step.ok and isinstance(step.action, CursorPosition):
                try:
                    sx, sy = self.conv.viewport.to_space(int(data["x"]), int(data["y"]))
                    texts.append(f"X={sx},Y={sy}")
                except (CoordinateOutOfBounds, KeyError):
                    texts.append("The pointer is outside the screenshot.")
            elif step.ok and isinstance(step.action, Zoom) and step.result.images:
                images.append(self._zoomed(step.result.images[0]))
        if not outcome.ok:
            texts.append(outcome.report())
        shot = None
        if outcome.screenshot is not None and (with_shot or not outcome.ok):
            shot = ScreenshotRef(data=self._encode(outcome.screenshot))
        return ComputerResult(call.call_id, shot, tuple(acknowledged), "\n".join(texts),
                              not outcome.ok, tuple(images))  # fmt: skip

    async def _function(self, session: ComputerSession, call: FunctionCall) -> None:
        if self.functions is None or call.name not in self.functions:
            session.submit_function(
                FunctionResult(call.call_id, f"Unknown function {call.name!r}.", is_error=True)
            )
            return
        raw = call.meta.get("raw_arguments")
        args: Mapping[str, Any] | str = raw if isinstance(raw, str) else dict(call.arguments)
        res = await self.functions.call(call.name, args, self.ctx, call_id=call.call_id)
        images = tuple(_ref(i) for i in res.images)
        session.submit_function(FunctionResult(call.call_id, res.text, res.is_error, images))
