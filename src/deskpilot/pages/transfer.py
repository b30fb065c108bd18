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

from deskpilot.errors import RulesError
from deskpilot.pages.import_plan import FolderPlan, GroupPlan, ImportPlan, RulePlan
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
