"""Export and import of the rule library: deskpilot's own JSON, Stylus exports, Violentmonkey
backups.

deskpilot's format (lossless: export → import into an empty library → the same export)::

    {"format": "deskpilot-rules", "version": 1,
     "folders": [{"id", "name", "label", "enabled", "include", "exclude",
                  "groups": [{"id", "name", "enabled", "include", "exclude",
                              "rules": [{"id", "name", "enabled", "css", "js", "run_at",
                                         "frames", "origin", "include", "exclude"}]}]}]}

Patterns are strings (globs) or ``{"value": …, "kind": …}``. A Stylus export (a JSON array of
styles, the first item possibly its settings) becomes one folder: a group per style, a rule per
section (``urls``/``urlPrefixes``/``domains``/``regexps`` → url/prefix/domain/regex patterns;
the style's inclusions and exclusions → the group's). A Violentmonkey backup (a zip of
``*.user.js`` plus its ``violentmonkey`` JSON) becomes one folder with a group holding a JS
rule per script (``@match``/``@include``/``@exclude``/``@exclude-match``, ``@run-at``,
``@noframes``, the user's overrides, enabled flag and order).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from deskpilot.errors import DeskpilotError, RulesError
from deskpilot.pages.library import RUN_AT, Folder, Library, Rule, check_code, level_of
from deskpilot.pages.patterns import Pattern, compile_pattern, every_url, parse_patterns

FORMAT = "deskpilot-rules"
VERSION = 1
SOURCES = ("deskpilot", "stylus", "violentmonkey")


# -- the plan an import carries out ----------------------------------------------------------


@dataclass
class RulePlan:
    name: str
    css: str | None = None
    js: str | None = None
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()
    run_at: str = "document-idle"
    frames: str = "top"
    enabled: bool = True
    origin: str = "user"
    id: str | None = None


@dataclass
class GroupPlan:
    name: str
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()
    enabled: bool = True
    rules: list[RulePlan] = field(default_factory=list)
    id: str | None = None


@dataclass
class FolderPlan:
    name: str
    label: str | None = None
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()
    enabled: bool = True
    groups: list[GroupPlan] = field(default_factory=list)
    id: str | None = None


@dataclass
class ImportPlan:
    source: str
    folders: list[FolderPlan]
    warnings: list[str] = field(default_factory=list)

    @property
    def counts(self) -> tuple[int, int, int]:
        groups = [g for f in self.folders for g in f.groups]
        return len(self.folders), len(groups), sum(len(g.rules) for g in groups)

    def everywhere(self) -> list[str]:
        """Names of the rules that would apply to every URL."""
        out = []
        for f in self.folders:
            for g in f.groups:
                for r in g.rules:
                    scopes = [_scope(f), _scope(g), _scope(r)]
                    if every_url(scopes):
                        out.append(f"{f.name} / {g.name} / {r.name}")
        return out

    def describe(self) -> list[str]:
        lines = []
        for f in self.folders:
            lines.append(f"folder {f.name!r}{_pat(f)}")
            for g in f.groups:
                off = "" if g.enabled else " (disabled)"
                lines.append(f"  group {g.name!r}{off}{_pat(g)}")
                for r in g.rules:
                    code = ", ".join(
                        f"{k} {len(v)} chars" for k, v in (("css", r.css), ("js", r.js)) if v
                    )
                    off = "" if r.enabled else ", disabled"
                    lines.append(f"    rule {r.name!r} ({code}{off}){_pat(r)}")
        return lines


def _scope(node: FolderPlan | GroupPlan | RulePlan) -> Any:
    from deskpilot.pages.patterns import Scope

    return Scope(node.include, node.exclude)


def _pat(node: FolderPlan | GroupPlan | RulePlan) -> str:
    parts = []
    if node.include:
        parts.append("include " + ", ".join(_shown(p) for p in node.include))
    if node.exclude:
        parts.append("exclude " + ", ".join(_shown(p) for p in node.exclude))
    return (" — " + "; ".join(parts)) if parts else ""


def _shown(p: Pattern) -> str:
    return p.value if p.kind == "glob" else f"{p.kind}:{p.value}"


def apply_plan(library: Library, plan: ImportPlan) -> list[Folder]:
    """Write the plan in one transaction; ids in the plan are kept when they are free."""
    taken = {x.id for f in library.tree() for x in _walk(f)}
    made: list[str] = []
    with library.change():
        for fp in plan.folders:
            fid = _free(fp.id, "f_", taken)
            _insert(library, "folders", fid, None, fp.name, fp.enabled, fp.label)
            library._put_patterns("folder", fid, fp.include, fp.exclude)
            made.append(fid)
            for gp in fp.groups:
                gid = _free(gp.id, "g_", taken)
                _insert(library, "groups", gid, fid, gp.name, gp.enabled)
                library._put_patterns("group", gid, gp.include, gp.exclude)
                for rp in gp.rules:
                    rid = _free(rp.id, "r_", taken)
                    css, js = check_code(rp.css, rp.js)
                    _insert_rule(library, rid, gid, rp, css, js)
                    library._put_patterns("rule", rid, rp.include, rp.exclude)
    by_id = {f.id: f for f in library.tree()}
    return [by_id[i] for i in made]


def _walk(folder: Folder) -> Iterable[Any]:
    yield folder
    for g in folder.groups:
        yield g
        yield from g.rules


def _free(wanted: str | None, prefix: str, taken: set[str]) -> str:
    from deskpilot.pages.library import new_id

    level = level_of(prefix + "x")
    if wanted and wanted.startswith(prefix) and wanted not in taken and len(wanted) <= 40:
        taken.add(wanted)
        return wanted
    while True:
        fresh = new_id(level)
        if fresh not in taken:
            taken.add(fresh)
            return fresh


def _insert(
    library: Library,
    table: str,
    item_id: str,
    parent: str | None,
    name: str,
    enabled: bool,
    label: str | None = None,
) -> None:
    from deskpilot.pages.library import _now

    db = library._db
    now = _now()
    if table == "folders":
        pos = library._next("folders", None, None)
        db.execute(
            "INSERT INTO folders VALUES (?, ?, ?, ?, ?, ?, ?)",
            (item_id, name, label, int(enabled), pos, now, now),
        )
    else:
        pos = library._next("groups", "folder_id", parent)
        db.execute(
            "INSERT INTO groups VALUES (?, ?, ?, ?, ?, ?, ?)",
            (item_id, parent, name, int(enabled), pos, now, now),
        )


def _insert_rule(
    library: Library, rid: str, gid: str, rp: RulePlan, css: str | None, js: str | None
) -> None:
    from deskpilot.pages.library import _now

    if rp.run_at not in RUN_AT:
        raise RulesError(f"rule {rp.name!r}: run_at {rp.run_at!r} is not one of {RUN_AT}")
    if rp.frames not in ("top", "all"):
        raise RulesError(f"rule {rp.name!r}: frames {rp.frames!r} is not 'top' or 'all'")
    now = _now()
    library._db.execute(
        "INSERT INTO rules (id, group_id, name, enabled, position, css, js, run_at, frames, "
        "origin, revision, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
        (
            rid,
            gid,
            rp.name,
            int(rp.enabled),
            library._next("rules", "group_id", gid),
            css,
            js,
            rp.run_at,
            rp.frames,
            rp.origin,
            now,
            now,
        ),
    )


# -- deskpilot's own format ------------------------------------------------------------------


def export_library(library: Library) -> dict[str, Any]:
    def pats(node: Any) -> dict[str, Any]:
        return {
            "include": [p.to_dict() if p.kind != "glob" else p.value for p in node.include],
            "exclude": [p.to_dict() if p.kind != "glob" else p.value for p in node.exclude],
        }

    return {
        "format": FORMAT,
        "version": VERSION,
        "folders": [
            {
                "id": f.id,
                "name": f.name,
                "label": f.label,
                "enabled": f.enabled,
                **pats(f),
                "groups": [
                    {
                        "id": g.id,
                        "name": g.name,
                        "enabled": g.enabled,
                        **pats(g),
                        "rules": [_rule_dict(r, pats(r)) for r in g.rules],
                    }
                    for g in f.groups
                ],
            }
            for f in library.tree()
        ],
    }


def _rule_dict(r: Rule, patterns: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "enabled": r.enabled,
        "css": r.css,
        "js": r.js,
        "run_at": r.run_at,
        "frames": r.frames,
        "origin": r.origin,
        **patterns,
    }


def plan_deskpilot(data: Any) -> ImportPlan:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RulesError(f'not a deskpilot rules export (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise RulesError(f"deskpilot rules export version {data.get('version')!r} is unsupported")
    folders = []
    try:
        for f in _list(data, "folders"):
            groups = []
            for g in _list(f, "groups"):
                rules = [
                    RulePlan(
                        name=str(r["name"]),
                        css=r.get("css"),
                        js=r.get("js"),
                        run_at=str(r.get("run_at", "document-idle")),
                        frames=str(r.get("frames", "top")),
                        enabled=bool(r.get("enabled", True)),
                        origin=str(r.get("origin", "user")),
                        id=r.get("id"),
                        **_pats(r),
                    )
                    for r in _list(g, "rules")
                ]
                groups.append(
                    GroupPlan(
                        name=str(g["name"]),
                        enabled=bool(g.get("enabled", True)),
                        rules=rules,
                        id=g.get("id"),
                        **_pats(g),
                    )
                )
            folders.append(
                FolderPlan(
                    name=str(f["name"]),
                    label=f.get("label"),
                    enabled=bool(f.get("enabled", True)),
                    groups=groups,
                    id=f.get("id"),
                    **_pats(f),
                )
            )
    except (KeyError, TypeError) as exc:
        raise RulesError(
            f"the deskpilot rules export is malformed ({exc!r} missing or wrong)"
        ) from exc
    return ImportPlan("deskpilot", folders)


def _list(node: Any, key: str) -> list[Any]:
    value = node.get(key, []) if isinstance(node, dict) else None
    if not isinstance(value, list):
        raise RulesError(f"the export's {key!r} is not a list")
    return value


def _pats(node: dict[str, Any]) -> dict[str, tuple[Pattern, ...]]:
    return {
        "include": parse_patterns(node.get("include") or [], "include"),
        "exclude": parse_patterns(node.get("exclude") or [], "exclude"),
    }


# -- Stylus ----------------------------------------------------------------------------------

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
        sections = style.get("sections") or []
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
                for value in sec.get(key) or []:
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
            ids = [*(item["order"].get("prio") or []), *(item["order"].get("main") or [])]
            order: dict[str, int] = {}
            for n, i in enumerate(ids):
                order.setdefault(str(i), n)
            return order
    return {}


def _globs(values: Any, mode: str, warnings: list[str], owner: str) -> tuple[Pattern, ...]:
    out = []
    for value in values or []:
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


# -- Violentmonkey ---------------------------------------------------------------------------

_META = re.compile(r"//\s*==UserScript==(.*?)//\s*==/UserScript==", re.S)
_LINE = re.compile(r"^\s*//\s*@([\w:-]+)(?:\s+(.*?))?\s*$", re.M)


def userscript_meta(source: str) -> dict[str, list[str]]:
    block = _META.search(source)
    meta: dict[str, list[str]] = {}
    if block is None:
        return meta
    for m in _LINE.finditer(block.group(1)):
        meta.setdefault(m.group(1), []).append((m.group(2) or "").strip())
    return meta


def plan_violentmonkey(blob: bytes, folder_name: str) -> ImportPlan:
    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
    except zipfile.BadZipFile as exc:
        raise RulesError("not a Violentmonkey backup (not a zip file)") from exc
    names = archive.namelist()
    info: dict[str, Any] = {}
    if "violentmonkey" in names:
        try:
            info = json.loads(archive.read("violentmonkey").decode("utf-8"))
        except ValueError as exc:
            raise RulesError(f"the backup's violentmonkey entry is not JSON ({exc})") from exc
    scripts_info = info.get("scripts", {}) if isinstance(info, dict) else {}
    files = [n for n in names if n.endswith(".user.js")]
    if not files:
        raise RulesError("the Violentmonkey backup holds no .user.js scripts")
    warnings: list[str] = []
    entries = []
    for fname in files:
        key = fname[: -len(".user.js")]
        extra = scripts_info.get(key, {}) if isinstance(scripts_info, dict) else {}
        source = archive.read(fname).decode("utf-8", errors="replace")
        entries.append((int(extra.get("position", 1 << 30)), key, source, extra))
    entries.sort(key=lambda e: (e[0], e[1]))
    rules = []
    for _pos, key, source, extra in entries:
        rule = _userscript_rule(key, source, extra, warnings)
        if rule is not None:
            rules.append(rule)
    group = GroupPlan(name="Scripts", rules=rules)
    return ImportPlan("violentmonkey", [FolderPlan(name=folder_name, groups=[group])], warnings)


def _userscript_rule(
    key: str, source: str, extra: dict[str, Any], warnings: list[str]
) -> RulePlan | None:
    meta = userscript_meta(source)
    name = (meta.get("name") or [key])[0] or key
    custom = extra.get("custom") or {}
    config = extra.get("config") or {}

    def merged(tag: str, custom_key: str, orig_key: str) -> list[str]:
        own = meta.get(tag, []) if custom.get(orig_key, True) is not False else []
        return [*own, *(custom.get(custom_key) or [])]

    include: list[Pattern] = []
    exclude: list[Pattern] = []
    for value in merged("match", "match", "origMatch"):
        _add(include, value, "match", "include", name, warnings)
    for value in merged("include", "include", "origInclude"):
        _add(include, *_vm_glob(value), "include", name, warnings)
    for value in merged("exclude-match", "excludeMatch", "origExcludeMatch"):
        _add(exclude, value, "match", "exclude", name, warnings)
    for value in merged("exclude", "exclude", "origExclude"):
        _add(exclude, *_vm_glob(value), "exclude", name, warnings)
    run_at = custom.get("runAt") or (meta.get("run-at") or ["document-end"])[0]
    run_at = {"document-body": "document-end"}.get(run_at, run_at)
    if run_at not in RUN_AT:
        warnings.append(f"script {name!r}: @run-at {run_at!r} unknown, using document-end")
        run_at = "document-end"
    grants = [g for g in meta.get("grant", []) if g and g != "none"]
    if grants:
        warnings.append(
            f"script {name!r} asks for {', '.join(grants[:4])}: deskpilot runs it as a plain "
            "page script, without GM_* functions"
        )
    if not include:
        warnings.append(f"script {name!r} has no @match or @include: it would run on every page")
    return RulePlan(
        name=name,
        js=source,
        include=tuple(include),
        exclude=tuple(exclude),
        run_at=run_at,
        frames="top" if "noframes" in meta or custom.get("noframes") else "all",
        enabled=bool(config.get("enabled", 1)),
        origin="import:violentmonkey",
    )


def _vm_glob(value: str) -> tuple[str, str]:
    """An ``@include``: ``/re/flags`` is a regular expression searched anywhere; else a glob."""
    m = re.fullmatch(r"/(.*)/([a-z]*)", value.strip())
    if m:
        return f".*(?:{m.group(1)}).*", "regex"
    return value, "glob"


def _add(
    out: list[Pattern], value: str, kind: str, mode: str, owner: str, warnings: list[str]
) -> None:
    try:
        out.append(compile_pattern(value, kind, mode))
    except DeskpilotError as exc:
        warnings.append(f"script {owner!r}: pattern {value!r} skipped ({exc})")


# -- entry points ----------------------------------------------------------------------------


def detect(path: Path, blob: bytes) -> str:
    if blob[:2] == b"PK":
        return "violentmonkey"
    try:
        data = json.loads(blob.decode("utf-8"))
    except ValueError as exc:
        raise RulesError(f"{path}: neither JSON nor a zip file ({exc})") from exc
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return "deskpilot"
    if isinstance(data, list):
        return "stylus"
    raise RulesError(f"{path}: not a deskpilot export, a Stylus export or a Violentmonkey backup")


def plan_import(path: Path, source: str = "auto", folder: str | None = None) -> ImportPlan:
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise RulesError(f"cannot read {path}: {exc.strerror}") from exc
    kind = detect(path, blob) if source == "auto" else source
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
    if kind == "violentmonkey":
        return plan_violentmonkey(blob, folder or f"Violentmonkey import {stamp}")
    try:
        data = json.loads(blob.decode("utf-8"))
    except ValueError as exc:
        raise RulesError(f"{path} is not valid JSON ({exc})") from exc
    if kind == "stylus":
        return plan_stylus(data, folder or f"Stylus import {stamp}")
    if kind == "deskpilot":
        plan = plan_deskpilot(data)
        if folder:
            for f in plan.folders:
                f.name = folder
        return plan
    raise RulesError(f"unknown import format {source!r}: use one of auto, {', '.join(SOURCES)}")


def strip_ids(export: dict[str, Any]) -> dict[str, Any]:
    """An export without ids (to compare libraries)."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items() if k != "id"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out: dict[str, Any] = walk(export)
    return out
