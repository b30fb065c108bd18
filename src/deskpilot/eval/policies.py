"""Who does a trial's task: the task's oracle, nobody (``noop``), or a model.

Every policy reaches the desktop only through ``ToolSet.call`` with the trial's context (the
one door: policy, confirmation and the audit log apply as for any surface). A model runs the
real agent loop (:func:`deskpilot.agent.task.computer_use_task`) with the nine computer-use
tools, any provider, the native or the text tool protocol, or a ``scripted:`` replay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from deskpilot.agent.loop import RunOptions
from deskpilot.agent.task import computer_use_task, computer_use_toolset
from deskpilot.config import Settings
from deskpilot.errors import OracleFailed
from deskpilot.eval.check_env import CheckEnv
from deskpilot.eval.oracle import Oracle
from deskpilot.eval.task import Task
from deskpilot.events import Event
from deskpilot.tools.context import ToolContext

PolicyKind = Literal["oracle", "noop", "model"]


@dataclass(frozen=True)
class PolicySpec:
    """What runs the trials of an eval (travels to trial processes as JSON)."""

    kind: PolicyKind
    model: str | None = None
    base_url: str | None = None
    tool_protocol: Literal["native", "text"] | None = None

    @property
    def label(self) -> str:
        return self.model or self.kind if self.kind == "model" else self.kind

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "model": self.model,
            "base_url": self.base_url,
            "tool_protocol": self.tool_protocol,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PolicySpec:
        return cls(data["kind"], data.get("model"), data.get("base_url"), data.get("tool_protocol"))


@dataclass
class Outcome:
    """How the policy's part of a trial ended."""

    steps: int = 0
    reason: str = "answered"  # answered | budget | timeout | provider_error | oracle_failed | …
    answer: str = ""
    usage: dict[str, int] = field(default_factory=dict)


#: told to the agent of an OSWorld task (its infeasible tasks are scored by the answer)
INFEASIBLE_NOTE = (
    "If this task cannot be done, do not try something else: answer starting with "
    "INFEASIBLE and say why."
)

IN_KEYS = (
    "input_tokens",
    "prompt_tokens",
    "promptTokenCount",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
OUT_KEYS = ("output_tokens", "completion_tokens", "candidatesTokenCount")


def tokens(usage: dict[str, int]) -> tuple[int, int]:
    """(input, output) tokens from usage counts named the way each provider names them."""
    return sum(usage.get(k, 0) for k in IN_KEYS), sum(usage.get(k, 0) for k in OUT_KEYS)


async def run_policy(
    spec: PolicySpec,
    task: Task,
    ctx: ToolContext,
    settings: Settings,
    expand: Callable[[str], str],
    env: CheckEnv | None = None,
) -> Outcome:
    tools = computer_use_toolset()
    goal = expand(task.goal)
    if "osworld" in task.tags:  # OSWorld's agents have a FAIL action; deskpilot's answer it
        goal += "\n\n" + INFEASIBLE_NOTE
    if spec.kind == "model":
        from deskpilot.agent.providers import get_provider

        provider = get_provider(spec.model, settings, base_url=spec.base_url)
        options = RunOptions(
            max_steps=task.max_steps, timeout=task.timeout, tool_protocol=spec.tool_protocol
        )
        async with provider:
            result = await computer_use_task(goal, provider=provider, ctx=ctx, options=options)
        return Outcome(result.steps, result.reason, result.answer, result.usage)

    ctx.emit(Event("run.started", {"goal": goal, "model": f"{spec.kind} policy"}, ctx.run_id))
    outcome = Outcome()
    if spec.kind == "oracle":
        oracle = Oracle(task.oracle, tools, ctx, expand, env)
        try:
            outcome.steps = await oracle.run()
            outcome.answer = f"the oracle's {len(task.oracle)} steps ran"
        except OracleFailed as exc:
            outcome.reason, outcome.answer = "oracle_failed", str(exc)
            outcome.steps = oracle.calls
        finally:
            ctx.emit(
                Event(
                    "run.finished",
                    {
                        "outcome": "done",
                        "answer": outcome.answer,
                        "steps": oracle.calls,
                        "reason": outcome.reason,
                    },
                    ctx.run_id,
                )
            )
        return outcome
    outcome.answer = "did nothing (noop policy)"
    ctx.emit(
        Event(
            "run.finished",
            {"outcome": "done", "answer": outcome.answer, "steps": 0, "reason": "answered"},
            ctx.run_id,
        )
    )
    return outcome
