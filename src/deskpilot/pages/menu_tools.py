"""The page tools for userscripts' menu commands (``GM_registerMenuCommand``): what the
scripts on the agent browser's tabs offer, and running one — as a Violentmonkey user picks a
command from the extension's popup."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from deskpilot.errors import InvalidArguments
from deskpilot.pages import service
from deskpilot.pages.link import page_browser
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext

TabFilter = Annotated[
    int | None, Field(description="Only this tab's commands (a tab id); default: every tab.")
]


def _line(n: int, c: dict[str, Any]) -> str:
    where = f"tab {c['tab']}" + (f" frame {c['frame']}" if c.get("frame") else "")
    return f"[{n}] {c['caption']!r} — {c['script']} ({where}: {c['url']})"


def _entry(c: dict[str, Any]) -> dict[str, Any]:
    return {k: c.get(k) for k in ("tab", "frame", "url", "rule", "script", "key", "caption")}


@tool(risk=Risk.READ_ONLY, title="List menu commands", idempotent=True)
async def list_menu_commands(ctx: ToolContext, tab: TabFilter = None) -> ToolResult:
    """The menu commands userscripts registered on the agent browser's open tabs
    (GM_registerMenuCommand): caption, script, tab. Run one with run_menu_command."""
    async with page_browser(ctx) as agent:
        found = [c for c in await service.menu_commands(agent) if tab is None or c["tab"] == tab]
    if not found:
        text = "No userscript registered a menu command on the open tabs."
    else:
        text = "\n".join(_line(n, c) for n, c in enumerate(found, 1))
    data = {"commands": [_entry(c) for c in found]}
    return ToolResult(text, data=data, summary=f"{len(found)} commands")


@tool(risk=Risk.ACTS, title="Run menu command")
async def run_menu_command(
    ctx: ToolContext,
    command: Annotated[
        str,
        Field(
            min_length=1,
            max_length=500,
            description="The command's caption (or its key, or its number in list_menu_commands).",
        ),
    ],
    tab: TabFilter = None,
) -> ToolResult:
    """Run a userscript's menu command on its tab, as picking it from the extension's menu
    does (what it does is the script's own)."""
    async with page_browser(ctx) as agent:
        found = [c for c in await service.menu_commands(agent) if tab is None or c["tab"] == tab]
        chosen = _pick(found, command)
        await service.run_menu_command(agent, chosen)
    return ToolResult(
        f"Ran {chosen['script']}'s menu command {chosen['caption']!r} on tab {chosen['tab']} "
        f"({chosen['url']}). Look at the page to see what it did.",
        data={"ok": True},
        summary=f"ran {chosen['caption']!r}",
    )


def _pick(found: list[dict[str, Any]], command: str) -> dict[str, Any]:
    if command.isdigit() and 1 <= int(command) <= len(found):
        return found[int(command) - 1]
    hits = [c for c in found if command in (c["caption"], c["key"])]
    if len(hits) == 1:
        return hits[0]
    known = "; ".join(_line(n, c) for n, c in enumerate(found, 1)) or "none"
    if not hits:
        raise InvalidArguments(f"no menu command {command!r} on the open tabs (there are: {known})")
    raise InvalidArguments(
        f"{len(hits)} commands are called {command!r}: give its number or a tab ({known})"
    )
