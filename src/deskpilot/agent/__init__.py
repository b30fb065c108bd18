"""The agent runtime: conversations, providers, the loop, the computer-use subagent.

::

    from deskpilot.agent import computer_use_task, get_provider

    provider = get_provider("anthropic:claude-sonnet-4-5", settings)
    result = await computer_use_task("In the calculator, work out 12*7", provider=provider, ctx=ctx)
    print(result.outcome, result.answer)

::

    loop.py                 AgentRun: the one loop (budget, timeout, stop, last answer, events),
                            the inbox and follow_up hooks
    element.py              acting with tools: function calling or the text protocol
    computer.py             acting with the vendor's computer tool (native, hybrid), pause/resume
    task.py, native_run.py  the entry points: computer_use_task, run/resume_native_task
    chat.py                 the parent agent of ``deskpilot chat``
    conversation.py         the neutral conversation; textproto.py the @@TOOL@@ protocol
    providers/              one adapter per vendor (both wires), HttpClient, scripted replays
    prompts.py, native_setup.py, approvers.py, chips.py, workspace.py, session_store.py

Imports: deskpilot's tools, native, pages, policy, audit, events and config layers (never the
surfaces: cli, mcp, serve).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskpilot._lazy import exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each is imported on first use
    from deskpilot.agent.approvers import TerminalApprover
    from deskpilot.agent.conversation import (
        AssistantTurn,
        Conversation,
        Message,
        ToolCall,
        ToolResultPart,
    )
    from deskpilot.agent.loop import (
        EXIT_CODES,
        AgentRun,
        RunOptions,
        RunResult,
        StopController,
        follow_up,
    )
    from deskpilot.agent.providers import Provider, get_provider, how_to_configure
    from deskpilot.agent.session_store import load_conversation, save_conversation
    from deskpilot.agent.task import COMPUTER_USE_TOOLS, computer_use_task, computer_use_task_tool

_WHERE = {
    "TerminalApprover": "deskpilot.agent.approvers",
    **dict.fromkeys(
        ("AssistantTurn", "Conversation", "Message", "ToolCall", "ToolResultPart"),
        "deskpilot.agent.conversation",
    ),
    **dict.fromkeys(
        ("EXIT_CODES", "AgentRun", "RunOptions", "RunResult", "StopController", "follow_up"),
        "deskpilot.agent.loop",
    ),
    **dict.fromkeys(("Provider", "get_provider", "how_to_configure"), "deskpilot.agent.providers"),
    **dict.fromkeys(("load_conversation", "save_conversation"), "deskpilot.agent.session_store"),
    **dict.fromkeys(
        ("COMPUTER_USE_TOOLS", "computer_use_task", "computer_use_task_tool"),
        "deskpilot.agent.task",
    ),
}
__getattr__, __dir__ = exports(__name__, _WHERE)

__all__ = [
    "COMPUTER_USE_TOOLS",
    "EXIT_CODES",
    "AgentRun",
    "AssistantTurn",
    "Conversation",
    "Message",
    "Provider",
    "RunOptions",
    "RunResult",
    "StopController",
    "TerminalApprover",
    "ToolCall",
    "ToolResultPart",
    "computer_use_task",
    "computer_use_task_tool",
    "follow_up",
    "get_provider",
    "how_to_configure",
    "load_conversation",
    "save_conversation",
]
