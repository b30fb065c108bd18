"""``deskpilot run GOAL`` (one computer-use task) and ``deskpilot chat`` (the parent agent)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from deskpilot.agent.approvers import TerminalApprover, read_line_from
from deskpilot.agent.chat import CHAT_STEPS, ChatSession
from deskpilot.agent.chips import ChipPrinter, JsonlPrinter
from deskpilot.agent.conversation import Conversation
from deskpilot.agent.loop import RunResult, StopController
from deskpilot.agent.providers import Provider, get_provider
from deskpilot.agent.session_store import load_conversation
from deskpilot.agent.task import computer_use_task
from deskpilot.audit import AuditLog
from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.config import CONFIRM_MODES, Settings
from deskpilot.errors import DeskpilotError
from deskpilot.events import EventSink, Fanout
from deskpilot.runtime import tool_context

EXIT_HELP = """\b
Exit codes:
  0  done: the model answered
  3  needs attention: step budget or timeout reached, the provider failed, or the model
     kept writing malformed tool calls (the answer says what was done and what remains)
  4  stopped: Ctrl-C (or SIGTERM) stopped the run; the answer is a progress summary
  2  configuration: no model, no API key, bad flag or config file
  1  any other error
"""


def model_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.option(
                "--model",
                metavar="PROVIDER:MODEL",
                default=None,
                help="openai:, anthropic:, gemini:, compatible: or scripted:FILE "
                "(default: DESKPILOT_MODEL or `model` in the config file).",
            ),
            click.option(
                "--base-url",
                metavar="URL",
                default=None,
                help="API endpoint: required for compatible: (e.g. "
                "http://127.0.0.1:8000/v1); overrides it for the others.",
            ),
            click.option(
                "--confirm",
                type=click.Choice(CONFIRM_MODES),
                default=None,
                help="What asks for a yes: all acting tools, consequential ones (default), "
                "or none (trusted sandboxes). With no terminal, asking means no.",
            ),
            click.option(
                "--tool-protocol",
                type=click.Choice(["native", "text"]),
                default=None,
                help="native function calling (default) or the @@TOOL@@ text protocol.",
            ),
            click.option(
                "--events",
                "events",
                type=click.Choice(["chips", "jsonl"]),
                default="chips",
                show_default=True,
                help="Show events as compact chips, or print them as JSON lines.",
            ),
        ]
    ):
        func = option(func)
    return func


def _provider(settings: Settings, model: str | None, base_url: str | None) -> Provider:
    try:
        return get_provider(model or settings.model, settings, base_url=base_url)
    except DeskpilotError as exc:
        fail(exc)
        raise  # unreachable


@contextlib.contextmanager
def _sinks(settings: Settings, events: str, console: Console) -> Iterator[EventSink]:
    """Every event goes to the audit log, then to the chips (or JSON lines)."""
    printer: EventSink = JsonlPrinter(sys.stdout) if events == "jsonl" else ChipPrinter(console)
    with AuditLog(settings.audit_db) as audit:
        yield Fanout(audit, printer)


@contextlib.contextmanager
def _stop_on_signals(controller: StopController, on_idle: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C / SIGTERM stop the innermost run; with nothing running, ``on_idle``. A second
    Ctrl-C during the same stop interrupts for good."""
    loop = asyncio.get_running_loop()
    pressed = {"count": 0}

    def handle() -> None:
        if not controller.active:
            on_idle()
            return
        pressed["count"] += 1
        if pressed["count"] > 1:
            loop.remove_signal_handler(signal.SIGINT)  # the next Ctrl-C raises
        print("\ndeskpilot: stopping…", file=sys.stderr)
        controller.stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, handle)
    try:
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


@click.command("run", epilog=EXIT_HELP)
@click.argument("goal")
@model_options
@click.option(
    "--window",
    "window_id",
    metavar="ID",
    default=None,
    help="Reuse this window for every step (pid/title or pid/windowNumber).",
)
@click.option(
    "--max-steps",
    type=click.IntRange(1, 1000),
    default=None,
    help="Step budget (default 30; config max_steps).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1, 86400),
    default=None,
    help="Wall-clock limit in seconds (default 600).",
)
@pass_context
def run_command(
    ctx: Context,
    goal: str,
    model: str | None,
    base_url: str | None,
    confirm: str | None,
    tool_protocol: str | None,
    events: str,
    window_id: str | None,
    max_steps: int | None,
    timeout: float | None,
) -> None:
    """Do one task in the desktop's apps and print the answer.

    \b
      deskpilot run "In the calculator, work out 12*7 and tell me the result"
      deskpilot run --model compatible:qwen2.5-vl --base-url http://127.0.0.1:8000/v1 "..."
      deskpilot run --model scripted:demo/calculator.json "..."   # replay, no model needed

    The answer goes to stdout, the live chips to stderr; every event is also written to the
    audit log (`deskpilot log`).
    """
    settings = ctx.override(
        model=model,
        base_url=base_url,
        confirm=confirm,
        tool_protocol=tool_protocol,
        max_steps=max_steps,
        timeout=timeout,
    )
    provider = _provider(settings, model, base_url)
    console = Console(stderr=True)
    result = run_async(_run(settings, provider, goal, window_id, events, console))
    if events != "jsonl":
        click.echo(result.answer)
    sys.exit(result.exit_code)


async def _run(
    settings: Settings,
    provider: Provider,
    goal: str,
    window_id: str | None,
    events: str,
    console: Console,
) -> RunResult:
    controller = StopController()
    with _sinks(settings, events, console) as emit:
        approver = TerminalApprover()
        async with provider, tool_context(settings, approver=approver, emit=emit) as tctx:
            with _stop_on_signals(controller, on_idle=_stop_pending(controller)):
                return await computer_use_task(
                    goal, window_id, provider=provider, ctx=tctx, controller=controller
                )


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
) -> None:
    """Talk to deskpilot: it does GUI work through computer_use_task, and can read files and
    run commands (each with your confirmation)."""
    settings = ctx.override(
        model=model, base_url=base_url, confirm=confirm, tool_protocol=tool_protocol
    )
    provider = _provider(settings, model, base_url)
    conversation: Conversation | None = None
    if resume is not None:
        try:
            conversation, _meta = load_conversation(resume)
        except DeskpilotError as exc:
            fail(exc)
    run_async(_chat(settings, provider, conversation, events, max_steps, save))


async def _chat(
    settings: Settings,
    provider: Provider,
    conversation: Conversation | None,
    events: str,
    max_steps: int,
    save: Path | None,
) -> None:
    console = Console()
    controller = StopController()
    main = asyncio.current_task()
    with _sinks(settings, events, console) as emit:
        async with tool_context(settings, approver=TerminalApprover(), emit=emit) as tctx:
            chat = ChatSession(
                provider,
                tctx,
                conversation=conversation,
                max_steps=max_steps,
                tool_protocol=settings.tool_protocol,
                controller=controller,
            )
            console.print(f"deskpilot chat with {provider.label} — /exit to leave, Ctrl-C to stop")
            try:
                with _stop_on_signals(controller, on_idle=_cancel(main)):
                    await _chat_loop(chat, console, events, save)
            except asyncio.CancelledError:
                console.print()
            finally:
                await chat.aclose()


def _stop_pending(controller: StopController) -> Callable[[], None]:
    def stop() -> None:
        print("\ndeskpilot: stopping…", file=sys.stderr)
        controller.stop(pending=True)

    return stop


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


COMMANDS: list[click.Command] = [run_command, chat_command]
