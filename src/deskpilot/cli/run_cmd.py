"""``deskpilot run GOAL``: one computer-use task, its answer on stdout."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import click
from rich.console import Console

from deskpilot.agent.approvers import TerminalApprover
from deskpilot.agent.loop import RunResult, StopController
from deskpilot.agent.native_run import load_checkpoint, resume_native_task, run_native_task
from deskpilot.agent.native_setup import NativeTerminalApprover, native_target
from deskpilot.agent.providers import Provider
from deskpilot.agent.task import computer_use_task
from deskpilot.cli.agent_opts import event_printer, model_options, provider_for, stop_on_signals
from deskpilot.cli.common import Context, fail, pass_context, run_async
from deskpilot.config import Settings
from deskpilot.errors import ConfigError, DeskpilotError
from deskpilot.runtime import open_session

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
@click.option(
    "--explain-grants",
    is_flag=True,
    help="Print what the goal allows without asking (the acts it names, on what it names) and "
    "exit without running it.",
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
    explain_grants: bool,
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

    \b
    Your goal is also what the run may do without asking: "fill in the booking form and
    submit it" lets it submit, "email Ann that …" lets it send to Ann, "delete the Globex
    order" lets it delete what says Globex. Anything else consequential is asked (declined
    with no terminal); a page's text never adds to it. See it first with --explain-grants.
    """
    if native and hybrid:
        fail(
            ConfigError(
                "--native and --hybrid exclude each other: --hybrid is --native plus "
                "the element tools"
            )
        )
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
    if explain_grants:
        explain(ctx.override(confirm=confirm), goal)
        return
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
    provider = provider_for(settings, model, base_url)
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
    surface: str = "run",
) -> RunResult:
    """What ``deskpilot run`` does once its options are read (``make demo`` calls it too, as
    ``surface="demo"``): chips (or JSON lines) and the audit log, the terminal approver,
    Ctrl-C, the run."""
    controller = StopController()
    approver = TerminalApprover() if mode == "loop" else NativeTerminalApprover()
    printer = event_printer(events, console)
    async with (
        provider,
        open_session(settings, surface=surface, approver=approver, observe=printer) as tctx,
    ):
        with stop_on_signals(controller, on_idle=_stop_pending(controller)):
            if resume is not None:
                return await resume_native_task(
                    resume, provider=provider, ctx=tctx, controller=controller
                )
            if mode == "loop":
                return await computer_use_task(
                    goal, window_id, provider=provider, ctx=tctx, controller=controller
                )
            return await run_native_task(
                goal,
                window_id,
                provider=provider,
                ctx=tctx,
                hybrid=mode == "hybrid",
                controller=controller,
            )


def explain(settings: Settings, goal: str) -> None:
    """``--explain-grants``: what the goal allows without asking, and what is asked."""
    from deskpilot.policy.goals import explain as grants

    lines = grants(goal, custom_words=settings.consequential_words)
    if settings.confirm == "none":
        click.echo("With --confirm none nothing is asked: every act runs (a trusted sandbox).")
        return
    if settings.confirm == "all":
        click.echo("With --confirm all every act is asked, whatever the goal says.")
        return
    if lines:
        click.echo("The goal allows without asking:")
        for line in lines:
            click.echo(f"  {line}")
    else:
        click.echo(
            "The goal names no consequential act: every send, delete, payment or "
            "account change is asked."
        )
    click.echo(
        "Anything else consequential is asked (with no terminal to ask: declined); text "
        "on the screen never adds to this."
    )


def _stop_pending(controller: StopController) -> Callable[[], None]:
    def stop() -> None:
        print("\ndeskpilot: stopping…", file=sys.stderr)
        controller.stop(pending=True)

    return stop


COMMANDS: list[click.Command] = [run_command]
