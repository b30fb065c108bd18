"""Keeping the agent browser in step with the rule library, and collecting rule errors.

After every library change the extension files are rewritten; if the agent browser runs, the
new rule set is pushed into its open documents (frames too) and its extension's service worker
(reached over CDP, woken if it sleeps: no web tab is needed) registers the new set for
documents that load from now on. Without a running browser the change applies when deskpilot
next starts it.
"""

from __future__ import annotations

import contextlib
import json
import logging

from deskpilot.config import Settings
from deskpilot.errors import BrowserUnavailable, PageError
from deskpilot.pages.browser import AgentBrowser, Tab, maybe_connect
from deskpilot.pages.cdp import exception_text, send
from deskpilot.pages.extension import RuleSet, push_script, write_extension
from deskpilot.pages.library import Library
from deskpilot.pages.store import extension_dir, open_library

log = logging.getLogger(__name__)


async def after_change(settings: Settings) -> str:
    """Rewrite the extension and bring a running browser up to date (attaching for this
    alone); a note for people."""
    async with maybe_connect(settings) as agent:
        return await apply_change(settings, agent)


async def apply_change(settings: Settings, agent: AgentBrowser | None) -> str:
    """Rewrite the extension and bring ``agent`` (None: no browser runs) up to date."""
    with open_library(settings) as lib:
        rs = write_extension(lib, extension_dir(settings))
    if agent is None:
        return "the agent browser is not running: the change applies when it next opens"
    tabs = await push(agent, rs)
    reply = await agent.worker_call("sync()")
    later = "" if reply is not None else "; pages loaded from now on get it after a restart"
    return f"applied to {tabs} open tab{'s' if tabs != 1 else ''}{later}"


async def push(agent: AgentBrowser, rs: RuleSet) -> int:
    """Bring every open document to ``rs``; the number of tabs reached."""
    reached = 0
    for page in agent.web_pages():
        try:
            tab = await agent.tab(page)
            for session, cid, _url in await tab.documents():
                for piece in push_script(rs):
                    params: dict[str, object] = {"expression": piece, "returnByValue": True}
                    if cid is not None:
                        params["contextId"] = cid
                    with contextlib.suppress(Exception):  # one frame gone must not stop the rest
                        await send(session, "Runtime.evaluate", params)
            reached += 1
        except PageError as exc:
            log.info("could not update %s: %s", page.url, exc)
    return reached


async def ensure_runtime(tab: Tab) -> None:
    """The page runtime in the tab's top document (an older tab may predate it)."""
    from deskpilot.pages.extension import runtime_js

    if await tab.value("typeof window.__deskpilotPages") != "object":
        await tab.value(runtime_js())


async def collect_errors(
    settings: Settings, lib: Library, agent: AgentBrowser | None = None
) -> int:
    """Move the rule errors pages reported into the library (from the extension's worker:
    any running agent browser, whatever tabs it shows); how many were new."""
    if agent is None:
        async with maybe_connect(settings) as found:
            return 0 if found is None else await collect_errors(settings, lib, found)
    reply = await agent.worker_call("drain()")
    count = 0
    for raw in (reply or {}).get("errors", []):
        try:
            e = json.loads(raw)
            if lib.record_error(
                str(e["rule"]),
                str(e["url"]),
                str(e["kind"]),
                str(e["message"]),
                str(e.get("at", "")),
            ):
                count += 1
        except (ValueError, KeyError, TypeError):
            continue
    return count


async def js_problem(agent: AgentBrowser | None, code: str) -> str | None:
    """Why ``code`` (a rule's function body) does not compile, checked in the agent browser's
    current tab; None if it compiles or no browser is there to ask."""
    if agent is None:
        return None
    try:
        tab = await agent.current()
        cid = await tab.page_world()
        reply = await send(
            tab.session,
            "Runtime.compileScript",
            {
                "expression": f"(function (dp) {{\n{code}\n}})",
                "sourceURL": "deskpilot-rule.js",
                "persistScript": False,
                **({"executionContextId": cid} if cid is not None else {}),
            },
        )
    except (PageError, BrowserUnavailable):
        return None
    details = reply.get("exceptionDetails")
    if not details:
        return None
    line = max(1, int(details.get("lineNumber", 0)))  # 0-based, after the wrapper's first line
    return f"{exception_text(details)} (line {line})"


async def pull_values(settings: Settings, lib: Library, agent: AgentBrowser | None = None) -> int:
    """Take into the library the userscript values pages wrote in the running agent browser
    (where they are newer than the library's: :mod:`deskpilot.pages.script_data`); how many
    scripts' values changed. Nothing when no agent browser runs."""
    from deskpilot.pages.script_data import take_browser_values

    if agent is None:
        async with maybe_connect(settings) as found:
            return 0 if found is None else await pull_values(settings, lib, found)
    reply = await agent.worker_call("dumpValues()")
    if not isinstance(reply, dict):
        return 0
    return len(take_browser_values(lib.db, reply))


async def menu_commands(agent: AgentBrowser) -> list[dict[str, object]]:
    """The menu commands userscripts registered (``GM_registerMenuCommand``) in the agent
    browser's tabs: tab, frame, url, title, rule, script, key, caption."""
    reply = await agent.worker_call("menus()")
    return [c for c in reply or [] if isinstance(c, dict)]


async def run_menu_command(agent: AgentBrowser, command: dict[str, object]) -> None:
    """Run one menu command (as :func:`menu_commands` lists it) in its frame."""
    args = ", ".join(json.dumps(command[k]) for k in ("tab", "frame", "rule", "key"))
    reply = await agent.worker_call(f"runMenu({args})")
    if not reply:
        raise PageError("the agent browser runs without deskpilot's page extension")
