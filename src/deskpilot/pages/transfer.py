"""Export and import of the rule library: deskpilot's own JSON, Stylus exports, UserCSS files,
Violentmonkey and Tampermonkey backups, single userscripts.

deskpilot's format (lossless: export → import into an empty library → the same export)::

    {"format": "deskpilot-rules", "version": 2,
     "folders": [{"id", "name", "label", "enabled", "include", "exclude",
                  "groups": [{"id", "name", "enabled", "include", "exclude",
                              "rules": [{"id", "name", "enabled", "css", "js", "run_at",
                                         "frames", "origin", "include", "exclude",
                                         "values"?, "base_url"?}]}]}],
     "resources": [{"url", "mime", "base64"}]}

Patterns are strings (globs) or ``{"value": …, "kind": …}``; ``values`` are a userscript's
stored values; ``resources`` the cached files its ``@require``/``@resource`` lines name (so
the export imports on a machine that is offline). Version 1 files (no values, no resources)
import as well.

An import is planned first (an :class:`~deskpilot.pages.import_plan.ImportPlan`, what
``--dry-run`` shows), with every problem of every item listed; a plan with any problem is
refused whole, and nothing is saved. A Stylus export, a UserCSS file, a backup or a userscript
lands in a folder named after the file it came from.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deskpilot.errors import DeskpilotError, RulesError
from deskpilot.pages.import_plan import (
    FolderPlan,
    GroupPlan,
    ImportPlan,
    RulePlan,
    check_plan,
    refuse,
)
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import Pattern, parse_patterns
from deskpilot.pages.resources import absolute
from deskpilot.pages.script_data import Resource, cache_key
from deskpilot.pages.stylus import plan_stylus, plan_usercss
from deskpilot.pages.tree import Rule
from deskpilot.pages.userscript_meta import parse_meta
from deskpilot.pages.userscripts import plan_userscript_file, plan_violentmonkey

FORMAT = "deskpilot-rules"
VERSION = 2
SOURCES = ("deskpilot", "stylus", "usercss", "violentmonkey", "userscript")
LABELS = {
    "stylus": "Stylus",
    "usercss": "UserCSS",
    "violentmonkey": "Violentmonkey",
    "userscript": "Userscript",
    "deskpilot": "deskpilot",
}


def export_library(library: Library) -> dict[str, Any]:
    def pats(node: Any) -> dict[str, Any]:
        return {
            "include": [p.to_dict() if p.kind != "glob" else p.value for p in node.include],
            "exclude": [p.to_dict() if p.kind != "glob" else p.value for p in node.exclude],
        }

    tree = library.tree()
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
                        "rules": [_rule_dict(library, r, pats(r)) for r in g.rules],
                    }
                    for g in f.groups
                ],
            }
            for f in tree
        ],
        "resources": _used_resources(library, [r for f in tree for g in f.groups for r in g.rules]),
    }


def _rule_dict(library: Library, r: Rule, patterns: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
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
    if r.js is not None and parse_meta(r.js) is not None:
        values = library.values(r.id)
        if values:
            out["values"] = values
        base = library.script_state(r.id).base_url
        if base:
            out["base_url"] = base
    return out


def _used_resources(library: Library, rules: list[Rule]) -> list[dict[str, str]]:
    urls: dict[str, None] = {}
    for r in rules:
        meta = parse_meta(r.js or "") if r.js else None
        if meta is None:
            continue
        base = library.script_state(r.id).base_url
        for url in [*meta.items("require"), *meta.resources.values()]:
            full = absolute(url, base)
            if not full.startswith("data:"):
                urls[cache_key(full)] = None
    out = []
    for url in urls:
        res = library.resource(url)
        if res is not None:
            out.append(
                {"url": url, "mime": res.mime, "base64": base64.b64encode(res.body).decode()}
            )
    return out


def plan_deskpilot(data: Any, folder: str | None = None) -> ImportPlan:
    """The plan of a deskpilot export, with every malformed item named (a missing name, a
    field of the wrong type, a pattern that does not compile)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RulesError(f'not a deskpilot rules export (no "format": "{FORMAT}")')
    if data.get("version") not in (1, VERSION):
        raise RulesError(f"deskpilot rules export version {data.get('version')!r} is unsupported")
    plan = ImportPlan("deskpilot", [])
    reader = _Reader(plan)
    for fn, f in enumerate(reader.objects(data, "folders", "the export"), 1):
        where = f"folder {fn}"
        groups = []
        for gn, g in enumerate(reader.objects(f, "groups", where), 1):
            where_g = f"{where} / group {gn}"
            rules = []
            for rn, r in enumerate(reader.objects(g, "rules", where_g), 1):
                at = f"{where_g} / rule {rn}"
                rules.append(
                    RulePlan(
                        name=reader.text(r, "name", at),
                        css=reader.maybe_text(r, "css", at),
                        js=reader.maybe_text(r, "js", at),
                        run_at=reader.maybe_text(r, "run_at", at) or "document-idle",
                        frames=reader.maybe_text(r, "frames", at) or "top",
                        enabled=reader.flag(r, at),
                        origin=reader.maybe_text(r, "origin", at) or "user",
                        id=reader.maybe_text(r, "id", at),
                        values=reader.values(r, at),
                        base_url=reader.maybe_text(r, "base_url", at) or "",
                        **reader.patterns(r, at),
                    )
                )
            groups.append(
                GroupPlan(
                    name=reader.text(g, "name", where_g),
                    enabled=reader.flag(g, where_g),
                    rules=rules,
                    id=reader.maybe_text(g, "id", where_g),
                    **reader.patterns(g, where_g),
                )
            )
        folders_name = folder or reader.text(f, "name", where)
        plan.folders.append(
            FolderPlan(
                name=folders_name,
                label=reader.maybe_text(f, "label", where),
                enabled=reader.flag(f, where),
                groups=groups,
                id=reader.maybe_text(f, "id", where),
                **reader.patterns(f, where),
            )
        )
    plan.resources.extend(reader.resources(data))
    return plan


class _Reader:
    """Reads fields of a deskpilot export, adding a problem (and a harmless default) for
    each one of the wrong type."""

    def __init__(self, plan: ImportPlan) -> None:
        self.plan = plan

    def problem(self, text: str) -> None:
        self.plan.problems.append(text)

    def objects(self, node: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
        value = node.get(key, [])
        if not isinstance(value, list):
            self.problem(f"{where}: {key!r} is not a list")
            return []
        out = []
        for n, item in enumerate(value, 1):
            if isinstance(item, dict):
                out.append(item)
            else:
                self.problem(f"{where}: item {n} of {key!r} is not an object")
        return out

    def maybe_text(self, node: dict[str, Any], key: str, where: str) -> str | None:
        value = node.get(key)
        if value is not None and not isinstance(value, str):
            self.problem(f"{where}: {key!r} must be text or null, not {type(value).__name__}")
            return None
        return value

    def text(self, node: dict[str, Any], key: str, where: str) -> str:
        value = self.maybe_text(node, key, where)
        if value is None and key not in node:
            self.problem(f"{where}: {key!r} is missing")
        return value or ""

    def flag(self, node: dict[str, Any], where: str) -> bool:
        value = node.get("enabled", True)
        if not isinstance(value, bool):
            self.problem(f"{where}: 'enabled' must be true or false, not {value!r}")
            return True
        return value

    def values(self, node: dict[str, Any], where: str) -> dict[str, Any] | None:
        value = node.get("values")
        if value is None:
            return None
        if not isinstance(value, dict):
            self.problem(f"{where}: 'values' must be an object")
            return None
        return value

    def patterns(self, node: dict[str, Any], where: str) -> dict[str, tuple[Pattern, ...]]:
        out: dict[str, tuple[Pattern, ...]] = {"include": (), "exclude": ()}
        for mode in ("include", "exclude"):
            values = node.get(mode) or []
            if not isinstance(values, list) or not all(
                isinstance(v, str)
                or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values()))
                for v in values
            ):
                self.problem(
                    f"{where}: {mode!r} must be a list of patterns (strings, or "
                    '{"value": …, "kind": …} objects)'
                )
                continue
            good: list[Pattern] = []
            for v in values:
                try:
                    good.extend(parse_patterns([v], mode))
                except DeskpilotError as exc:
                    self.problem(f"{where}: {exc}")
            out[mode] = tuple(good)
        return out

    def resources(self, data: dict[str, Any]) -> list[Resource]:
        items = data.get("resources") or []
        if not isinstance(items, list):
            self.problem("the export: 'resources' is not a list")
            return []
        out = []
        for n, item in enumerate(items, 1):
            where = f"resource {n}"
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                self.problem(f"{where}: must be an object with a 'url'")
                continue
            try:
                body = base64.b64decode(str(item.get("base64", "")), validate=True)
            except (ValueError, binascii.Error):
                self.problem(f"{where} {item['url']!r}: 'base64' is not base64")
                continue
            mime = item.get("mime") if isinstance(item.get("mime"), str) else ""
            out.append(Resource(item["url"], body, str(mime), "import"))
        return out


# -- entry points ----------------------------------------------------------------------------


def detect(path: Path, blob: bytes) -> str:
    if blob[:2] == b"PK":
        return "violentmonkey"
    text = blob.decode("utf-8", errors="replace")
    name = path.name.lower()
    if name.endswith(".user.js") or (
        "==UserScript==" in text[:10000] and not text.lstrip().startswith(("[", "{"))
    ):
        return "userscript"
    if name.endswith(".user.css") or (
        "==UserStyle==" in text[:10000] and not text.lstrip().startswith(("[", "{"))
    ):
        return "usercss"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RulesError(
            f"{path}: not a rules file deskpilot knows (not JSON: {exc}; not a zip, a "
            ".user.js or a .user.css)"
        ) from exc
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return "deskpilot"
    if isinstance(data, list) or (isinstance(data, dict) and "doc" in data and "_rev" in data):
        return "stylus"
    if isinstance(data, dict) and isinstance(data.get("scripts"), dict):
        raise RulesError(
            f"{path}: this is the settings part of a Violentmonkey backup, without its scripts: "
            "import the backup's .zip file"
        )
    raise RulesError(
        f"{path}: not a deskpilot export, a Stylus export, a Violentmonkey or Tampermonkey "
        "backup, a .user.js or a .user.css"
    )


def folder_name_for(kind: str, path: Path) -> str:
    """The folder an import goes into: named after the file it came from."""
    stem = path.name
    for suffix in (".user.js", ".user.css", ".json", ".zip"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return f"{LABELS.get(kind, kind)}: {stem or path.name}"


def plan_import(
    path: Path,
    source: str = "auto",
    folder: str | None = None,
    *,
    cached: Callable[[str], Resource | None] = lambda _url: None,
    fetch: bool = False,
) -> ImportPlan:
    """The plan for importing ``path``: every item checked (names normalised), every problem
    listed; a RulesError listing them all if there is any. ``cached`` looks a URL up in the
    library's cache; ``fetch`` downloads what is missing."""
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise RulesError(f"cannot read {path}: {exc.strerror}") from exc
    kind = detect(path, blob) if source == "auto" else source
    if kind not in SOURCES:
        raise RulesError(f"unknown import format {source!r}: use one of auto, {', '.join(SOURCES)}")
    name = folder or folder_name_for(kind, path)
    if kind == "violentmonkey":
        plan = plan_violentmonkey(blob, name, cached, fetch=fetch)
    elif kind in ("userscript", "usercss"):
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RulesError(f"{path} is not UTF-8 text") from exc
        if kind == "usercss":
            plan = plan_usercss(text, name, path.name)
        else:
            base = path.resolve().as_uri()
            plan = plan_userscript_file(text, path.name, name, cached, base_url=base, fetch=fetch)
    else:
        try:
            data = json.loads(blob.decode("utf-8"))
        except ValueError as exc:
            raise RulesError(f"{path} is not valid JSON ({exc})") from exc
        if kind == "stylus":
            plan = plan_stylus(data, name)
        else:
            plan = plan_deskpilot(data, folder)
            _check_deskpilot_scripts(plan, cached, fetch)
    check_plan(plan)  # what --dry-run shows is what would be saved
    refuse(plan)
    return plan


def _check_deskpilot_scripts(
    plan: ImportPlan, cached: Callable[[str], Resource | None], fetch: bool
) -> None:
    """A deskpilot export's userscripts need their @require/@resource files too."""
    from deskpilot.pages.userscript_plan import script_resources

    bundled = {cache_key(r.url): r for r in plan.resources}

    def lookup(url: str) -> Resource | None:
        return bundled.get(cache_key(url)) or cached(url)

    for f in plan.folders:
        for g in f.groups:
            for r in g.rules:
                meta = parse_meta(r.js) if r.js is not None else None
                if meta is None:
                    continue
                problems, found = script_resources(meta, r.base_url, lookup, fetch=fetch)
                where = f"folder {f.name!r} / rule {r.name!r}"
                plan.problems.extend(f"{where}: {p}" for p in problems)
                plan.resources.extend(found)
