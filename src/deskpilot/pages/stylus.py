"""Importing a Stylus export (a JSON array of styles, the first item possibly its settings):
one folder; a group per style (its inclusions and exclusions); a rule per section
(``urls``/``urlPrefixes``/``domains``/``regexps`` → url/prefix/domain/regex patterns). UserCSS
sources are read through their ``@-moz-document`` blocks."""

from __future__ import annotations

import re
from typing import Any

from deskpilot.errors import DeskpilotError, RulesError
from deskpilot.pages.import_plan import FolderPlan, GroupPlan, ImportPlan, RulePlan, items_of
from deskpilot.pages.patterns import Pattern, compile_pattern

_SECTION_KINDS = (
    ("urls", "url"),
    ("urlPrefixes", "prefix"),
    ("domains", "domain"),
    ("regexps", "regex"),
)


def plan_stylus(data: Any, folder_name: str) -> ImportPlan:
    if not isinstance(data, list):
        raise RulesError("not a Stylus export (expected a JSON array of styles)")
    styles = [s for s in data if isinstance(s, dict) and ("sections" in s or "sourceCode" in s)]
    if not styles:
        raise RulesError("the Stylus export holds no styles")
    order = _stylus_order(data)
    styles.sort(key=lambda s: order.get(str(s.get("_id", "")), len(order)))
    warnings: list[str] = []
    groups = []
    for style in styles:
        name = str(style.get("name") or "unnamed style")
        sections = items_of(style.get("sections"))
        source = style.get("sourceCode")
        if isinstance(source, str) and source.strip():
            if re.search(r"@preprocessor\s+(?!default)|@var\s", source):
                warnings.append(
                    f"style {name!r} uses UserCSS variables or a preprocessor: imported with "
                    "their default text, check its CSS"
                )
            sections = moz_document_sections(_strip_usercss_meta(source))
        rules = []
        for i, sec in enumerate(sections):
            if not isinstance(sec, dict) or not str(sec.get("code", "")).strip():
                continue
            include: list[Pattern] = []
            for key, kind in _SECTION_KINDS:
                for value in items_of(sec.get(key)):
                    try:
                        include.append(compile_pattern(str(value), kind, "include"))
                    except DeskpilotError as exc:
                        warnings.append(f"style {name!r}: {key} {value!r} skipped ({exc})")
            label = name if len(sections) == 1 else f"{name} #{i + 1}"
            rules.append(
                RulePlan(
                    name=label,
                    css=str(sec["code"]),
                    include=tuple(include),
                    origin="import:stylus",
                    frames="all",
                )
            )
        if not rules:
            warnings.append(f"style {name!r} has no CSS: skipped")
            continue
        groups.append(
            GroupPlan(
                name=name,
                enabled=bool(style.get("enabled", True)),
                include=_globs(style.get("inclusions"), "include", warnings, name),
                exclude=_globs(style.get("exclusions"), "exclude", warnings, name),
                rules=rules,
            )
        )
    return ImportPlan("stylus", [FolderPlan(name=folder_name, groups=groups)], warnings)


def _stylus_order(data: list[Any]) -> dict[str, int]:
    for item in data:
        if (
            isinstance(item, dict)
            and "sections" not in item
            and isinstance(item.get("order"), dict)
        ):
            ids = [*items_of(item["order"].get("prio")), *items_of(item["order"].get("main"))]
            order: dict[str, int] = {}
            for n, i in enumerate(ids):
                order.setdefault(str(i), n)
            return order
    return {}


def _globs(values: Any, mode: str, warnings: list[str], owner: str) -> tuple[Pattern, ...]:
    out = []
    for value in items_of(values):
        try:
            out.append(compile_pattern(str(value), "glob", mode))
        except DeskpilotError as exc:
            warnings.append(f"{owner!r}: pattern {value!r} skipped ({exc})")
    return tuple(out)


def _strip_usercss_meta(source: str) -> str:
    return re.sub(r"/\*\s*==UserStyle==.*?==/UserStyle==\s*\*/", "", source, flags=re.S)


_MOZ = re.compile(r"@-moz-document\s+", re.I)
_FUNC = re.compile(
    r"(url-prefix|url|domain|regexp)\(\s*(?:\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'|([^)]*))\s*\)",
    re.I,
)


def moz_document_sections(css: str) -> list[dict[str, Any]]:
    """``@-moz-document url(…), domain(…) { … }`` blocks as Stylus sections; the CSS outside
    any block is one global section."""
    sections: list[dict[str, Any]] = []
    outside: list[str] = []
    pos = 0
    for m in _MOZ.finditer(css):
        if m.start() < pos:
            continue
        outside.append(css[pos : m.start()])
        brace = css.find("{", m.end())
        if brace < 0:
            break
        section: dict[str, Any] = {"urls": [], "urlPrefixes": [], "domains": [], "regexps": []}
        key = {"url": "urls", "url-prefix": "urlPrefixes", "domain": "domains", "regexp": "regexps"}
        for fm in _FUNC.finditer(css[m.end() : brace]):
            value = next(v for v in fm.groups()[1:] if v is not None)
            if fm.group(1).lower() == "regexp":
                value = value.replace("\\\\", "\\")
            section[key[fm.group(1).lower()]].append(value.strip())
        end = _matching_brace(css, brace)
        section["code"] = css[brace + 1 : end].strip()
        sections.append(section)
        pos = end + 1
    outside.append(css[pos:])
    rest = "".join(outside).strip()
    if rest:
        sections.insert(0, {"code": rest})
    return sections


def _matching_brace(text: str, start: int) -> int:
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            close = text.find(ch, i + 1)
            i = close if close >= 0 else len(text)
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = close + 1 if close >= 0 else len(text)
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)
