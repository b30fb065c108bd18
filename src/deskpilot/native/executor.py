"""Run a batch of coordinate actions through the ToolSet, then take one screenshot.

A model's computer call is one door call of ``computer_call`` (:meth:`NativeExecutor.decide`):
the door asks the approver when the confirm mode or a pending safety check says so (only a
person may acknowledge those), records the question and the answer like any other call, and
runs the batch on a yes. A person's yes covers the batch's plain actions (they were shown one
by one); a consequential one still asks on its own.

Each action is one ``ToolSet.call`` of ``computer`` or ``computer_view`` (policy, confirmation
and audit events per action, checked when it is dispatched, not before the batch). The batch
stops at the first failing or refused action. Afterwards one screenshot of the target is taken
through ``computer_view`` too, so the audit log holds the picture the model gets; a batch that
already ends in a screenshot reuses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deskpilot.errors import ActionFailed
from deskpilot.events import Image
from deskpilot.native.actions import (
    VIEW_TYPES,
    Action,
    Screenshot,
    action_from_dict,
    action_to_dict,
    describe,
)
from deskpilot.native.calls import ComputerCall, SafetyCheck
from deskpilot.native.safety import TOOL_NAME, call_verdict
from deskpilot.native.tools import NATIVE_TOOLS
from deskpilot.policy import Risk, Verdict
from deskpilot.tools.base import ToolResult, ToolSpec, tool
from deskpilot.tools.context import ToolContext
from deskpilot.tools.reach import NOTHING
from deskpilot.tools.toolset import ToolSet


@dataclass(frozen=True)
class Step:
    index: int  # 1-based position in the batch
    action: Action
    result: ToolResult

    @property
    def ok(self) -> bool:
        return not self.result.is_error


@dataclass
class BatchOutcome:
    """What a batch did: the steps that ran (in order), where it stopped, and the screenshot."""

    actions: tuple[Action, ...]
    steps: list[Step] = field(default_factory=list)
    screenshot: Image | None = None  # full-resolution capture of the target after the batch

    @property
    def failed(self) -> Step | None:
        return next((s for s in self.steps if not s.ok), None)

    @property
    def ok(self) -> bool:
        return self.failed is None

    def report(self) -> str:
        """Fixed-phrase text for the model: what failed and what ran before it."""
        failed = self.failed
        if failed is None:
            return ""
        ran = [f"{s.index}. {describe(s.action)}" for s in self.steps if s.ok]
        skipped = len(self.actions) - len(self.steps)
        lines = [f"Action {failed.index} of {len(self.actions)} failed: {failed.result.text}"]
        lines.append("Ran before it: " + ("; ".join(ran) if ran else "nothing") + ".")
        if skipped:
            lines.append(f"Not run: the {skipped} action(s) after it.")
        return "\n".join(lines)


def with_native_tools(toolset: ToolSet) -> ToolSet:
    """``toolset`` if it has ``computer`` and ``computer_view``, else a copy with them added.

    The caller's ToolSet is never changed: surfaces that list it (MCP) keep their tool list.
    """
    missing = [spec for spec in NATIVE_TOOLS if spec.name not in toolset]
    return ToolSet([*toolset.list(), *missing]) if missing else toolset


class NativeExecutor:
    """Runs action batches on ``ctx.desktop`` through ``toolset`` (the one door)."""

    def __init__(self, toolset: ToolSet, ctx: ToolContext) -> None:
        tools = [s for s in with_native_tools(toolset).list() if s.name != TOOL_NAME]
        self.toolset = ToolSet([*tools, computer_call_tool(self)])
        self.ctx = ctx

    async def decide(
        self, call: ComputerCall, *, window: str | None, screenshot: bool = True
    ) -> ToolResult:
        """One computer call through the door: asked when it must be, run on a yes.

        The result's ``value`` is the :class:`BatchOutcome` when the batch ran; a refusal
        (``data["refused"]``) means it did not. An approver's stop or pause propagates."""
        args = {
            "call_id": call.call_id,
            "window": window,
            "actions": [action_to_dict(a) for a in call.actions],
            "pending_safety_checks": [c.to_dict() for c in call.pending_safety_checks],
            "screenshot": screenshot,
        }
        return await self.toolset.call(TOOL_NAME, args, self.ctx, call_id=call.call_id)

    async def run(
        self,
        actions: Sequence[Action],
        *,
        window: str | None = None,
        call_id: str = "native",
        screenshot: bool = True,
    ) -> BatchOutcome:
        """Run ``actions`` in order; stop at the first failure; then (optionally) screenshot.

        A failed batch always gets a screenshot (for the audit log and the model); when the
        capture itself fails (the window closed), ``screenshot`` stays None.
        """
        outcome = BatchOutcome(tuple(actions))
        for i, action in enumerate(actions, 1):
            result = await self.call(action, window=window, call_id=f"{call_id}.{i}")
            outcome.steps.append(Step(i, action, result))
            if result.is_error:
                break
        last = outcome.steps[-1] if outcome.steps else None
        if last is not None and last.ok and isinstance(last.action, Screenshot):
            images = last.result.images  # none when the door withheld the image
            outcome.screenshot = images[0] if images else None
        elif screenshot or not outcome.ok:
            shot = await self.call(Screenshot(), window=window, call_id=f"{call_id}.shot")
            outcome.screenshot = None if shot.is_error or not shot.images else shot.images[0]
        return outcome

    async def call(self, action: Action, *, window: str | None, call_id: str) -> ToolResult:
        name = "computer_view" if action.type in VIEW_TYPES else "computer"
        args = {"action": action_to_dict(action), "window": window}
        return await self.toolset.call(name, args, self.ctx, call_id=call_id)

    async def capture(self, *, window: str | None = None, call_id: str = "native.shot") -> Image:
        """A screenshot of the target through ``computer_view`` (audited)."""
        result = await self.call(Screenshot(), window=window, call_id=call_id)
        if result.is_error or not result.images:
            raise ActionFailed(f"could not take a screenshot: {result.text}")
        return result.images[0]


def _parse(values: Mapping[str, Any]) -> tuple[list[Action], list[SafetyCheck]]:
    actions = [action_from_dict(a) for a in values.get("actions") or []]
    checks = [SafetyCheck.from_dict(c) for c in values.get("pending_safety_checks") or []]
    return actions, checks


def computer_call_tool(executor: NativeExecutor) -> ToolSpec:
    """The door's ``computer_call`` for ``executor``: one model computer call (not a model tool)."""

    async def assess(ctx: ToolContext, values: Mapping[str, Any]) -> Verdict:
        actions, checks = _parse(values)
        return call_verdict(actions, values.get("window"), checks)

    @tool(
        risk=Risk.ACTS,
        title="Computer call",
        name=TOOL_NAME,
        reach=NOTHING,
        assess=assess,
        covers=True,
    )
    async def computer_call(
        ctx: ToolContext,
        call_id: str,
        actions: list[dict[str, Any]],
        window: str | None = None,
        pending_safety_checks: list[dict[str, Any]] | None = None,
        screenshot: bool = True,
    ) -> ToolResult:
        """Run one computer call's actions in order (each through the door), then screenshot."""
        parsed, _checks = _parse({"actions": actions})
        outcome = await executor.run(parsed, window=window, call_id=call_id, screenshot=screenshot)
        ran = sum(1 for s in outcome.steps if s.ok)
        text = outcome.report() or f"Ran {ran} action(s)."
        # the screenshot is in its own computer_view result: not repeated here
        return ToolResult(
            text,
            is_error=not outcome.ok,
            value=outcome,
            summary=f"{ran}/{len(parsed)} action(s) ran",
        )

    return computer_call
