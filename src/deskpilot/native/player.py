"""One model turn's calls played on the desktop, in their order, through the door.

::

    player = TurnPlayer(wire, NativeExecutor(toolset, ctx), functions=element_tools)
    first = await player.screenshot("native.start")      # the goal's screenshot, encoded
    session = player.receive(turn)                        # the parsed turn → its calls
    state = await player.play(session)                    # "done" | "cancelled" | "paused"
    body = wire.reply(session.results())

Each computer call goes through the door as one ``computer_call``
(:meth:`~deskpilot.native.executor.NativeExecutor.decide`: the context's approver is asked when
the confirm mode or a safety check says so, with every action and warning shown) and runs only
when allowed; local function calls run through ``functions`` (hybrid runs: the element tools);
the results go back in the original order. A failed, refused or declined computer call stops
the rest of the turn's computer calls ("Not executed…"). An approver raising
:class:`~deskpilot.policy.CancelRequest` cancels the rest of the batch (``"cancelled"``); one
raising :class:`~deskpilot.policy.PauseRequest` leaves the call pending (``"paused"``): the
session's ``to_dict`` keeps the turn in progress, and ``play`` on the restored session carries
on from there.

Screenshots are encoded for the wire's viewport; a capture of another size (a resized window)
becomes the viewport's new target size. The model loop around this — asking, budgets,
timeouts, stopping — is :class:`~deskpilot.agent.loop.AgentRun`'s.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from PIL import Image

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
from deskpilot.native.scaling import CoordinateOutOfBounds, fit_within
from deskpilot.native.session import ComputerSession
from deskpilot.native.wire import NOT_EXECUTED, ComputerWire, Turn, declined_message
from deskpilot.policy import CancelRequest, PauseRequest
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

Played = Literal["done", "cancelled", "paused"]
#: asked before each call: None runs it; a text answers it instead (and stops the computer
#: calls after it) — a person took the screen over, say
BeforeCall = Callable[[], Awaitable[str | None]]


def _failed(answer: Output) -> bool:
    if isinstance(answer, ComputerResult):
        return answer.is_error
    return isinstance(answer, CallError) and answer.computer


def _ref(image: EventImage) -> ScreenshotRef:
    return ScreenshotRef(data=image.data, mime=image.mime)


class TurnPlayer:
    """Plays turns of ``wire`` on the desktop (see the module docstring)."""

    def __init__(
        self, wire: ComputerWire, executor: NativeExecutor, *, functions: ToolSet | None = None
    ) -> None:
        self.wire = wire
        self.executor = executor
        self.functions = functions
        #: the newest screenshot sent (encoded), to answer calls when there is no time for one
        self.last_shot: bytes | None = None

    @property
    def ctx(self) -> ToolContext:
        return self.executor.ctx

    @staticmethod
    def receive(turn: Turn) -> ComputerSession:
        """A session holding ``turn``'s calls (ComputerFlowError if their ids collide)."""
        ids = [c.call_id for c in turn.items]
        if len(set(ids)) != len(ids):  # results could not say which call they answer
            raise ComputerFlowError(
                f"the model's turn has several calls with one call_id ({', '.join(ids)}); "
                "nothing was run"
            )
        session = ComputerSession()
        session.receive(turn.items)
        return session

    async def screenshot(self, call_id: str = "native.now") -> bytes:
        """The target now (audited through ``computer_view``), encoded for the model."""
        shot = await self.executor.capture(window=self.wire.setup.window, call_id=call_id)
        return self._encode(shot)

    def close(self, session: ComputerSession, text: str, shot: bytes | None) -> None:
        """Answer every unanswered call of ``session`` with ``text`` (a timeout, a stop)."""
        if session.state != "open":
            return
        for index, item in enumerate(list(session.items)):
            if index in session.answers:
                continue
            if isinstance(item, ComputerCall):
                screenshot = ScreenshotRef(data=shot) if shot is not None else None
                session.fail(item.call_id, text, screenshot=screenshot)
            else:
                session.submit_function(FunctionResult(item.call_id, text, True))

    async def play(self, session: ComputerSession, before: BeforeCall | None = None) -> Played:
        """Answer every unanswered call of ``session``, in order (``before``: asked first)."""
        computer = [c for c in session.items if isinstance(c, ComputerCall)]
        last = computer[-1].call_id if computer else None
        stopped = any(_failed(a) for a in session.answers.values())
        for index, item in enumerate(list(session.items)):
            if index in session.answers:
                continue
            veto = await before() if before is not None else None
            if veto is not None:
                if isinstance(item, FunctionCall):
                    session.submit_function(FunctionResult(item.call_id, veto, is_error=True))
                else:
                    shot = await self._now() if self.wire.screenshot_every_call else None
                    session.fail(item.call_id, veto, screenshot=shot)
                    stopped = True
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
                shot = await self._now() if self.wire.screenshot_every_call else None
                session.fail(item.call_id, item.problem or NOT_EXECUTED, screenshot=shot)
                stopped = True
                continue
            wants_shot = self.wire.screenshot_every_call or item.call_id == last
            try:
                ran = await self.executor.decide(
                    item, window=self.wire.setup.window, screenshot=wants_shot
                )
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
                shot = await self._now() if self.wire.screenshot_every_call else None
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
        vp = self.wire.setup.viewport
        if (shot.width, shot.height) != (vp.target.width, vp.target.height):
            self.wire.setup.viewport = vp.with_target(shot.width, shot.height)
        self.last_shot = self.wire.setup.viewport.encode(shot.data)
        return self.last_shot

    async def _now(self) -> ScreenshotRef:
        return ScreenshotRef(data=await self.screenshot())

    def _zoomed(self, image: EventImage) -> ScreenshotRef:
        limit = self.wire.setup.viewport.image
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
                    sx, sy = self.wire.setup.viewport.to_space(int(data["x"]), int(data["y"]))
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
        return ComputerResult(
            call.call_id, shot, tuple(acknowledged), "\n".join(texts), not outcome.ok, tuple(images)
        )

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
