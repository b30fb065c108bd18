"""``make demo``: a sandbox desktop, a calculator, 12×7 by element clicks — the whole transcript.

Every tool call goes through the same ToolSet a model uses; the transcript shows exactly the
text a model would receive. Run: ``python -m deskpilot.demo [--out DIR]``.
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

from deskpilot.config import load_settings
from deskpilot.sandbox import Sandbox
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

console = Console(highlight=False)


async def _call(tools: ToolSet, ctx: ToolContext, name: str, args: dict[str, Any]) -> str:
    console.rule(f"[bold cyan]{name}[/] {json.dumps(args, ensure_ascii=False)}")
    start = time.perf_counter()
    result = await tools.call(name, args, ctx)
    ms = (time.perf_counter() - start) * 1000
    style = "red" if result.is_error else "green"
    console.print(Panel(result.text, title=f"{'error' if result.is_error else 'result'} "
                        f"({ms:.0f} ms)", border_style=style, expand=False))  # fmt: skip
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


async def demo(out: Path) -> None:
    with Sandbox(width=1024, height=768) as sb:
        assert sb.info is not None
        console.print(f"[bold]Sandbox desktop[/] {sb.info.display} is up "
                      f"(Xvfb + D-Bus + AT-SPI + openbox).")  # fmt: skip
        env = sb.app_env()
        env["DESKPILOT_SANDBOX"] = sb.info.runtime_dir
        env["DESKPILOT_HOME"] = str(out / "home")
        settings = load_settings(env=env).with_overrides(confirm="none")
        from deskpilot.runtime import tool_context

        tools = computer_use_tools()
        async with tool_context(settings, persist_session=False) as ctx:
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
        if value != "84":
            raise SystemExit("demo failed: the calculator did not show 84")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    asyncio.run(demo(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
