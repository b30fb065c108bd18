"""The agent runtime: conversations, providers, the loop, the computer-use subagent.

::

    from deskpilot.agent import computer_use_task, get_provider

    provider = get_provider("anthropic:claude-sonnet-4-5", settings)
    result = await computer_use_task("In the calculator, work out 12*7", provider=provider, ctx=ctx)
    print(result.outcome, result.answer)
"""

from __future__ import annotations

from deskpilot.agent.approvers import TerminalApprover
from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    Message,
    ToolCall,
    ToolResultPart,
)
from deskpilot.agent.loop import EXIT_CODES, AgentRun, RunOptions, RunResult, StopController
from deskpilot.agent.providers import Provider, get_provider, how_to_configure
from deskpilot.agent.session_store import load_conversation, save_conversation
from deskpilot.agent.task import COMPUTER_USE_TOOLS, computer_use_task, computer_use_task_tool

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
    "get_provider",
    "how_to_configure",
    "load_conversation",
    "save_conversation",
]
