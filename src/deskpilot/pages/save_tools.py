"""The page tools that save: ``create_folder``, ``create_group``, ``create_rule`` — each asks its
own confirmation showing exactly what will be saved (a rule for every URL says so), and brings a
running agent browser up to date afterwards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from deskpilot.errors import InvalidArguments
from deskpilot.pages import service
from deskpilot.pages.library import Library
from deskpilot.pages.link import maybe_page_browser, page_browser
from deskpilot.pages.pane_tools import close_pane, open_pane
from deskpilot.pages.patterns import Pattern, Scope, every_url
from deskpilot.pages.store import open_library
from deskpilot.pages.tool_args import ExcludeList, PatternList, parse_pane, patterns_of
from deskpilot.pages.tree import Folder, Group, Rule
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext


async def _apply(ctx: ToolContext) -> str:
    """Bring the agent browser (if it runs) up to date with the library."""
    async with maybe_page_browser(ctx) as agent:
        return await service.apply_change(ctx.settings, agent)


def _shown_patterns(include: list[str] | None, exclude: list[str] | None) -> str:
    inc = ", ".join(include or []) or "any URL"
    exc = f"; exclude {', '.join(exclude)}" if exclude else ""
    return f"{inc}{exc}"


async def _explain_folder(ctx: ToolContext, v: Mapping[str, Any]) -> list[str]:
    patterns_of(v.get("include"), v.get("exclude"))
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
    inc, exc = patterns_of(include, exclude)
    with open_library(ctx.settings) as lib:
        folder = lib.create_folder(name, label=label, include=inc, exclude=exc)
    await _apply(ctx)
    return ToolResult(
        f"Saved folder {folder.id} {folder.name!r}. Create a group in it with create_group.",
        data={"ok": True, "id": folder.id},
        summary=f"folder {folder.id}",
    )


async def _explain_group(ctx: ToolContext, v: Mapping[str, Any]) -> list[str]:
    patterns_of(v.get("include"), v.get("exclude"))
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
    inc, exc = patterns_of(include, exclude)
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
        kind, _tab = parse_pane(pane)
        async with page_browser(ctx) as agent:
            _t, _id, state = await open_pane(agent, pane)
        code = str(state.get("code") or "")
        if not code.strip():
            raise InvalidArguments(f"pane {pane} is empty: set its code first")
        if kind == "css":
            css = code
        else:
            js = code
    return css, js


async def _explain_rule(ctx: ToolContext, v: Mapping[str, Any]) -> list[str]:
    inc, exc = patterns_of(v.get("include"), v.get("exclude"))
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
    inc, exc = patterns_of(v.get("include"), v.get("exclude"))
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
        Literal["document-start", "document-body", "document-end", "document-idle"],
        Field(description="When the JS runs (CSS always applies from document start)."),
    ] = "document-idle",
    frames: Annotated[
        Literal["top", "all"], Field(description="top page only, or all frames")
    ] = "top",
) -> ToolResult:
    """Save a rule with CSS and/or JS for pages matching URL patterns (the user confirms; a
    rule for every URL needs the user to accept that scope). It applies at once to matching
    open tabs and by itself to every matching page from then on."""
    inc, exc = patterns_of(include, exclude)
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
        kind, _tab = parse_pane(from_pane)
        async with page_browser(ctx) as agent:
            t, tab_id, _state = await open_pane(agent, from_pane)
            await close_pane(ctx, t, kind, tab_id)
        note += f"; pane {from_pane} closed (the rule applies instead)"
    return ToolResult(
        f"Saved rule {rule.id} {rule.name!r} ({note}).",
        data={"ok": True, "id": rule.id, "note": note},
        summary=f"rule {rule.id} saved",
    )
