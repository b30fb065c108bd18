"""``deskpilot run GOAL`` (one computer-use task) and ``deskpilot chat`` (the parent agent)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import click
from rich.console import Console

from deskpilot.agent.approvers import TerminalApprover, read_line_from
from deskpilot.agent.chat import CHAT_STEPS, ChatSession
from deskpilot.agent.chips import ChipPrinter, JsonlPrinter
from deskpilot.agent.conversation import Conversation
from deskpilot.agent.loop import RunResult, StopController
from deskpilot.agent.native_run import load_checkpoint, resume_native_task, run_native_task
from deskpilot.agent.native_setup import NativeTerminalApprover, native_target
from deskpilot.agent.providers import Provider, get_provider
from deskpilot.agent.session_store import load_conversation
from deskpilot.agent.task import computer_use_task
from deskpilot.audit import AuditLog
from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.config import CONFIRM_MODES, Settings
from deskpilot.errors import ConfigError, DeskpilotError
from deskpilot.events import EventSink, Fanout
from deskpilot.runtime import tool_context

EXIT_HELP = """\b
Exit codes:
  0  done: the model answered
  3  needs attention: step budget or timeout reached, the provider failed, the model
     kept writing malformed tool calls, or a native run was paused (the answer says what
     was done and what remains)
  4  stopped: Ctrl-C (or SIGTERM), or "s" at a computer call's prompt, stopped the run;
     the answer is a progress summary
  2  configuration: no model, no API key, no native computer tool for --native, bad flag
     or config file
  1  any other error

\b
Native computer use (--native, --hybrid):
  The model sees screenshots and answers with its vendor's computer tool (OpenAI computer /
  computer_use_preview, Anthropic computer_2025..., Gemini computer use); every action goes
  through the same policy, confirmation and audit log as the element tools. A computer call
  with the vendor's safety checks always asks you (with no terminal it is declined); other
  calls ask only with --confirm all. At a computer call's prompt, "p" pauses the run and
  saves it; continue with --resume FILE.
"""

Mode = Literal["loop", "native", "hybrid"]


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
    Ctrl-C during the same stop interrupts for good. Outside the main thread (a run embedded
    in another program) signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
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
@click.argument("goal", required=False)
@model_options
@click.option(
    "--native",
    is_flag=True,
    help="Use the model's native computer tool (screenshots in, pixel actions out) instead "
    "of the element tools. Needs a computer-use model: openai:gpt-5.4 (or later, or "
    "computer-use-preview), anthropic:claude-sonnet-4-5 and other Claude 4+/5 models, "
    "gemini:gemini-2.5-computer-use-preview-10-2025, gemini-3.5-flash.",
)
@click.option(
    "--hybrid",
    is_flag=True,
    help="Like --native, and also offer the nine element tools (read_screen_ax, perform, …) "
    "in the same run.",
)
@click.option(
    "--resume",
    "resume_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Continue a native run paused at a computer call's prompt (its checkpoint file; "
    "the goal and model come from it).",
)
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
    native: bool,
    hybrid: bool,
    resume_file: Path | None,
    window_id: str | None,
    max_steps: int | None,
    timeout: float | None,
) -> None:
    """Do one task in the desktop's apps and print the answer.

    \b
      deskpilot run "In the calculator, work out 12*7 and tell me the result"
      deskpilot run --model compatible:qwen2.5-vl --base-url http://127.0.0.1:8000/v1 "..."
      deskpilot run --model scripted:calculator "..."   # a recorded replay, no model needed
      deskpilot run --native --model anthropic:claude-sonnet-4-5 "..."   # computer tool
      deskpilot run --hybrid --model openai:gpt-5.4 "..."   # element tools + computer tool

    The answer goes to stdout, the live chips to stderr; every event is also written to the
    audit log (`deskpilot log`).
    """
    if native and hybrid:
        fail(ConfigError("--native and --hybrid exclude each other: --hybrid is --native plus "
                         "the element tools"))  # fmt: skip
    mode: Mode = "hybrid" if hybrid else "native" if native else "loop"
    checkpoint: dict[str, Any] | None = None
    if resume_file is not None:
        try:
            checkpoint = load_checkpoint(resume_file)
        except DeskpilotError as exc:
            fail(exc)
        model = model or str(checkpoint["plan"]["spec"])
        goal = goal or str(checkpoint["plan"]["goal"])
        mode = "hybrid" if checkpoint["plan"].get("hybrid") else "native"
    if not goal:
        fail(ConfigError("GOAL is missing: deskpilot run GOAL (or --resume FILE)"))
    if mode != "loop" and tool_protocol == "text":
        fail(ConfigError("--native/--hybrid use the vendor's computer tool, not the text protocol"))
    settings = ctx.override(
        model=model,
        base_url=base_url,
        confirm=confirm,
        tool_protocol=tool_protocol,
        max_steps=max_steps,
        timeout=timeout,
    )
    provider = _provider(settings, model, base_url)
    if mode != "loop":
        try:
            native_target(provider)
        except DeskpilotError as exc:
            fail(exc)
    console = Console(stderr=True)
    result = run_async(
        run_goal(
            settings,
            provider,
            goal,
            window_id=window_id,
            events=events,
            console=console,
            mode=mode,
            resume=checkpoint,
        )
    )
    if events != "jsonl":
        click.echo(result.answer)
    sys.exit(result.exit_code)


async def run_goal(
    settings: Settings,
    provider: Provider,
    goal: str,
    *,
    window_id: str | None = None,
    events: str = "chips",
    console: Console,
    mode: Mode = "loop",
    resume: Mapping[str, Any] | None = None,
) -> RunResult:
    """What ``deskpilot run`` does once its options are read (``make demo`` calls it too):
    chips (or JSON lines) and the audit log, the terminal approver, Ctrl-C, the run."""
    controller = StopController()
    with _sinks(settings, events, console) as emit:
        approver = TerminalApprover() if mode == "loop" else NativeTerminalApprover()
        async with provider, tool_context(settings, approver=approver, emit=emit) as tctx:
            with _stop_on_signals(controller, on_idle=_stop_pending(controller)):
                if resume is not None:
                    return await resume_native_task(
                        resume, provider=provider, ctx=tctx, controller=controller
                    )
                if mode == "loop":
                    return await computer_use_task(
                        goal, window_id, provider=provider, ctx=tctx, controller=controller
                    )
                return await run_native_task(
                    goal, window_id, provider=provider, ctx=tctx, hybrid=mode == "hybrid",
                    controller=controller,
                )  # fmt: skip


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
