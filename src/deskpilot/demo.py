"""``make demo``: the agent on a sandbox desktop — "In the calculator, work out 12*7 and tell me
the result".

The goal runs through the same code as ``deskpilot run`` (:func:`deskpilot.cli.run_cmd.run_goal`:
chips, the audit log, the terminal approver, Ctrl-C) with the model you configured
(``DESKPILOT_MODEL``, ``model`` in the config file, or ``--model``). With none — or one that
cannot run — it replays recorded model replies (``scripted:calculator``) and says so. At the
end the run's markdown trace is exported from the audit log to ``OUT/trace.md``, with the
screenshots of the run and one of the calculator afterwards.

::

    python -m deskpilot.demo                     # the agent demo (make demo)
    python -m deskpilot.demo --model anthropic:claude-sonnet-4-5
    python -m deskpilot.demo --hybrid            # element tools + the native computer tool
    python -m deskpilot.demo --tools             # the tool transcript: each call by hand
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from deskpilot.agent.native_setup import native_target
from deskpilot.agent.providers import Provider, get_provider
from deskpilot.audit import AuditLog
from deskpilot.cli.run_cmd import Mode, run_goal
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.place import running_sandbox
from deskpilot.errors import DeskpilotError
from deskpilot.runtime import open_session
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

GOAL = "In the calculator, work out 12*7 and tell me the result"
REPLAYS: dict[Mode, str] = {
    "loop": "calculator",
    "native": "calculator-hybrid",
    "hybrid": "calculator-hybrid",
}
HOW_TO_USE_A_MODEL = (
    "To watch a real model instead: export ANTHROPIC_API_KEY=... and "
    "DESKPILOT_MODEL=anthropic:claude-sonnet-4-5 (or OPENAI_API_KEY with openai:gpt-5.4, "
    "GEMINI_API_KEY with gemini:gemini-2.5-flash, or compatible:MODEL with "
    "DESKPILOT_BASE_URL for a local server), then run make demo again — or pass "
    "--model PROVIDER:MODEL to python -m deskpilot.demo."
)

console = Console(highlight=False)


# -- the agent demo ---------------------------------------------------------------------------


def choose(settings: Settings, model: str | None, mode: Mode) -> tuple[Provider, Mode, str]:
    """The model asked for (``--model``), else the configured one if it can run, else the
    recorded replay; and, for a replay, why."""
    if model:  # asked for by name: a problem is an error, not a reason to replay
        provider = get_provider(model, settings)
        if mode != "loop":
            native_target(provider)
        return provider, mode, ""
    why = "No model is configured"
    if settings.model:
        try:
            provider = get_provider(settings.model, settings)
            if mode != "loop":
                native_target(provider)
            return provider, mode, ""
        except DeskpilotError as exc:
            why = f"The configured model {settings.model} cannot run here ({exc})"
    replay = REPLAYS[mode]
    provider = get_provider(f"scripted:{replay}", settings)
    note = (
        f"{why}, so this run REPLAYS recorded model replies (scripted:{replay}). The desktop, "
        "the calculator, the tools, the policy and the audit log are all real; the model's "
        f"words are a recording. {HOW_TO_USE_A_MODEL}"
    )
    return provider, "loop" if mode == "loop" else "hybrid", " ".join(note.split())


async def agent_demo(out: Path, model: str | None, mode: Mode) -> int:
    async with running_sandbox(load_settings(), size=(1024, 768)) as (sb, here):
        assert sb.info is not None
        console.print(
            f"[bold]Sandbox desktop[/] {sb.info.display} is up (Xvfb + D-Bus + AT-SPI "
            "+ openbox, 1024×768)."
        )
        settings = here.with_overrides(session="demo")
        provider, mode, replay = choose(settings, model, mode)
        if replay:
            console.print(
                Panel(
                    Text(replay),
                    title="[bold yellow]REPLAY, not a live model",
                    border_style="yellow",
                )
            )
        flags = {"loop": "", "native": "--native ", "hybrid": "--hybrid "}[mode]
        console.print(f"[bold]$ deskpilot run {flags}--model {provider.spec} {GOAL!r}[/]")
        result = await run_goal(
            settings, provider, GOAL, console=console, mode=mode, surface="demo"
        )
        console.rule("[bold]answer")
        console.print(result.answer, markup=False)
        value = await afterwards(settings, out / "calculator.png")
        trace = write_trace(settings, result.run_id, out)
    shots = trace.read_text(encoding="utf-8").count("![")
    console.rule("[bold]done")
    console.print(f"The calculator's display reads [bold]{value}[/] (read back after the run).")
    console.print(f"Markdown trace of the run: [bold]{_shown(trace)}[/] ({shots} screenshot(s))")
    console.print(f"Audit log: {settings.audit_db} (deskpilot log show {result.run_id[:12]})")
    if replay and value != "84":
        console.print("[red]demo failed: the replay did not bring the calculator to 84[/]")
        return 1
    return result.exit_code


async def afterwards(settings: Settings, shot: Path) -> str:
    """The calculator after the run: its display, and a screenshot for the trace."""
    tools = computer_use_tools()
    async with open_session(
        settings, surface="demo", label="demo: the calculator afterwards"
    ) as ctx:
        read = await tools.call("read_screen_ax", {}, ctx)
        picture = await tools.call("computer_use_screenshot", {}, ctx)
    m = re.search(r'textbox = "([^"]*)"', read.text)
    if picture.images:
        shot.write_bytes(picture.images[0].data)
    return m.group(1) if m else "?"


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def write_trace(settings: Settings, run_id: str, out: Path) -> Path:
    with AuditLog(settings.audit_db) as audit:
        text = audit.export_markdown(run_id, image_dir=out / "images", link_prefix="images/")
    if (out / "calculator.png").exists():
        text += "\n## The calculator after the run\n\n![the calculator](calculator.png)\n"
    path = out / "trace.md"
    path.write_text(text, encoding="utf-8")
    return path


# -- the tool transcript (--tools) --------------------------------------------------------------


async def _call(tools: ToolSet, ctx: ToolContext, name: str, args: dict[str, Any]) -> str:
    console.rule(f"[bold cyan]{name}[/] {json.dumps(args, ensure_ascii=False)}")
    start = time.perf_counter()
    result = await tools.call(name, args, ctx)
    ms = (time.perf_counter() - start) * 1000
    style = "red" if result.is_error else "green"
    console.print(
        Panel(
            result.text,
            title=f"{'error' if result.is_error else 'result'} ({ms:.0f} ms)",
            border_style=style,
            expand=False,
        )
    )
    if result.is_error:
        raise SystemExit(f"demo failed at {name}: {result.text}")
    for image in result.images:
        _IMAGES.append(image.data)
    return result.text


_IMAGES: list[bytes] = []


def _id(text: str, role: str, name: str) -> str:
    m = re.search(rf'^\s*{role} "{re.escape(name)}".* @(\S+)$', text, re.M)
    if m is None:
        raise SystemExit(f"demo failed: no {role} {name!r} in the read")
    return m.group(1)


async def tool_transcript(out: Path) -> int:
    """A sandbox, a calculator, 12×7 by element clicks — every tool call and its full result,
    exactly the text a model would receive."""
    base = load_settings()
    base = load_settings(env={**base.environ, "DESKPILOT_HOME": str(out / "home")})
    async with running_sandbox(base, size=(1024, 768)) as (sb, here):
        assert sb.info is not None
        console.print(
            f"[bold]Sandbox desktop[/] {sb.info.display} is up (Xvfb + D-Bus + AT-SPI + openbox)."
        )
        settings = here.with_overrides(confirm="none")
        tools = computer_use_tools()
        session = Session(name="demo-tools")  # in memory: the transcript starts from nothing
        async with open_session(
            settings, surface="demo", session=session, label="demo --tools: 12×7 by hand"
        ) as ctx:
            await _call(tools, ctx, "open_app", {"bundleId": "Calculator"})
            read = await _call(tools, ctx, "read_screen_ax", {})
            labels = ("1", "2", "×", "7", "=")
            steps = [{"elementID": _id(read, "button", label)} for label in labels]
            await _call(tools, ctx, "perform_sequence", {"steps": steps})
            after = await _call(tools, ctx, "read_screen_ax", {})
            m = re.search(r'textbox = "([^"]*)"', after)
            await _call(tools, ctx, "computer_use_screenshot", {})
        shot = out / "calculator.png"
        if _IMAGES:
            shot.write_bytes(_IMAGES[-1])
        value = m.group(1) if m else "?"
        console.rule("[bold]done")
        console.print(f"12 × 7 = [bold green]{value}[/] (read back from the calculator's display)")
        console.print(f"Window screenshot saved to [bold]{shot}[/]")
        console.print(
            f"Every call is in the audit log {settings.audit_db} "
            f"(DESKPILOT_HOME={out / 'home'} deskpilot log show last)"
        )
        if value != "84":
            raise SystemExit("demo failed: the calculator did not show 84")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="deskpilot's demo on a sandbox desktop")
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory")
    parser.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        default=None,
        help="the model to run (default: DESKPILOT_MODEL or the config file; "
        "none: a recorded replay)",
    )
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--native", action="store_true", help="the model's native computer tool")
    how.add_argument(
        "--hybrid", action="store_true", help="element tools and the native computer tool together"
    )
    how.add_argument(
        "--tools",
        action="store_true",
        help="no model: each tool call by hand, with its full result",
    )
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.tools:
        return asyncio.run(tool_transcript(out))
    mode: Mode = "hybrid" if args.hybrid else "native" if args.native else "loop"
    try:
        return asyncio.run(agent_demo(out, args.model, mode))
    except DeskpilotError as exc:
        console.print(Text(f"deskpilot: {exc}", style="red"))
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
