"""Run a batch of coordinate actions through the ToolSet, then take one screenshot.

Each action is one ``ToolSet.call`` of ``computer`` or ``computer_view`` (policy, confirmation
and audit events per action, checked when it is dispatched, not before the batch). The batch
stops at the first failing or refused action. Afterwards one screenshot of the target is taken
through ``computer_view`` too, so the audit log holds the picture the model gets; a batch that
already ends in a screenshot reuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deskpilot.errors import ActionFailed
from deskpilot.events import Image
from deskpilot.native.actions import VIEW_TYPES, Action, Screenshot, action_to_dict, describe
from deskpilot.native.tools import NATIVE_TOOLS
from deskpilot.tools.base import ToolResult
from deskpilot.tools.context import ToolContext
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
        self.toolset = with_native_tools(toolset)
        self.ctx = ctx

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
            outcome.screenshot = last.result.images[0]
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
