"""Export and import of the rule library: deskpilot's own JSON, Stylus exports, Violentmonkey
backups.

deskpilot's format (lossless: export → import into an empty library → the same export)::

    {"format": "deskpilot-rules", "version": 1,
     "folders": [{"id", "name", "label", "enabled", "include", "exclude",
                  "groups": [{"id", "name", "enabled", "include", "exclude",
                              "rules": [{"id", "name", "enabled", "css", "js", "run_at",
                                         "frames", "origin", "include", "exclude"}]}]}]}

Patterns are strings (globs) or ``{"value": …, "kind": …}``. An import is planned first (an
:class:`~deskpilot.pages.import_plan.ImportPlan`, what ``--dry-run`` shows), then applied in one
transaction. A Stylus export becomes one folder with a group per style
(:mod:`deskpilot.pages.stylus`); a Violentmonkey backup one folder with a JS rule per script
(:mod:`deskpilot.pages.userscripts`).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from deskpilot.errors import DeskpilotError, RulesError
from deskpilot.pages.import_plan import FolderPlan, GroupPlan, ImportPlan, RulePlan, check_plan
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import Pattern, parse_patterns
from deskpilot.pages.stylus import plan_stylus
from deskpilot.pages.tree import Rule
from deskpilot.pages.userscripts import plan_violentmonkey

FORMAT = "deskpilot-rules"
VERSION = 1
SOURCES = ("deskpilot", "stylus", "violentmonkey")


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
    """The plan of a deskpilot export; a RulesError naming the first item that is malformed
    (a missing name, a field of the wrong type, a pattern that does not compile)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RulesError(f'not a deskpilot rules export (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise RulesError(f"deskpilot rules export version {data.get('version')!r} is unsupported")
    folders = []
    for fn, f in enumerate(_list(data, "folders", "the export"), 1):
        where = f"folder {fn}"
        groups = []
        for gn, g in enumerate(_list(f, "groups", where), 1):
            where_g = f"{where} / group {gn}"
            rules = []
            for rn, r in enumerate(_list(g, "rules", where_g), 1):
                at = f"{where_g} / rule {rn}"
                rules.append(
                    RulePlan(
                        name=_text(r, "name", at),
                        css=_maybe_text(r, "css", at),
                        js=_maybe_text(r, "js", at),
                        run_at=_maybe_text(r, "run_at", at) or "document-idle",
                        frames=_maybe_text(r, "frames", at) or "top",
                        enabled=_flag(r, at),
                        origin=_maybe_text(r, "origin", at) or "user",
                        id=_maybe_text(r, "id", at),
                        **_pats(r, at),
                    )
                )
            groups.append(
                GroupPlan(
                    name=_text(g, "name", where_g),
                    enabled=_flag(g, where_g),
                    rules=rules,
                    id=_maybe_text(g, "id", where_g),
                    **_pats(g, where_g),
                )
            )
        folders.append(
            FolderPlan(
                name=_text(f, "name", where),
                label=_maybe_text(f, "label", where),
                enabled=_flag(f, where),
                groups=groups,
                id=_maybe_text(f, "id", where),
                **_pats(f, where),
            )
        )
    return ImportPlan("deskpilot", folders)


def _list(node: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    value = node.get(key, [])
    if not isinstance(value, list):
        raise RulesError(f"{where}: {key!r} is not a list")
    for n, item in enumerate(value, 1):
        if not isinstance(item, dict):
            raise RulesError(f"{where}: item {n} of {key!r} is not an object")
    return value


def _maybe_text(node: dict[str, Any], key: str, where: str) -> str | None:
    value = node.get(key)
    if value is not None and not isinstance(value, str):
        raise RulesError(f"{where}: {key!r} must be text or null, not {type(value).__name__}")
    return value


def _text(node: dict[str, Any], key: str, where: str) -> str:
    value = _maybe_text(node, key, where)
    if value is None:
        raise RulesError(f"{where}: {key!r} is missing")
    return value


def _flag(node: dict[str, Any], where: str) -> bool:
    value = node.get("enabled", True)
    if not isinstance(value, bool):
        raise RulesError(f"{where}: 'enabled' must be true or false, not {value!r}")
    return value


def _pats(node: dict[str, Any], where: str) -> dict[str, tuple[Pattern, ...]]:
    out = {}
    for mode in ("include", "exclude"):
        values = node.get(mode) or []
        if not isinstance(values, list) or not all(
            isinstance(v, str)
            or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values()))
            for v in values
        ):
            raise RulesError(
                f"{where}: {mode!r} must be a list of patterns (strings, or "
                '{"value": …, "kind": …} objects)'
            )
        try:
            out[mode] = parse_patterns(values, mode)
        except DeskpilotError as exc:
            raise RulesError(f"{where}: {exc}") from None
    return out


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
    if kind not in SOURCES:
        raise RulesError(f"unknown import format {source!r}: use one of auto, {', '.join(SOURCES)}")
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
    if kind == "violentmonkey":
        plan = plan_violentmonkey(blob, folder or f"Violentmonkey import {stamp}")
    else:
        try:
            data = json.loads(blob.decode("utf-8"))
        except ValueError as exc:
            raise RulesError(f"{path} is not valid JSON ({exc})") from exc
        if kind == "stylus":
            plan = plan_stylus(data, folder or f"Stylus import {stamp}")
        else:
            plan = plan_deskpilot(data)
            for f in plan.folders if folder else ():
                f.name = folder or f.name
    check_plan(plan)  # what --dry-run shows is what would be saved
    return plan


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
