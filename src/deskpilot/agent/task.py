"""``computer_use_task(goal, windowID?)``: the computer-use subagent.

Two ways in:

* a runtime entry point — ``await computer_use_task(goal, window_id, provider=..., ctx=...)``
  (what ``deskpilot run`` calls), returning a :class:`~deskpilot.agent.loop.RunResult`;
* a tool a parent agent calls — :func:`computer_use_task_tool` builds its ToolSpec (what
  ``deskpilot chat`` gives its model).

The subagent gets only the nine computer-use tools, whatever toolset it is handed (never file
or shell tools). At the runtime entry point the goal is the person's: it grants what it names
for the run (:func:`deskpilot.tools.context.persons_goal`); the tool's goal is the parent
model's, which grants nothing — the run keeps the grants of the person's task around it. Its
instructions carry live context read at the start (date, frontmost window, agent browser, app
preferences) and the goal's negative constraints. With ``windowID`` the
window becomes the tracked target and the model is told to pass it to every tool.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from deskpilot.agent.conversation import Conversation
from deskpilot.agent.element import ElementTools
from deskpilot.agent.loop import (
    AgentRun,
    BeforeCall,
    Inbox,
    RunOptions,
    RunResult,
    StopController,
)
from deskpilot.agent.prompts import (
    computer_use_system_prompt,
    gather_context,
    negative_constraints,
)
from deskpilot.desktop.window_ids import find_window
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, ToolSpec, tool
from deskpilot.tools.builtin import NINE_TOOL_NAMES, computer_use_tools
from deskpilot.tools.context import ToolContext, persons_goal
from deskpilot.tools.reach import NOTHING
from deskpilot.tools.toolset import ToolSet

if TYPE_CHECKING:  # an annotation only: no vendor SDK imported with the agent loop
    from deskpilot.agent.providers.base import Provider

#: The nine computer-use tools — all the subagent may use (named where they are defined).
COMPUTER_USE_TOOLS: tuple[str, ...] = NINE_TOOL_NAMES


def computer_use_toolset(tools: ToolSet | None = None) -> ToolSet:
    """``tools`` (default: the built-in nine) narrowed to the nine computer-use tools, and the
    page tools when ``tools`` has them (``chat --page``, MCP)."""
    from deskpilot.pages.tools import PAGE_TOOL_NAMES

    if tools is None:
        tools = computer_use_tools()
    allowed = (*COMPUTER_USE_TOOLS, *PAGE_TOOL_NAMES)
    return tools.subset([name for name in tools.names() if name in allowed])


def default_options(ctx: ToolContext) -> RunOptions:
    s = ctx.settings
    return RunOptions(max_steps=s.max_steps, timeout=s.timeout, tool_protocol=s.tool_protocol)


async def stable_window_id(ctx: ToolContext, window_id: str) -> str | None:
    """The stable ``pid/handle`` of the open window ``window_id`` names (any form
    :mod:`deskpilot.desktop.window_ids` reads), or None."""
    window = find_window(await ctx.desktop.list_windows(), window_id)
    return window.stable_id if window is not None else None


async def computer_use_task(
    goal: str,
    window_id: str | None = None,
    *,
    provider: Provider,
    ctx: ToolContext,
    tools: ToolSet | None = None,
    options: RunOptions | None = None,
    controller: StopController | None = None,
    parent_run: str | None = None,
    inbox: Inbox | None = None,
    before_call: BeforeCall | None = None,
    persons: bool = True,
) -> RunResult:
    """Run the subagent on ``goal`` until it answers, runs out of steps or time, or is stopped.
    ``inbox`` gives the messages the user sent meanwhile (read before each model turn);
    ``before_call`` may answer a call instead of running it (see :mod:`deskpilot.agent.loop`).
    ``persons``: the goal is the person's own (it grants what it names while the run lasts);
    False for a goal a model wrote (the grants of the task around it hold, or none)."""
    target = None
    if window_id:
        target = await stable_window_id(ctx, window_id)
        if target is not None:
            ctx.session.target = target
    live = await gather_context(ctx, target or window_id)
    constraints = negative_constraints(goal)
    toolset = computer_use_toolset(tools)
    system = computer_use_system_prompt(live, constraints)
    if "query_page" in toolset:
        from deskpilot.pages.prompt import SUBAGENT_PAGE_NOTE

        system = f"{system}\n\n{SUBAGENT_PAGE_NOTE}"
    conversation = Conversation(system=system)
    conversation.add_user(goal)
    options = options or default_options(ctx)
    acting = ElementTools(provider, toolset, conversation, protocol=options.tool_protocol)
    # policy: the person's goal grants what it names until the run ends
    with persons_goal(ctx, goal) if persons else contextlib.nullcontext(ctx) as run_ctx:
        run = AgentRun(
            acting,
            run_ctx,
            options,
            goal=goal,
            constraints=constraints,
            controller=controller,
            parent_run=parent_run,
            inbox=inbox,
            before_call=before_call,
        )
        return await run.run()


def format_task_result(result: RunResult) -> str:
    if result.outcome == "needs_attention":
        return f"[computer_use_task needs attention: {result.reason}]\n{result.answer}"
    return result.answer


def computer_use_task_tool(
    provider: Provider | Callable[[], Provider],
    *,
    tools: ToolSet | Callable[[], ToolSet] | None = None,
    options: RunOptions | None = None,
    controller: StopController | None = None,
) -> ToolSpec:
    """The subagent as a tool. ``provider`` (or a callable returning the current one) runs it,
    so a parent conversation that switches model takes its subagent along."""

    # its reach is nothing: each of the subagent's own calls passes the door
    @tool(
        risk=Risk.ACTS,
        title="Computer-use task",
        name="computer_use_task",
        open_world=True,
        reach=NOTHING,
    )
    async def run_task(
        ctx: ToolContext,
        goal: Annotated[
            str,
            Field(
                min_length=1,
                description=(
                    "The whole UI task: which app or URL, what to do, what not to do, and what to "
                    "return."
                ),
            ),
        ],
        windowID: Annotated[
            str | None,
            Field(
                description=(
                    "Optional window to reuse for every step (pid/title or pid/windowNumber)."
                )
            ),
        ] = None,
    ) -> ToolResult:
        """Operate graphical apps on the Linux desktop to do one task, with a subagent that reads
        accessibility trees and acts on elements. Returns the extracted content, a confirmation
        of what was done, or what blocked it and any partial data."""
        current = provider() if callable(provider) else provider
        toolset = tools() if callable(tools) else tools
        sub_ctx = dataclasses.replace(ctx, run_id="")
        result = await computer_use_task(
            goal,
            windowID,
            provider=current,
            ctx=sub_ctx,
            tools=toolset,
            options=options or default_options(ctx),
            controller=controller,
            parent_run=ctx.run_id or None,
            persons=False,  # the parent model wrote this goal: it grants nothing by itself
        )
        return ToolResult(
            text=format_task_result(result),
            is_error=result.outcome != "done",
            data={
                "outcome": result.outcome,
                "reason": result.reason,
                "steps": result.steps,
                "run_id": result.run_id,
            },
            summary=f"{result.outcome} after {result.steps} step(s)",
        )

    return run_task
