"""The page tools that look: ``query_page`` (the live page's matching HTML, capped) and
``list_structure`` (the rule library, without the code)."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field

from deskpilot.errors import PageError
from deskpilot.pages.extension import asset
from deskpilot.pages.link import page_browser
from deskpilot.pages.store import open_library
from deskpilot.pages.tool_args import TabArg
from deskpilot.pages.tree import structure
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext

MAX_MATCHES = 5
MAX_HTML = 2000
MAX_TOTAL = 8000


@tool(risk=Risk.READ_ONLY, title="Query page", idempotent=True)
async def query_page(
    ctx: ToolContext,
    selector: Annotated[
        str, Field(min_length=1, max_length=2000, description="A CSS selector, e.g. .comments")
    ],
    tab: TabArg = None,
) -> ToolResult:
    """Look at the live page in the agent browser: the number of elements matching a CSS
    selector and their HTML (at most 5 matches, 2,000 characters each; script/style bodies
    and data: URLs elided; the true count is always given)."""
    async with page_browser(ctx) as agent:
        t = await agent.current(tab)
        expr = f"{asset('query.js')}({json.dumps(selector)}, {MAX_MATCHES}, {MAX_HTML})"
        found = await t.value(expr)
    if not isinstance(found, dict):
        raise PageError("the page did not answer the query (it may be navigating): try again")
    if "error" in found:
        return ToolResult.error(f"query_page: bad selector — {found['error']}")
    matches, total, shown = found["matches"], 0, []
    for i, m in enumerate(matches, 1):
        if total + len(m["html"]) > MAX_TOTAL:
            break
        total += len(m["html"])
        cut = f"\n… (cut at {MAX_HTML} of {m['chars']} chars)" if m["truncated"] else ""
        shown.append(f"[{i}] {m['html']}{cut}")
    count = int(found["count"])
    head = f"{count} match{'es' if count != 1 else ''} for {selector!r} on {found['url']}" + (
        f"; showing {len(shown)}" if count > len(shown) else ""
    )
    data = {
        "url": found["url"],
        "selector": selector,
        "count": count,
        "shown": len(shown),
        "matches": [{"i": i, **m} for i, m in enumerate(matches[: len(shown)], 1)],
    }
    return ToolResult(
        "\n".join([head, *shown]), data=data, summary=f"{count} match{'es' * (count != 1)}"
    )


@tool(risk=Risk.READ_ONLY, title="List rule structure", idempotent=True)
async def list_structure(ctx: ToolContext) -> ToolResult:
    """The rule library's folders, groups and rules with their ids, enabled flags, URL
    patterns and code sizes (not the code): where new rules can go and what exists."""
    with open_library(ctx.settings) as lib:
        tree = lib.tree()
    data = structure(tree)
    rules = sum(len(g.rules) for f in tree for g in f.groups)
    groups = sum(len(f.groups) for f in tree)
    if not tree:
        text = "The rule library is empty: create_folder, then create_group, then create_rule."
    else:
        text = json.dumps(data, ensure_ascii=False, indent=1)
    return ToolResult(
        text, data=data, summary=f"{len(tree)} folders, {groups} groups, {rules} rules"
    )
