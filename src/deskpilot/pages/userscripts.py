"""Importing a Violentmonkey backup (a zip of ``*.user.js`` plus its ``violentmonkey`` JSON):
one folder with a group holding a JS rule per script — ``@match``/``@include``/``@exclude``/
``@exclude-match``, ``@run-at``, ``@noframes``, the user's overrides, enabled flag and order."""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any

from deskpilot.errors import DeskpilotError, RulesError
from deskpilot.pages.import_plan import (
    FolderPlan,
    GroupPlan,
    ImportPlan,
    RulePlan,
    items_of,
    object_of,
)
from deskpilot.pages.patterns import Pattern, compile_pattern
from deskpilot.pages.tree import RUN_AT

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
        extra = object_of(object_of(scripts_info).get(key))
        source = archive.read(fname).decode("utf-8", errors="replace")
        position = extra.get("position")
        if not isinstance(position, int) or isinstance(position, bool):
            position = 1 << 30
        entries.append((position, key, source, extra))
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
    custom = object_of(extra.get("custom"))
    config = object_of(extra.get("config"))

    def merged(tag: str, custom_key: str, orig_key: str) -> list[str]:
        own = meta.get(tag, []) if custom.get(orig_key, True) is not False else []
        return [*own, *(str(v) for v in items_of(custom.get(custom_key)))]

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
    run_at = custom.get("runAt")
    if not isinstance(run_at, str) or not run_at:
        run_at = (meta.get("run-at") or ["document-end"])[0]
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
