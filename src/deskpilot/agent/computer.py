"""Acting with the vendor's computer tool: screenshots in, coordinate actions out.

::

    acting = ComputerCalls(provider, NativePlan(goal, ...))          # hybrid=True: + tools
    result = await AgentRun(acting, ctx, options, goal=goal).run()

The conversation is the vendor's own (:class:`~deskpilot.native.wire.ComputerWire`, from the
provider's adapter), posted through the provider's HTTP client. It begins with the goal and a
screenshot of the target (the screen, or one window: coordinates are then relative to it);
each model turn's calls are played on the desktop in order by a
:class:`~deskpilot.native.player.TurnPlayer` — every computer call through the door as one
``computer_call``, every local function (``hybrid``: the element tools) through the ToolSet —
and the results go back in the vendor's shape. Only the newest images of a resent history go
to the model (``provider.keep_images``). The last, tools-free call switches tool use off and
reads only the reply's text.

A person may stop the run at a computer call's prompt (the run ends ``stopped``; the next run
starts a fresh conversation) or pause it: the turn in progress, the conversation and the plan
are saved under ``state_dir/native-runs/`` and a new ComputerCalls given that checkpoint
carries on from there (``deskpilot run --resume FILE``). Progress summaries come from the
run's recorded events (:class:`~deskpilot.agent.native_setup.RunEvents`).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deskpilot.agent.conversation import Conversation
from deskpilot.agent.loop import Acted, BeforeCall, Reply
from deskpilot.agent.native_setup import RunEvents
from deskpilot.agent.providers.base import Provider
from deskpilot.agent.providers.scripted import ScriptedProvider
from deskpilot.agent.session_store import write_json
from deskpilot.errors import DeskpilotError
from deskpilot.events import Fanout
from deskpilot.native.calls import ComputerFlowError
from deskpilot.native.executor import NativeExecutor
from deskpilot.native.player import TurnPlayer
from deskpilot.native.scaling import Viewport
from deskpilot.native.session import ComputerSession
from deskpilot.native.tools import target_of
from deskpilot.native.wire import ComputerWire, WireSetup, parse_turn
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

#: the file format of a paused run (``deskpilot_native_run``)
CHECKPOINT_FORMAT = 1
#: the format of the turn in progress inside it
CHECKPOINT_VERSION = 1


@dataclass
class NativePlan:
    """What a native run is (saved with a pause checkpoint, so it resumes the same way)."""

    goal: str
    vendor: str
    model: str
    spec: str  # the provider:model that ran it
    hybrid: bool = False
    window: str | None = None
    system: str = ""
    constraints: list[str] = field(default_factory=list)
    run_id: str = ""


class ComputerCalls:
    """The model acts through its vendor's computer tool (see the module docstring)."""

    def __init__(
        self,
        provider: Provider,
        plan: NativePlan,
        *,
        tools: ToolSet | None = None,
        checkpoint: Mapping[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.plan = plan
        self.toolset = tools or ToolSet()  # the functions of a hybrid run
        self.checkpoint_to_resume = checkpoint
        self.events = RunEvents()  # watches what was recorded, for the progress summary
        self.ctx: ToolContext | None = None
        self.wire: ComputerWire | None = None
        self.player: TurnPlayer | None = None
        #: the turn being acted on (after a person stopped the run there: that turn)
        self.session: ComputerSession | None = None
        self.turns = 0  # model turns with tools
        self._says: list[str] = []
        self._unsent = False  # the wire holds a request not sent yet (results, a message)

    @property
    def label(self) -> str:
        """The model as shown: ``native · openai:gpt-5.4`` (``hybrid · …`` with element tools)."""
        return f"{'hybrid' if self.plan.hybrid else 'native'} · {self.provider.label}"

    def attach(self, ctx: ToolContext) -> ToolContext:
        self.plan.run_id = ctx.run_id
        self.ctx = dataclasses.replace(ctx, observe=Fanout(ctx.observe, self.events))
        if self.player is not None:  # a follow-up: the calls now belong to the new run
            self.player.executor = NativeExecutor(self.toolset, self.ctx)
        return self.ctx

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.label,
            "window": self.plan.window,
            "tool_protocol": "native",
            "mode": "hybrid" if self.plan.hybrid else "native",
        }

    def goal(self) -> str:
        return self.plan.goal

    # -- the turns -------------------------------------------------------------------------

    async def begin(self) -> tuple[int, bool]:
        if self.wire is not None:  # a follow-up: the conversation goes on
            return 0, False
        assert self.ctx is not None
        plan = self.plan
        _, rect = await target_of(self.ctx, plan.window)
        hybrid = self.toolset if plan.hybrid else None
        viewport = self.provider.computer_viewport(rect.width, rect.height)
        functions = hybrid.list() if hybrid else ()
        setup = WireSetup(
            self.provider.computer_model(), viewport, plan.window, functions, plan.system
        )
        self.wire = wire = self.provider.computer_wire(setup)
        self.player = TurnPlayer(wire, NativeExecutor(self.toolset, self.ctx), functions=hybrid)
        if self.checkpoint_to_resume is not None:
            self._restore(self.checkpoint_to_resume)
            return self.turns, True
        wire.say(plan.goal, await self.player.screenshot("native.start"))
        self._unsent = True
        return 0, False

    def say(self, text: str) -> None:
        self._says.append(text)

    async def ask(self, *, final: bool = False) -> Reply:
        wire, player = self._ready()
        if self._says:
            # after a finished exchange the model sees the screen as it is now
            shot = None if self._unsent else await player.screenshot("native.now")
            says, self._says = self._says, []
            for n, text in enumerate(says, 1):
                wire.say(text, shot if n == len(says) else None)
            self._unsent = True
        body = wire.pruned(
            {**wire.body(), **(wire.tools_off if final else {})}, self.provider.keep_images
        )
        reply = await self.provider.post(body, wire.headers())
        self._unsent = False
        turn = parse_turn(wire, wire.without_calls(reply) if final else reply)
        if not final:
            self.turns += 1
        if not turn.done:
            self.session = player.receive(turn)
        return Reply(turn.text, turn.done, turn.usage)

    async def act(self, before_call: BeforeCall | None = None) -> Acted:
        wire, player = self._ready()
        session = self.session
        assert session is not None
        state = await player.play(session, before_call)
        if state == "paused":
            return Acted(paused=f"Resume with: deskpilot run --resume {self._save()}")
        if state == "cancelled":  # the cancelled turn stays in self.session
            wire.restart()  # the next run starts a fresh conversation
            return Acted(cancelled=True)
        self.session = None
        wire.reply(session.results())
        self._unsent = True
        return Acted()

    async def close_pending(self, text: str, *, fresh: bool) -> None:
        session, wire, player = self.session, self.wire, self.player
        if session is None or wire is None or player is None or session.state != "open":
            return
        shot = player.last_shot
        if wire.screenshot_every_call and fresh:
            with contextlib.suppress(DeskpilotError):  # else the last one will do
                shot = await player.screenshot("native.end")
        player.close(session, text, shot)
        wire.reply(session.results())
        self.session = None
        self._unsent = True

    def summary(self) -> str:
        return self.events.summary()

    def conversation(self) -> Conversation:
        conversation = Conversation(system=self.plan.system)
        conversation.add_user(self.plan.goal)
        return conversation

    def _ready(self) -> tuple[ComputerWire, TurnPlayer]:
        if self.wire is None or self.player is None:
            raise ComputerFlowError("the computer-use conversation has not begun")
        return self.wire, self.player

    # -- pause and resume ------------------------------------------------------------------

    def checkpoint(self) -> dict[str, Any]:
        """JSON-able state of a paused run: the conversation and the turn in progress."""
        wire, _ = self._ready()
        return {
            "version": CHECKPOINT_VERSION,
            "vendor": wire.vendor,
            "model": wire.setup.model,
            "window": wire.setup.window,
            "viewport": wire.setup.viewport.to_dict(),
            "conversation": wire.state(),
            "session": None if self.session is None else self.session.to_dict(),
            "turns": self.turns,
        }

    def _save(self) -> Path:
        assert self.ctx is not None
        data: dict[str, Any] = {
            "deskpilot_native_run": CHECKPOINT_FORMAT,
            "plan": dataclasses.asdict(self.plan),
            "checkpoint": self.checkpoint(),
        }
        if isinstance(self.provider, ScriptedProvider):
            data["replay_position"] = self.provider.position
        path = self.ctx.settings.state_dir / "native-runs" / f"{self.plan.run_id}.json"
        write_json(path, data)
        return path

    def _restore(self, checkpoint: Mapping[str, Any]) -> None:
        wire, _ = self._ready()
        if checkpoint.get("version") != CHECKPOINT_VERSION:
            raise ComputerFlowError("unsupported native run checkpoint")
        model = wire.setup.model
        if (checkpoint.get("vendor"), checkpoint.get("model")) != (wire.vendor, model):
            raise ComputerFlowError(
                f"this checkpoint is for {checkpoint.get('vendor')}:{checkpoint.get('model')}, "
                f"not {wire.vendor}:{model}"
            )
        saved = checkpoint.get("session")
        if saved is None:
            raise ComputerFlowError("the checkpoint has no turn in progress to resume")
        try:
            wire.load(checkpoint["conversation"])
            wire.setup.viewport = Viewport.from_dict(checkpoint["viewport"])
            self.session = ComputerSession.from_dict(saved)
            self.turns = int(checkpoint.get("turns", 0))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ComputerFlowError(
                f"the checkpoint is damaged ({exc!r}); start the task again"
            ) from exc
