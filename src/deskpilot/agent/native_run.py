"""``deskpilot run --native`` / ``--hybrid``: a run through the vendor's native computer tool.

::

    result = await run_native_task(goal, provider=provider, ctx=ctx, hybrid=True)
    result.outcome, result.answer, result.exit_code

The run is the agent loop (:class:`~deskpilot.agent.loop.AgentRun`: budget, timeout, stop,
provider failures, the last answer, events) acting with
:class:`~deskpilot.agent.computer.ComputerCalls`. These entry points check that the provider
has a native computer tool (:func:`~deskpilot.agent.native_setup.native_target`), resolve the
target window, write the instructions (live context, the goal's negative constraints; hybrid
runs learn the element tools too), and resume a paused run from its checkpoint file
(:func:`load_checkpoint`, :func:`resume_native_task`) under the same run id.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deskpilot.agent.computer import CHECKPOINT_FORMAT, ComputerCalls, NativePlan
from deskpilot.agent.loop import (
    AgentRun,
    BeforeCall,
    Inbox,
    RunOptions,
    RunResult,
    StopController,
)
from deskpilot.agent.native_setup import native_system_prompt, native_target
from deskpilot.agent.prompts import gather_context, negative_constraints
from deskpilot.agent.providers.base import Provider
from deskpilot.agent.providers.scripted import ScriptedProvider
from deskpilot.agent.task import computer_use_toolset, default_options, stable_window_id
from deskpilot.errors import ConfigError
from deskpilot.tools.context import ToolContext, persons_goal
from deskpilot.tools.toolset import ToolSet


async def run_native_task(
    goal: str,
    window_id: str | None = None,
    *,
    provider: Provider,
    ctx: ToolContext,
    tools: ToolSet | None = None,
    options: RunOptions | None = None,
    hybrid: bool = False,
    controller: StopController | None = None,
    inbox: Inbox | None = None,
    before_call: BeforeCall | None = None,
) -> RunResult:
    """Run ``goal`` through ``provider``'s native computer tool (``hybrid``: plus the nine
    element tools). Raises ProviderNotConfigured when the provider has no native computer tool.
    With ``window_id`` the target is that window (coordinates relative to it)."""
    vendor, model = native_target(provider)
    window = None
    if window_id:
        window = await stable_window_id(ctx, window_id) or window_id
        ctx.session.target = window
    live = await gather_context(ctx, window)
    constraints = negative_constraints(goal)
    plan = NativePlan(
        goal,
        vendor,
        model,
        provider.spec,
        hybrid,
        window,
        native_system_prompt(live, constraints, hybrid=hybrid),
        constraints,
    )
    acting = ComputerCalls(provider, plan, tools=computer_use_toolset(tools))
    with persons_goal(ctx, goal) as task_ctx:  # policy: the goal grants what it names
        run = AgentRun(
            acting,
            task_ctx,
            options or default_options(ctx),
            goal=goal,
            constraints=constraints,
            controller=controller,
            inbox=inbox,
            before_call=before_call,
        )
        return await run.run()


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A paused native run saved by :class:`ComputerCalls` (ConfigError if it is not one)."""
    try:
        data = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the checkpoint {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} is not a paused deskpilot run ({exc})") from exc
    if not isinstance(data, dict) or data.get("deskpilot_native_run") != CHECKPOINT_FORMAT:
        raise ConfigError(f"{path} is not a paused deskpilot native run")
    if not isinstance(data.get("plan"), dict) or not isinstance(data.get("checkpoint"), dict):
        raise ConfigError(f"{path} is a damaged checkpoint (no plan or no saved turn)")
    return data


async def resume_native_task(
    checkpoint: Mapping[str, Any],
    *,
    provider: Provider,
    ctx: ToolContext,
    tools: ToolSet | None = None,
    options: RunOptions | None = None,
    controller: StopController | None = None,
    inbox: Inbox | None = None,
    before_call: BeforeCall | None = None,
) -> RunResult:
    """Carry on with a paused run (:func:`load_checkpoint`) under the same run id."""
    try:
        plan = NativePlan(**checkpoint["plan"])
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"the paused run's checkpoint is damaged ({exc!r})") from exc
    vendor, model = native_target(provider)
    if (vendor, model) != (plan.vendor, plan.model):
        raise ConfigError(
            f"the paused run used {plan.spec}; resume it with --model {plan.spec}, "
            f"not {provider.spec}"
        )
    if isinstance(provider, ScriptedProvider):
        provider.position = int(checkpoint.get("replay_position", provider.position))
    if plan.window:
        ctx.session.target = plan.window
    if plan.run_id:
        ctx = dataclasses.replace(ctx, run_id=plan.run_id)
    tools = computer_use_toolset(tools)
    acting = ComputerCalls(provider, plan, tools=tools, checkpoint=checkpoint["checkpoint"])
    with persons_goal(ctx, plan.goal) as task_ctx:  # policy: the same grants again
        run = AgentRun(
            acting,
            task_ctx,
            options or default_options(ctx),
            goal=plan.goal,
            constraints=plan.constraints,
            controller=controller,
            inbox=inbox,
            before_call=before_call,
            started={"resumed": True},
        )
        return await run.run()


__all__ = [
    "ComputerCalls",
    "NativePlan",
    "load_checkpoint",
    "resume_native_task",
    "run_native_task",
]
