"""One userscript (its code, plus what a manager kept beside it) as a rule to save: its URL
patterns, run time, frames and values, every problem that stops it named.

What Violentmonkey refuses, deskpilot refuses: a script without a metadata block or without
``@name``. What Violentmonkey would only run wrongly is refused too, since nothing could be
done with it later: a ``@match``/``@include`` that does not compile, a ``@require`` or
``@resource`` that cannot be had (see :mod:`deskpilot.pages.resources`). What it accepts with
a note, deskpilot says as a warning (an unknown ``@run-at`` → ``document-end``, a grant no
manager knows, cross-origin requests with no ``@connect``).

Violentmonkey's per-script settings (a backup's ``custom`` and ``config``): ``match``,
``include``, ``exclude``, ``excludeMatch`` with ``origMatch``… (keep the script's own lines or
not), ``runAt``, ``noframes``, ``name`` and ``config.enabled``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deskpilot.errors import InvalidArguments
from deskpilot.pages.import_plan import RulePlan, items_of
from deskpilot.pages.match_grammar import compile_match
from deskpilot.pages.patterns import Pattern, compile_pattern
from deskpilot.pages.resources import find
from deskpilot.pages.script_data import Resource
from deskpilot.pages.userscript_meta import (
    RUN_AT_VALUES,
    UserscriptMeta,
    grant_problems,
    granted,
    parse_meta,
)


@dataclass
class ScriptSource:
    """A userscript as an import or ``rules add`` gives it."""

    code: str
    label: str  # how problems name it: a file name, "script 3"
    custom: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    base_url: str = ""  # where relative @require/@resource URLs are read from
    values: dict[str, Any] | None = None
    origin: str = "import:violentmonkey"


@dataclass
class ScriptOutcome:
    rule: RulePlan | None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)  # to add to the cache


def plan_userscript(
    src: ScriptSource,
    cached: Callable[[str], Resource | None],
    *,
    fetch: bool = False,
    include: tuple[Pattern, ...] | None = None,
    exclude: tuple[Pattern, ...] | None = None,
    run_at: str | None = None,
) -> ScriptOutcome:
    """The rule for one userscript; ``include``/``exclude``/``run_at`` given replace what its
    metadata says (``rules add`` flags)."""
    out = ScriptOutcome(None)
    meta = parse_meta(src.code)
    if meta is None:
        out.problems.append("not a userscript: no // ==UserScript== … // ==/UserScript== block")
        return out
    out.problems.extend(meta.problems)
    custom_name = src.custom.get("name")
    name = custom_name if isinstance(custom_name, str) and custom_name.strip() else meta.name
    if not name.strip():
        out.problems.append("the metadata block has no @name (Violentmonkey refuses it too)")
    inc, exc = _patterns(meta, src.custom, out.problems)
    if include is not None:
        inc = list(include)
    if exclude is not None:
        exc = list(exclude)
    when = run_at or _run_at(meta, src.custom, out.warnings)
    problems, found = script_resources(meta, src.base_url, cached, fetch=fetch)
    out.problems.extend(problems)
    out.resources.extend(found)
    out.warnings.extend(grant_problems(meta))
    if "GM_xmlhttpRequest" in granted(meta) and not meta.items("connect"):
        out.warnings.append(
            "it may request other sites (GM_xmlhttpRequest) but has no @connect line: such "
            "requests will be refused (add // @connect <host> to allow one)"
        )
    if not inc:
        out.warnings.append("it has no @match or @include: it runs on every page")
    noframes = src.custom.get("noframes")
    top_only = bool(noframes) if noframes is not None and noframes != "" else meta.flag("noframes")
    config_enabled = src.config.get("enabled", 1)
    if out.problems:
        return out
    out.rule = RulePlan(
        name=name.strip(),
        js=src.code,
        include=tuple(inc),
        exclude=tuple(exc),
        run_at=when,
        frames="top" if top_only else "all",
        enabled=bool(config_enabled) if not isinstance(config_enabled, str) else True,
        origin=src.origin,
        values=src.values,
        base_url=src.base_url,
    )
    return out


def _patterns(
    meta: UserscriptMeta, custom: dict[str, Any], problems: list[str]
) -> tuple[list[Pattern], list[Pattern]]:
    def merged(tag: str, custom_key: str, orig_key: str) -> list[str]:
        own = meta.items(tag) if custom.get(orig_key, True) is not False else []
        return [*own, *(str(v) for v in items_of(custom.get(custom_key)))]

    inc: list[Pattern] = []
    exc: list[Pattern] = []
    for tag, key, orig, kind, into, mode in (
        ("match", "match", "origMatch", "match", inc, "include"),
        ("include", "include", "origInclude", "vm-glob", inc, "include"),
        ("excludeMatch", "excludeMatch", "origExcludeMatch", "match", exc, "exclude"),
        ("exclude", "exclude", "origExclude", "vm-glob", exc, "exclude"),
    ):
        shown = {"excludeMatch": "exclude-match"}.get(tag, tag)
        for value in merged(tag, key, orig):
            try:
                into.append(_compile(value, kind, mode))
            except InvalidArguments as err:
                problems.append(f"@{shown} {value!r}: {err}")
    return inc, exc


def _compile(value: str, kind: str, mode: str) -> Pattern:
    if kind == "match":  # Chrome's grammar when it fits, Violentmonkey's additions else
        try:
            compile_match(value.strip())
        except InvalidArguments:
            return compile_pattern(value, "vm-match", mode)
    return compile_pattern(value, kind, mode)


def _run_at(meta: UserscriptMeta, custom: dict[str, Any], warnings: list[str]) -> str:
    value = custom.get("runAt")
    if not isinstance(value, str) or not value:
        value = meta.first("runAt")
    if not value:
        return "document-end"  # Violentmonkey's default
    if value not in RUN_AT_VALUES:
        warnings.append(f"@run-at {value!r} is unknown: it runs at document-end")
        return "document-end"
    return value


def script_resources(
    meta: UserscriptMeta,
    base_url: str,
    cached: Callable[[str], Resource | None],
    *,
    fetch: bool = False,
) -> tuple[list[str], list[Resource]]:
    """Look for every ``@require`` and ``@resource`` file: the problems (one per file that
    cannot be had) and the files found outside the cache (to add to it)."""
    problems: list[str] = []
    new: list[Resource] = []
    named = [("@require", u) for u in meta.items("require")]
    named += [(f"@resource {n}", u) for n, u in meta.resources.items()]
    for line, url in named:
        if not url.strip():
            problems.append(f"{line} has no URL")
            continue
        found = find(url, base_url, cached, fetch=fetch)
        if found.problem:
            problems.append(f"{line}: {found.problem}")
        elif found.resource is not None and not found.cached:
            new.append(found.resource)
    return problems, new
