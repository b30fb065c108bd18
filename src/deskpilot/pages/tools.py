"""The page tools (seed 002): inspect the agent browser's tab, try CSS/JS live in TEMP panes,
save rules to the library — each save with its own confirmation.

They are ordinary deskpilot tools: called through ``ToolSet.call`` like the nine, so policy,
confirmation, the audit log, chips, MCP and the text protocol apply to them unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from deskpilot.errors import InvalidArguments, PageError
from deskpilot.pages import service
from deskpilot.pages.browser import AgentBrowser, Tab
from deskpilot.pages.cdp import exception_line, exception_text
from deskpilot.pages.extension import asset
from deskpilot.pages.library import Folder, Group, Library, Rule, structure
from deskpilot.pages.link import maybe_page_browser, page_browser
from deskpilot.pages.patterns import Pattern, Scope, every_url, parse_patterns
from deskpilot.pages.store import extension_dir, open_library
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, ToolSpec, tool
from deskpilot.tools.context import ToolContext

MAX_MATCHES = 5
MAX_HTML = 2000
MAX_TOTAL = 8000

TabArg = Annotated[
    int | None,
    Field(
        description="Tab id (from open_temp_pane or an earlier result); default: the tab the "
        "user sees in the agent browser."
    ),
]
PatternList = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=2048)]] | None,
    Field(
        max_length=50,
        description="URL patterns: * matches any string (the empty one too); "
        "a pattern without * is one exact URL; e.g. https://example.com/blog/*",
    ),
]
ExcludeList = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=2048)]] | None,
    Field(max_length=50, description="URL patterns that exclude (exclude wins over include)."),
]


def _patterns(include: list[str] | None, exclude: list[str] | None) -> tuple[Any, Any]:
    return parse_patterns(include, "include"), parse_patterns(exclude, "exclude")


# -- inspection -------------------------------------------------------------------------------


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


# -- TEMP panes ------------------------------------------------------------------------------

PaneArg = Annotated[
    str,
    Field(
        min_length=2,
        max_length=40,
        description="The pane id open_temp_pane returned, e.g. css-1234.",
    ),
]


def _pane(pane: str) -> tuple[str, int | None]:
    """``css-N``/``js-N`` (the pane of tab N), or ``css``/``js`` (the current tab's)."""
    kind, _, tab = pane.strip().partition("-")
    if kind not in ("css", "js") or not (tab.isdigit() or tab == ""):
        raise InvalidArguments(
            f"pane {pane!r} is not a pane id: use the pane_id open_temp_pane returned "
            "(css-N or js-N), or css / js for the current tab's pane"
        )
    return kind, int(tab) if tab else None


async def _open_pane(agent: AgentBrowser, pane: str) -> tuple[Tab, int, dict[str, Any]]:
    kind, tab_id = _pane(pane)
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
    kind, _tab = _pane(pane)
    async with page_browser(ctx) as agent:
        t, tab_id, _state = await _open_pane(agent, pane)
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
    kind, _tab = _pane(pane)
    async with page_browser(ctx) as agent:
        t, tab_id, _state = await _open_pane(agent, pane)
        await _close(ctx, t, kind, tab_id)
    return ToolResult(
        f"TEMP pane {pane} closed; its effect is gone from {t.url}.",
        data={"ok": True},
        summary=f"{pane} closed",
    )


async def _close(ctx: ToolContext, t: Tab, kind: str, tab_id: int) -> None:
    await service.ensure_runtime(t)
    if kind == "css":
        await t.value("window.__deskpilotPages.paneCss(null)")
    else:
        await t.value("window.__deskpilotPages.paneStop()")
        (extension_dir(ctx.settings) / "panes" / f"{tab_id}.js").unlink(missing_ok=True)
    await t.bridge({"op": "pane-close", "tab": tab_id, "kind": kind})


# -- persistence (each call confirmed) --------------------------------------------------------


async def _apply(ctx: ToolContext) -> str:
    """Bring the agent browser (if it runs) up to date with the library."""
    async with maybe_page_browser(ctx) as agent:
        return await service.apply_change(ctx.settings, agent)


def _shown_patterns(include: list[str] | None, exclude: list[str] | None) -> str:
    inc = ", ".join(include or []) or "any URL"
    exc = f"; exclude {', '.join(exclude)}" if exclude else ""
    return f"{inc}{exc}"


async def _explain_folder(ctx: ToolContext, v: Mapping[str, Any]) -> list[str]:
    _patterns(v.get("include"), v.get("exclude"))
    return [f"saves folder {v['name']!r} for {_shown_patterns(v.get('include'), v.get('exclude'))}"]


@tool(risk=Risk.PERSISTS, title="Create folder", explain=_explain_folder)
async def create_folder(
    ctx: ToolContext,
    name: Annotated[str, Field(min_length=1, max_length=200)],
    label: Annotated[str | None, Field(max_length=3, description="Up to 3 letters.")] = None,
    include: PatternList = None,
    exclude: ExcludeList = None,
) -> ToolResult:
    """Save a new folder in the rule library (the user confirms). A folder's URL patterns
    limit every group and rule in it."""
    inc, exc = _patterns(include, exclude)
    with open_library(ctx.settings) as lib:
        folder = lib.create_folder(name, label=label, include=inc, exclude=exc)
    await _apply(ctx)
    return ToolResult(
        f"Saved folder {folder.id} {folder.name!r}. Create a group in it with create_group.",
        data={"ok": True, "id": folder.id},
        summary=f"folder {folder.id}",
    )


async def _explain_group(ctx: ToolContext, v: Mapping[str, Any]) -> list[str]:
    _patterns(v.get("include"), v.get("exclude"))
    with open_library(ctx.settings) as lib:
        folder = lib.find(v["folder_id"])
    if not isinstance(folder, Folder):
        raise InvalidArguments(f"{v['folder_id']!r} is not a folder id")
    shown = _shown_patterns(v.get("include"), v.get("exclude"))
    return [f"saves group {v['name']!r} in folder {folder.name!r} for {shown}"]


@tool(risk=Risk.PERSISTS, title="Create group", explain=_explain_group)
async def create_group(
    ctx: ToolContext,
    folder_id: Annotated[str, Field(min_length=3, max_length=40, description="f_… id")],
    name: Annotated[str, Field(min_length=1, max_length=200)],
    include: PatternList = None,
    exclude: ExcludeList = None,
) -> ToolResult:
    """Save a new group in a folder (the user confirms)."""
    inc, exc = _patterns(include, exclude)
    with open_library(ctx.settings) as lib:
        group = lib.create_group(folder_id, name, include=inc, exclude=exc)
    await _apply(ctx)
    return ToolResult(
        f"Saved group {group.id} {group.name!r}. Create rules in it with create_rule.",
        data={"ok": True, "id": group.id},
        summary=f"group {group.id}",
    )


def _rule_scope(
    lib: Library, group_id: str, inc: tuple[Pattern, ...], exc: tuple[Pattern, ...]
) -> tuple[Group, Folder, list[Scope]]:
    group = lib.find(group_id)
    if not isinstance(group, Group):
        raise InvalidArguments(f"{group_id!r} is not a group id (groups start with g_)")
    folder = lib.find(group.folder_id)
    assert isinstance(folder, Folder)
    return group, folder, [folder.scope, group.scope, Scope(inc, exc)]


async def _rule_code(ctx: ToolContext, v: Mapping[str, Any]) -> tuple[str | None, str | None]:
    css, js = v.get("css"), v.get("js")
    pane = v.get("from_pane")
    if pane:
        kind, _tab = _pane(pane)
        async with page_browser(ctx) as agent:
            _t, _id, state = await _open_pane(agent, pane)
        code = str(state.get("code") or "")
        if not code.strip():
            raise InvalidArguments(f"pane {pane} is empty: set its code first")
        if kind == "css":
            css = code
        else:
            js = code
    return css, js


async def _explain_rule(ctx: ToolContext, v: Mapping[str, Any]) -> list[str]:
    inc, exc = _patterns(v.get("include"), v.get("exclude"))
    css, js = await _rule_code(ctx, v)
    with open_library(ctx.settings) as lib:
        group, folder, scopes = _rule_scope(lib, v["group_id"], inc, exc)
    lines = [
        f"saves rule {v['name']!r} in {folder.name!r} / {group.name!r}",
        f"for URLs: {_shown_patterns(v.get('include'), v.get('exclude'))} "
        f"(and the folder's and group's patterns)",
    ]
    if every_url(scopes):
        lines.append("WARNING: this rule would apply to EVERY page you visit")
    for what, code in (("CSS", css), ("JS", js)):
        if code:
            lines.append(f"{what}:")
            lines += ["  " + ln for ln in code.splitlines()]
    return lines


async def _assess_rule(ctx: ToolContext, v: Mapping[str, Any]) -> tuple[Risk, str] | None:
    inc, exc = _patterns(v.get("include"), v.get("exclude"))
    with open_library(ctx.settings) as lib:
        _g, _f, scopes = _rule_scope(lib, v["group_id"], inc, exc)
    if every_url(scopes):
        return Risk.PERSISTS, "create_rule saves a rule that applies to EVERY page"
    return None


@tool(risk=Risk.PERSISTS, title="Create rule", explain=_explain_rule, assess=_assess_rule)
async def create_rule(
    ctx: ToolContext,
    group_id: Annotated[str, Field(min_length=3, max_length=40, description="g_… id")],
    name: Annotated[str, Field(min_length=1, max_length=200)],
    include: PatternList = None,
    exclude: ExcludeList = None,
    css: Annotated[str | None, Field(max_length=200_000)] = None,
    js: Annotated[
        str | None,
        Field(
            max_length=200_000,
            description="A function body run in the page; it may return a cleanup function.",
        ),
    ] = None,
    from_pane: Annotated[
        str | None,
        Field(
            max_length=40, description="Save a TEMP pane's code (css-N or js-N) instead of css/js."
        ),
    ] = None,
    run_at: Annotated[
        Literal["document-start", "document-end", "document-idle"],
        Field(description="When the JS runs (CSS always applies from document start)."),
    ] = "document-idle",
    frames: Annotated[
        Literal["top", "all"], Field(description="top page only, or all frames")
    ] = "top",
) -> ToolResult:
    """Save a rule with CSS and/or JS for pages matching URL patterns (the user confirms; a
    rule for every URL needs the user to accept that scope). It applies at once to matching
    open tabs and by itself to every matching page from then on."""
    inc, exc = _patterns(include, exclude)
    css_code, js_code = await _rule_code(ctx, {"css": css, "js": js, "from_pane": from_pane})
    if js_code is not None:
        async with maybe_page_browser(ctx) as agent:
            problem = await service.js_problem(agent, js_code)
        if problem:
            raise InvalidArguments(f"the rule's JS does not compile: {problem}; nothing was saved")
    with open_library(ctx.settings) as lib:
        _rule_scope(lib, group_id, inc, exc)
        rule: Rule = lib.create_rule(
            group_id,
            name,
            css=css_code,
            js=js_code,
            include=inc,
            exclude=exc,
            run_at=run_at,
            frames=frames,
            origin="model",
        )
    note = await _apply(ctx)
    if from_pane:
        kind, _tab = _pane(from_pane)
        async with page_browser(ctx) as agent:
            t, tab_id, _state = await _open_pane(agent, from_pane)
            await _close(ctx, t, kind, tab_id)
        note += f"; pane {from_pane} closed (the rule applies instead)"
    return ToolResult(
        f"Saved rule {rule.id} {rule.name!r} ({note}).",
        data={"ok": True, "id": rule.id, "note": note},
        summary=f"rule {rule.id} saved",
    )


PAGE_TOOLS: tuple[ToolSpec, ...] = (
    query_page,
    list_structure,
    open_temp_pane,
    set_temp_pane_code,
    close_temp_pane,
    create_folder,
    create_group,
    create_rule,
)
PAGE_TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in PAGE_TOOLS)
