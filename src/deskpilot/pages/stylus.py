"""Importing a Stylus export (a JSON array of styles, the first item possibly its settings) or a
UserCSS file (``.user.css``): one folder; a group per style (its own inclusions and
exclusions, as Stylus matches them: ``stylus-glob``); a rule per section
(``urls``/``urlPrefixes``/``domains``/``regexps`` → url/prefix/domain/regex patterns).

Each style is checked as Stylus checks what it imports (src/manage/import-export.js
``analyze``, src/js/style-util.js ``styleJSONseemsValid``): an object with a non-empty
``name``; a plain style needs ``sections``, a list whose items have ``code`` text; a UserCSS
style (with ``usercssData``) needs its ``sourceCode``, which must build into CSS
(:mod:`deskpilot.pages.usercss`). Beyond that, every field deskpilot uses must have its type
(``enabled`` true/false, the section lists lists of text) and every URL pattern must compile.
Every problem is listed with its item; with any, nothing is imported.
"""

from __future__ import annotations

import re
from typing import Any

from deskpilot.errors import DeskpilotError, RulesError
from deskpilot.pages.import_plan import FolderPlan, GroupPlan, ImportPlan, RulePlan, items_of
from deskpilot.pages.patterns import Pattern, compile_pattern
from deskpilot.pages.usercss import (
    apply_vars,
    parse_usercss_meta,
    resolved_vars,
    strip_meta,
)

_SECTION_KINDS = (
    ("urls", "url"),
    ("urlPrefixes", "prefix"),
    ("domains", "domain"),
    ("regexps", "regex"),
)
UCD = "usercssData"


def plan_stylus(data: Any, folder_name: str) -> ImportPlan:
    if isinstance(data, dict) and data.get("_rev") and isinstance(data.get("doc"), dict):
        data = [data["doc"]]  # one style as Stylus's sync keeps it
    if not isinstance(data, list):
        raise RulesError("not a Stylus export (expected a JSON array of styles)")
    plan = ImportPlan("stylus", [])
    order = _stylus_order(data)
    found: list[tuple[int, GroupPlan]] = []
    for index, item in enumerate(data, 1):
        if isinstance(item, dict) and not item.get("id") and "settings" in item:
            continue  # Stylus's own settings and the injection order
        label = _label(index, item)
        problems: list[str] = []
        group = _style_group(item, plan.warnings, problems, label)
        plan.problems.extend(f"{label}: {p}" for p in problems)
        if group is not None:
            key = str(item.get("_id", "")) if isinstance(item, dict) else ""
            found.append((order.get(key, len(order) + index), group))
    if not found and not plan.problems:
        raise RulesError("the Stylus export holds no styles")
    found.sort(key=lambda pair: pair[0])
    plan.folders.append(FolderPlan(name=folder_name, groups=[g for _, g in found]))
    return plan


def plan_usercss(source: str, folder_name: str, label: str) -> ImportPlan:
    """A ``.user.css`` file as a one-style import."""
    plan = ImportPlan("usercss", [])
    meta = parse_usercss_meta(source)
    if meta is None:
        raise RulesError(f"{label}: not UserCSS (no /* ==UserStyle== … ==/UserStyle== */ block)")
    problems = list(meta.problems)
    style = {"name": meta.name, "sourceCode": source, UCD: {"preprocessor": meta.preprocessor}}
    group = _style_group(style, plan.warnings, problems, label)
    plan.problems.extend(f"{label}: {p}" for p in problems)
    plan.folders.append(FolderPlan(name=folder_name, groups=[group] if group else []))
    return plan


def _label(index: int, item: Any) -> str:
    name = item.get("customName") or item.get("name") if isinstance(item, dict) else None
    shown = f" {name.strip()[:60]!r}" if isinstance(name, str) and name.strip() else ""
    return f"style {index}{shown}"


def _style_group(
    style: Any, warnings: list[str], problems: list[str], label: str
) -> GroupPlan | None:
    if not isinstance(style, dict):
        problems.append("not a style (an object with a name and sections)")
        return None
    name = style.get("customName") or style.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append("'name' must be non-empty text (Stylus refuses a style without one)")
    enabled = style.get("enabled", True)
    if not isinstance(enabled, bool) and enabled not in (0, 1):
        problems.append(f"'enabled' must be true or false, not {enabled!r}")
    ucd = style.get(UCD)
    if ucd is not None and not isinstance(ucd, dict):
        problems.append(f"'{UCD}' must be an object")
        ucd = None
    sections = _sections(style, ucd, warnings, problems)
    include = _overrides(style, "inclusions", "include", problems)
    exclude = _overrides(style, "exclusions", "exclude", problems)
    if problems or not isinstance(name, str):
        return None
    name = name.strip()
    rules = []
    for i, sec in enumerate(sections):
        patterns: list[Pattern] = []
        targeted = False
        for key, kind in _SECTION_KINDS:
            for value in sec.get(key) or []:
                targeted = True
                if not value.strip():
                    continue  # Stylus: an empty url-prefix("") or domain("") matches nothing
                try:
                    patterns.append(compile_pattern(value, kind, "include"))
                except DeskpilotError as exc:
                    problems.append(f"section {i + 1}: {key} {value!r}: {exc}")
        if not sec["code"].strip():
            continue
        if targeted and not patterns:
            warnings.append(
                f"{label}: section {i + 1} targets only empty URLs (it applies "
                "nowhere in Stylus either): skipped"
            )
            continue
        rules.append(
            RulePlan(
                name=name if len(sections) == 1 else f"{name} #{i + 1}",
                css=sec["code"],
                include=tuple(patterns),
                origin="import:stylus",
                frames="all",
            )
        )
    if problems:
        return None
    if not rules:
        warnings.append(f"{label} has no CSS: skipped")
        return None
    return GroupPlan(
        name=name, enabled=bool(enabled), include=include, exclude=exclude, rules=rules
    )


def _sections(
    style: dict[str, Any], ucd: dict[str, Any] | None, warnings: list[str], problems: list[str]
) -> list[dict[str, Any]]:
    """The style's sections, checked (a UserCSS style's built from its source)."""
    raw = style.get("sections")
    source = style.get("sourceCode")
    if ucd:  # UserCSS: Stylus builds the sections from the source
        if not isinstance(source, str):
            problems.append("a UserCSS style needs its 'sourceCode' text")
            return []
        return _usercss_sections(source, ucd, raw, warnings, problems)
    if raw is None and isinstance(source, str):
        return _usercss_sections(source, {}, None, warnings, problems)
    if not isinstance(raw, list) or not raw:
        problems.append("'sections' must be a non-empty list (Stylus refuses it otherwise)")
        return []
    checked = _checked_sections(raw, problems)
    if (
        isinstance(source, str)
        and "==UserStyle==" in source
        and not any(s["code"].strip() for s in checked)
    ):
        return _usercss_sections(source, {}, None, warnings, problems)  # an older export
    return checked


def _checked_sections(raw: list[Any], problems: list[str]) -> list[dict[str, Any]]:
    out = []
    for i, sec in enumerate(raw, 1):
        if not isinstance(sec, dict):
            problems.append(f"section {i} is not an object")
            continue
        code = sec.get("code")
        if not isinstance(code, str):
            what = "missing" if code is None else f"{type(code).__name__} {code!r}"[:60]
            problems.append(f"section {i}: 'code' must be CSS text, not {what}")
            continue
        clean: dict[str, Any] = {"code": code}
        for key, _kind in _SECTION_KINDS:
            values = sec.get(key)
            if values is None:
                continue
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                problems.append(f"section {i}: {key!r} must be a list of text")
                continue
            clean[key] = values
        out.append(clean)
    return out


def _usercss_sections(
    source: str, ucd: dict[str, Any], raw: Any, warnings: list[str], problems: list[str]
) -> list[dict[str, Any]]:
    meta = parse_usercss_meta(source)
    if meta is None:
        problems.append("its 'sourceCode' has no /* ==UserStyle== … ==/UserStyle== */ block")
        return []
    pre = str(ucd.get("preprocessor") or meta.preprocessor or "default")
    if pre in ("less", "stylus"):
        compiled = _checked_sections(raw, problems) if isinstance(raw, list) else []
        if any(s["code"].strip() for s in compiled):
            warnings.append(
                f"style {meta.name!r} ({pre}): imported from the compiled CSS in the export"
            )
            return compiled
        problems.append(
            f"it is written in {pre}, which deskpilot cannot compile, and the export holds no "
            "compiled CSS for it (export from Stylus in compatibility mode: right-click "
            "Export, or Shift+click)"
        )
        return []
    values = resolved_vars(meta, ucd.get("vars"))
    sections = moz_document_sections(strip_meta(source))
    for sec in sections:
        sec["code"] = apply_vars(sec["code"], pre, values) if sec["code"].strip() else ""
    if not any(s["code"].strip() for s in sections):
        problems.append("its source builds into no CSS (Stylus refuses an empty style)")
    return sections


def _overrides(
    style: dict[str, Any], key: str, mode: str, problems: list[str]
) -> tuple[Pattern, ...]:
    values = style.get(key)
    if values is None:
        return ()
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        problems.append(f"{key!r} must be a list of text")
        return ()
    out = []
    for value in values:
        try:
            out.append(compile_pattern(value, "stylus-glob", mode))
        except DeskpilotError as exc:
            problems.append(f"{key} {value!r}: {exc}")
    return tuple(out)


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
