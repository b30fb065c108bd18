"""TEMP panes: live, unsaved CSS or JS on one tab — each set replaces the last, the pane stays
applied across reloads of its tab, and goes when closed (its state lives in the extension's
``storage.session``, so separate deskpilot processes share it)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field

from deskpilot.errors import PageError
from deskpilot.pages import service
from deskpilot.pages.browser import AgentBrowser, Tab
from deskpilot.pages.cdp import exception_line, exception_text
from deskpilot.pages.link import page_browser
from deskpilot.pages.store import extension_dir
from deskpilot.pages.tool_args import PaneArg, TabArg, parse_pane
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext


async def open_pane(agent: AgentBrowser, pane: str) -> tuple[Tab, int, dict[str, Any]]:
    kind, tab_id = parse_pane(pane)
    t = await agent.current(tab_id)
    if tab_id is None:
        tab_id = int((await t.bridge({"op": "whoami"}))["tab"])
    got = (await t.bridge({"op": "pane-get", "tab": tab_id, "kind": kind})).get("pane")
    if not got:
        raise PageError(
            f"no_such_pane: no {kind} pane is open on tab {tab_id} (open it with "
            "open_temp_pane; a pane closes with close_temp_pane, when its tab closes, or when "
            "a rule is saved from it)"
        )
    return t, tab_id, got


@tool(risk=Risk.ACTS, title="Open TEMP pane")
async def open_temp_pane(
    ctx: ToolContext,
    kind: Annotated[Literal["css", "js"], Field(description="css or js")],
    tab: TabArg = None,
) -> ToolResult:
    """Open a TEMP pane (CSS or JS) on the tab: live code that is not saved. Put code in it
    with set_temp_pane_code; it stays applied across reloads of the tab until closed."""
    async with page_browser(ctx) as agent:
        t = await agent.current(tab)
        tab_id = int((await t.bridge({"op": "whoami"}))["tab"])
        reply = await t.bridge({"op": "pane-open", "tab": tab_id, "kind": kind, "url": t.url})
    pane = f"{kind}-{tab_id}"
    again = bool(reply.get("already_open"))
    text = (
        f"TEMP {kind.upper()} pane {pane} {'was already open' if again else 'opened'} on tab "
        f"{tab_id} ({t.url}). Put code in it with set_temp_pane_code"
        f'{{"pane": "{pane}", "code": ...}}; each set replaces the last.'
    )
    data = {"pane_id": pane, "kind": kind, "tab": tab_id, "url": t.url, "already_open": again}
    return ToolResult(text, data=data, summary=f"{pane} {'(already open)' if again else 'open'}")


@tool(risk=Risk.ACTS, title="Set TEMP pane code")
async def set_temp_pane_code(
    ctx: ToolContext,
    pane: PaneArg,
    code: Annotated[
        str,
        Field(
            max_length=200_000,
            description="CSS, or a JS function body (it may return a cleanup function).",
        ),
    ],
) -> ToolResult:
    """Replace a TEMP pane's code and apply it to the live page now: the CSS pane says how
    many CSS rules parsed; the JS pane runs the code (a function body, like a saved rule's)
    and returns its value or the exception with its line."""
    kind, _tab = parse_pane(pane)
    async with page_browser(ctx) as agent:
        t, tab_id, _state = await open_pane(agent, pane)
        await service.ensure_runtime(t)
        if kind == "css":
            parsed = int(await t.value(f"window.__deskpilotPages.paneCss({json.dumps(code)})"))
            await t.bridge({"op": "pane-set", "tab": tab_id, "kind": kind, "code": code})
            warn = (
                ""
                if parsed or not code.strip()
                else (" — no rule parsed: check the CSS syntax (CSS errors are otherwise silent)")
            )
            return ToolResult(
                f"CSS pane {pane} applied to {t.url}: {parsed} rule{'s' * (parsed != 1)} "
                f"parsed{warn}. Ask the user to check the page.",
                data={"ok": True, "applied": True, "rules_parsed": parsed},
                summary=f"{parsed} CSS rule{'s' * (parsed != 1)} parsed",
            )
        file = _pane_file(ctx, tab_id, code)
        await t.bridge({"op": "pane-set", "tab": tab_id, "kind": kind, "code": code, "file": file})
        expr = f"window.__deskpilotPages.paneRun(function (dp) {{\n{code}\n}})"
        result = await t.evaluate(expr, await_promise=True)
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        line, column = exception_line(details)
        line = max(1, line - 1)  # the code starts on the wrapper's second line
        message = exception_text(details)
        return ToolResult.error(
            f"js_exception in pane {pane} at line {line}, column {column}: {message}"
        )
    value = result.get("result", {}).get("value") or {}
    text = str(value.get("text", "undefined"))
    return ToolResult(
        f"JS pane {pane} ran on {t.url}; result ({value.get('type', '?')}): {text}",
        data={"ok": True, "result": text, "type": value.get("type")},
        summary=f"ran; {value.get('type', '?')} {text[:60]}",
    )


def _pane_file(ctx: ToolContext, tab_id: int, code: str) -> str:
    """The JS pane's code as an extension file (re-run in the tab after a reload)."""
    rel = f"panes/{tab_id}.js"
    path = extension_dir(ctx.settings) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "window.__deskpilotPages && window.__deskpilotPages.paneRun(function (dp) {\n"
        f"{code}\n}});\n",
        encoding="utf-8",
    )
    return rel


@tool(risk=Risk.ACTS, title="Close TEMP pane")
async def close_temp_pane(ctx: ToolContext, pane: PaneArg) -> ToolResult:
    """Close a TEMP pane: its CSS is removed from the page (a JS pane's returned cleanup
    function runs). Nothing is saved."""
    kind, _tab = parse_pane(pane)
    async with page_browser(ctx) as agent:
        t, tab_id, _state = await open_pane(agent, pane)
        await close_pane(ctx, t, kind, tab_id)
    return ToolResult(
        f"TEMP pane {pane} closed; its effect is gone from {t.url}.",
        data={"ok": True},
        summary=f"{pane} closed",
    )


async def close_pane(ctx: ToolContext, t: Tab, kind: str, tab_id: int) -> None:
    await service.ensure_runtime(t)
    if kind == "css":
        await t.value("window.__deskpilotPages.paneCss(null)")
    else:
        await t.value("window.__deskpilotPages.paneStop()")
        (extension_dir(ctx.settings) / "panes" / f"{tab_id}.js").unlink(missing_ok=True)
    await t.bridge({"op": "pane-close", "tab": tab_id, "kind": kind})
