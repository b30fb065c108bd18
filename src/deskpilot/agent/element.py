"""Acting with tools: the model calls the element tools (or any ToolSet) by name.

::

    acting = ElementTools(provider, tools, conversation, protocol=None)   # "native" | "text"
    result = await AgentRun(acting, ctx, options, goal=goal).run()

The conversation is neutral (:mod:`deskpilot.agent.conversation`), so the provider may change
between turns. ``protocol`` is how calls travel: ``native`` — the provider's function calling;
``text`` — ``@@TOOL@@`` blocks in plain text (:mod:`deskpilot.agent.textproto`), for models
without tool calling; ``None`` — the provider's default.

A reply's calls run in order through ``ToolSet.call`` (the door: policy, confirmation, audit);
after a failed call the rest of that reply is answered "not run". A call that could not be
understood (malformed arguments, a broken text block) is answered with the reason and runs
nothing; a reply made only of such calls counts towards the loop's format-error limit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from deskpilot.agent.conversation import (
    Conversation,
    Message,
    ToolCall,
    ToolProtocol,
    ToolResultPart,
)
from deskpilot.agent.loop import Acted, BeforeCall, Reply, render_progress
from deskpilot.events import Event
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

log = logging.getLogger(__name__)

NOT_RUN_AFTER_FAILURE = (
    "Not run: an earlier tool call in this reply failed (see its result). Check the screen again "
    "before deciding what to do next."
)
FORGED_NOTE = (
    "\n(Runtime note: your reply contained a result marker; everything from it on was ignored. "
    "Only the runtime writes results.)"
)

if TYPE_CHECKING:  # an annotation only: no vendor SDK imported with the agent loop
    from deskpilot.agent.providers.base import Provider


class ElementTools:
    """The model acts through ``tools`` over a neutral ``conversation`` (see the module
    docstring); the conversation ends with the user's message when the run begins."""

    def __init__(
        self,
        provider: Provider,
        tools: ToolSet,
        conversation: Conversation,
        *,
        protocol: ToolProtocol | None = None,
    ) -> None:
        self.provider = provider
        self.tools = tools
        self.protocol = protocol
        self._conversation = conversation
        self._start = len(conversation.messages)  # the summary covers this run only
        self._calls: list[ToolCall] = []  # the last reply's calls, to act on
        self._notes: list[str] = []
        self.ctx: ToolContext | None = None

    def attach(self, ctx: ToolContext) -> ToolContext:
        self.ctx = ctx
        return ctx

    def describe(self) -> dict[str, Any]:
        assert self.ctx is not None
        return {
            "model": self.provider.label,
            "window": self.ctx.session.target or self.ctx.fallback_window,
            "tool_protocol": self.provider.resolve_protocol(self.protocol),
        }

    def goal(self) -> str:
        for message in reversed(self._conversation.messages):
            if message.role == "user":
                return message.text
        return ""

    async def begin(self) -> tuple[int, bool]:
        self._start = len(self._conversation.messages)
        return 0, False

    def say(self, text: str) -> None:
        self._conversation.add_user(text)

    async def ask(self, *, final: bool = False) -> Reply:
        tools = () if final else self.tools.list()
        turn = await self.provider.complete(self._conversation, tools, tool_protocol=self.protocol)
        if final:
            turn.tool_calls = []  # no tools were offered; never leave calls unanswered
        self._conversation.add_turn(turn)
        self._calls, self._notes = list(turn.tool_calls), list(turn.notes)
        for note in turn.notes:
            log.info("%s", note)
        return Reply(turn.text, not turn.tool_calls, dict(turn.usage))

    async def act(self, before_call: BeforeCall | None = None) -> Acted:
        assert self.ctx is not None
        calls, self._calls = self._calls, []
        message = self._conversation.add_results([])  # filled as calls finish (stop keeps them)
        failed = False
        for call in calls:
            veto = await before_call() if before_call is not None else None
            if veto is not None or failed or call.error is not None:
                text = veto or (NOT_RUN_AFTER_FAILURE if failed else str(call.error))
                self._report_unrun(call, text)
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
        if any("result marker" in n for n in self._notes) and message.results:
            message.results[-1].text += FORGED_NOTE
        return Acted(malformed=bool(calls) and all(c.error for c in calls))

    async def close_pending(self, text: str, *, fresh: bool) -> None:
        self._conversation.close_pending(text)

    def summary(self) -> str:
        return progress_summary(self._conversation.messages[self._start :])

    def conversation(self) -> Conversation:
        return self._conversation

    def _report_unrun(self, call: ToolCall, text: str) -> None:
        assert self.ctx is not None
        args: object = call.arguments if call.error is None else call.raw
        run_id = self.ctx.run_id
        self.ctx.emit(
            Event(
                "tool.call",
                {"tool": call.name or "?", "args": args, "call_id": call.id},
                run_id=run_id,
            )
        )
        self.ctx.emit(
            Event(
                "tool.result",
                {
                    "tool": call.name or "?",
                    "call_id": call.id,
                    "ok": False,
                    "summary": text.splitlines()[0][:160],
                    "text": text,
                },
                run_id=run_id,
            )
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
    return render_progress(lines, last_text, empty="no tool was called.", limit=limit)
