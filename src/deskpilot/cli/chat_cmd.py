"""``deskpilot chat``: talk to the parent agent, which does GUI work through computer_use_task."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from deskpilot.agent.approvers import TerminalApprover, read_line_from
from deskpilot.agent.chat import CHAT_STEPS, ChatSession
from deskpilot.agent.conversation import Conversation
from deskpilot.agent.loop import StopController
from deskpilot.agent.providers import Provider
from deskpilot.agent.session_store import load_conversation
from deskpilot.cli.agent_opts import event_printer, model_options, provider_for, stop_on_signals
from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.config import Settings
from deskpilot.errors import DeskpilotError
from deskpilot.runtime import open_session

CHAT_HELP = """\b
In the chat:
  /model PROVIDER:MODEL [URL]   switch model from the next turn on (the conversation stays)
  /protocol native|text         switch tool protocol
  /save FILE                    save the conversation (resume with --resume FILE)
  /exit                         leave (or Ctrl-D). Ctrl-C stops the running task.
"""


@click.command("chat", epilog=CHAT_HELP)
@model_options
@click.option(
    "--max-steps",
    type=click.IntRange(1, 100),
    default=CHAT_STEPS,
    show_default=True,
    help="Steps per turn of the chat agent.",
)
@click.option(
    "--resume",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Continue a saved conversation.",
)
@click.option(
    "--save",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Save the conversation to this file after every turn.",
)
@click.option(
    "--page",
    is_flag=True,
    help="Page-helper mode: inspect the agent browser's current tab, try CSS/JS live in TEMP "
    "panes, and save rules (each save asks you first).",
)
@pass_context
def chat_command(
    ctx: Context,
    model: str | None,
    base_url: str | None,
    confirm: str | None,
    tool_protocol: str | None,
    events: str,
    max_steps: int,
    resume: Path | None,
    save: Path | None,
    page: bool,
) -> None:
    """Talk to deskpilot: it does GUI work through computer_use_task, and can read files and
    run commands (each with your confirmation).

    With --page, it works on the page open in the agent browser: it looks at the page,
    tries CSS/JS live, asks you to check, and saves a rule (applied to every matching page
    from then on) only after you agree — each save with its own confirmation. Manage saved
    rules with `deskpilot rules`."""
    settings = ctx.override(
        model=model, base_url=base_url, confirm=confirm, tool_protocol=tool_protocol
    )
    provider = provider_for(settings, model, base_url)
    conversation: Conversation | None = None
    if resume is not None:
        try:
            conversation, _meta = load_conversation(resume)
        except DeskpilotError as exc:
            fail(exc)
    run_async(_chat(settings, provider, conversation, events, max_steps, save, page))


async def _chat(
    settings: Settings,
    provider: Provider,
    conversation: Conversation | None,
    events: str,
    max_steps: int,
    save: Path | None,
    page: bool = False,
) -> None:
    console = Console()
    controller = StopController()
    main = asyncio.current_task()
    printer = event_printer(events, console)
    async with open_session(
        settings, surface="chat", approver=TerminalApprover(), observe=printer
    ) as tctx:
        chat = ChatSession(
            provider,
            tctx,
            conversation=conversation,
            max_steps=max_steps,
            tool_protocol=settings.tool_protocol,
            controller=controller,
            page=page,
        )
        mode = " (page helper)" if page else ""
        console.print(
            f"deskpilot chat{mode} with {provider.label} — /exit to leave, Ctrl-C to stop"
        )
        try:
            with stop_on_signals(controller, on_idle=_cancel(main)):
                await _chat_loop(chat, console, events, save)
        except asyncio.CancelledError:
            console.print()
        finally:
            await chat.aclose()


def _cancel(task: asyncio.Task[Any] | None) -> Callable[[], None]:
    def cancel() -> None:
        if task is not None:
            task.cancel()

    return cancel


async def _chat_loop(chat: ChatSession, console: Console, events: str, save: Path | None) -> None:
    while True:
        console.print("[bold]you>[/bold] ", end="")
        line = await read_line_from(sys.stdin)
        if line is None:
            return
        text = line.strip()
        command, _, rest = text.partition(" ")
        if not text:
            continue
        if command in ("/exit", "/quit"):
            return
        if command == "/model" and rest:
            spec, _, url = rest.strip().partition(" ")
            try:
                switched = await chat.switch(spec, url.strip() or None)
            except DeskpilotError as exc:
                console.print(f"[red]{exc}[/red]")
            else:
                console.print(f"now using {switched.label}")
            continue
        if command == "/protocol" and rest.strip() in ("native", "text"):
            chat.tool_protocol = "native" if rest.strip() == "native" else "text"
            continue
        if command == "/save" and rest:
            chat.save(Path(rest.strip()))
            console.print(f"saved to {rest.strip()}")
            continue
        result = await chat.send(text)
        if events != "jsonl":
            console.print(result.answer, markup=False, highlight=False)
        if save is not None:
            chat.save(save)


COMMANDS: list[click.Command] = [chat_command]
