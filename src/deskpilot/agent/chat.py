"""The interactive parent agent behind ``deskpilot chat``.

Its tools are ``computer_use_task`` (the subagent, which alone touches the GUI) plus the
workspace tools ``read_file`` and ``run_command`` (both confirmed); in page mode (``chat
--page``) the page tools and ``computer_use_task``, with the page-helper instructions. Each
user message is one
turn of at most 8 steps. The conversation is neutral, so ``switch()`` can change the model
between turns (the subagent follows); it saves to JSON and resumes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from deskpilot.agent.conversation import Conversation, ToolProtocol
from deskpilot.agent.element import ElementTools
from deskpilot.agent.loop import AgentRun, RunOptions, RunResult, StopController
from deskpilot.agent.prompts import CHAT_PROMPT
from deskpilot.agent.providers import Provider, get_provider
from deskpilot.agent.session_store import save_conversation
from deskpilot.agent.task import computer_use_task_tool
from deskpilot.agent.workspace import workspace_tools
from deskpilot.tools.context import ToolContext, persons_goal
from deskpilot.tools.toolset import ToolSet

CHAT_STEPS = 8
#: a chat turn may wait for a whole subagent run, then continue
TURN_EXTRA_TIME = 300.0


class ChatSession:
    def __init__(
        self,
        provider: Provider,
        ctx: ToolContext,
        *,
        conversation: Conversation | None = None,
        workspace: Path | None = None,
        max_steps: int = CHAT_STEPS,
        tool_protocol: ToolProtocol | None = None,
        controller: StopController | None = None,
        task_tools: ToolSet | None = None,
        page: bool = False,
    ) -> None:
        self.provider = provider
        self.ctx = ctx
        self.page = page
        if page:
            from deskpilot.pages.prompt import PAGE_PROMPT

            system = PAGE_PROMPT
        else:
            system = CHAT_PROMPT
        self.conversation = conversation or Conversation(system=system)
        self.max_steps = max_steps
        self.tool_protocol = tool_protocol
        self.controller = controller or StopController()
        if page and task_tools is None:
            from deskpilot.tools.builtin import all_tools

            task_tools = all_tools()
        subagent = computer_use_task_tool(
            lambda: self.provider, tools=task_tools, controller=self.controller
        )
        if page:
            from deskpilot.pages.tools import PAGE_TOOLS

            self.tools = ToolSet([*PAGE_TOOLS, subagent])
        else:
            self.tools = ToolSet([subagent, *workspace_tools(workspace or Path.cwd())])

    async def send(self, text: str) -> RunResult:
        """One turn: the user's message, then up to ``max_steps`` steps, then the answer.

        The message is the person's own: it grants what it names for this turn (a subagent's
        goal, written by the model, grants nothing by itself)."""
        self.conversation.add_user(text)
        options = RunOptions(
            max_steps=self.max_steps,
            timeout=self.ctx.settings.timeout + TURN_EXTRA_TIME,
            tool_protocol=self.tool_protocol,
        )
        acting = ElementTools(
            self.provider, self.tools, self.conversation, protocol=self.tool_protocol
        )
        # policy: the turn's message is the person's own; it grants what it names
        with persons_goal(dataclasses.replace(self.ctx, run_id=""), text) as turn_ctx:
            run = AgentRun(acting, turn_ctx, options, goal=text, controller=self.controller)
            return await run.run()

    async def switch(self, spec: str, base_url: str | None = None) -> Provider:
        """Use another model from the next turn on (the conversation carries over)."""
        provider = get_provider(spec, self.ctx.settings, base_url=base_url)
        old, self.provider = self.provider, provider
        await old.aclose()
        return provider

    def save(self, path: Path) -> None:
        save_conversation(path, self.conversation, {"model": self.provider.spec})

    async def aclose(self) -> None:
        await self.provider.aclose()
