"""Importing userscripts: a Violentmonkey backup (a zip of ``*.user.js`` with its
``violentmonkey`` JSON entry: per-script settings, order and — when exported with them — the
scripts' values), a Tampermonkey zip (``*.user.js`` with ``*.options.json`` and
``*.storage.json``, read as Violentmonkey reads them), or one ``.user.js`` file.

One folder; a group holding a JS rule per script, in the backup's order (each script as
:mod:`deskpilot.pages.userscript_plan` makes it). Every script that Violentmonkey would refuse,
or that could not run, is named with its problems; with any, nothing is imported.

Values in a Violentmonkey backup are keyed by the script's ``uri`` (namespace + name) and
written as Violentmonkey stores them: ``s…`` text, ``n…`` number, ``b…`` boolean, ``o…`` JSON.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

from deskpilot.errors import RulesError
from deskpilot.pages.import_plan import FolderPlan, GroupPlan, ImportPlan, object_of
from deskpilot.pages.script_data import Resource
from deskpilot.pages.userscript_meta import parse_meta
from deskpilot.pages.userscript_plan import ScriptSource, plan_userscript

USER_JS = ".user.js"
VM_ENTRY = "violentmonkey"
MAX_ENTRY = 100_000_000  # Violentmonkey skips bigger zip entries


def decode_vm_value(raw: Any) -> Any:
    """A value as a Violentmonkey backup writes it (anything else is taken as it is)."""
    if not isinstance(raw, str) or not raw:
        return raw
    kind, body = raw[0], raw[1:]
    if kind == "s":
        return body
    if kind == "n":
        try:
            number = float(body)
        except ValueError:
            return body
        return int(number) if number.is_integer() and "." not in body else number
    if kind == "b":
        return body == "true"
    if kind == "o":
        try:
            return json.loads(body)
        except ValueError:
            return body
    return raw


def plan_violentmonkey(
    blob: bytes,
    folder_name: str,
    cached: Callable[[str], Resource | None],
    *,
    fetch: bool = False,
) -> ImportPlan:
    try:
        archive = zipfile.ZipFile(io.BytesIO(blob))
    except zipfile.BadZipFile as exc:
        raise RulesError("not a Violentmonkey backup (not a zip file)") from exc
    plan = ImportPlan("violentmonkey", [])
    infos = {i.filename: i for i in archive.infolist() if i.file_size < MAX_ENTRY}
    info = _vm_entry(archive, infos, plan)
    scripts_info = object_of(info.get("scripts"))
    values = object_of(info.get("values"))
    tm_options, tm_storage = _tampermonkey(archive, infos, plan)
    files = [n for n in infos if n.endswith(USER_JS)]
    if not files:
        raise RulesError("the backup holds no .user.js scripts")
    entries = []
    for fname in files:
        key = fname[: -len(USER_JS)]
        try:
            code = archive.read(fname).decode("utf-8")
        except UnicodeDecodeError:
            plan.problems.append(f"{fname}: not UTF-8 text")
            continue
        extra = object_of(scripts_info.get(key)) or tm_options.get(key, {})
        if key in scripts_info and not isinstance(scripts_info[key], dict):
            plan.problems.append(f"{fname}: its entry in {VM_ENTRY} is not an object")
        position = extra.get("position")
        if not isinstance(position, int) or isinstance(position, bool):
            position = 1 << 30
        entries.append((position, key, fname, code, extra))
    entries.sort(key=lambda e: (e[0], e[1]))
    matched: set[str] = set()
    rules = []
    for _pos, key, fname, code, extra in entries:
        custom = object_of(extra.get("custom"))
        config = {"enabled": extra.get("enabled", 1), **object_of(extra.get("config"))}
        for what, value in (("custom", extra.get("custom")), ("config", extra.get("config"))):
            if value is not None and not isinstance(value, dict):
                plan.problems.append(f"{fname}: '{what}' in {VM_ENTRY} is not an object")
        meta = parse_meta(code)
        stored = values.get(meta.uri) if meta is not None else None
        if stored is not None and meta is not None:
            matched.add(meta.uri)
        script_values = _values(stored, fname, plan) if stored is not None else tm_storage.get(key)
        installed = custom.get("lastInstallURL")
        base = installed if isinstance(installed, str) else ""  # relative @require's base
        src = ScriptSource(code, fname, custom, config, base_url=base, values=script_values)
        out = plan_userscript(src, cached, fetch=fetch)
        plan.problems.extend(f"{fname}: {p}" for p in out.problems)
        plan.warnings.extend(f"{fname}: {w}" for w in out.warnings)
        plan.resources.extend(out.resources)
        if out.rule is not None:
            rules.append(out.rule)
    lost = [uri for uri in values if uri not in matched]
    if lost:
        plan.warnings.append(
            f"the backup holds values for {len(lost)} script(s) it does not contain (by "
            f"namespace and name): {', '.join(repr(u) for u in lost[:5])}"
        )
    plan.folders.append(FolderPlan(name=folder_name, groups=[GroupPlan("Scripts", rules=rules)]))
    return plan


def _vm_entry(
    archive: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], plan: ImportPlan
) -> dict[str, Any]:
    name = next((n for n in infos if n.lower() == VM_ENTRY), None)
    if name is None:
        return {}
    try:
        data = json.loads(archive.read(name).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        plan.problems.append(f"the backup's {VM_ENTRY} entry is not JSON ({exc})")
        return {}
    if not isinstance(data, dict):
        plan.problems.append(f"the backup's {VM_ENTRY} entry is not a JSON object")
        return {}
    for key in ("scripts", "values"):
        if key in data and not isinstance(data[key], dict):
            plan.problems.append(f"the backup's {VM_ENTRY} entry: '{key}' is not an object")
    return data


def _values(stored: Any, fname: str, plan: ImportPlan) -> dict[str, Any] | None:
    if not isinstance(stored, dict):
        plan.problems.append(f"{fname}: its stored values are not an object")
        return None
    return {str(k): decode_vm_value(v) for k, v in stored.items()}


def _tampermonkey(
    archive: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], plan: ImportPlan
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Per-script settings and values from a Tampermonkey zip (Violentmonkey's reading)."""
    options: dict[str, dict[str, Any]] = {}
    storage: dict[str, dict[str, Any]] = {}
    for name in infos:
        for suffix in (".options.json", ".storage.json"):
            if not name.endswith(suffix):
                continue
            key = name[: -len(suffix)]
            try:
                data = json.loads(archive.read(name).decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as exc:
                plan.problems.append(f"{name}: not JSON ({exc})")
                continue
            if not isinstance(data, dict):
                plan.problems.append(f"{name}: not a JSON object")
            elif suffix == ".storage.json":
                stored = data.get("data")
                if stored is not None and not isinstance(stored, dict):
                    plan.problems.append(f"{name}: 'data' is not an object")
                else:
                    storage[key] = dict(stored or {})
            else:
                options[key] = _tm_options(data)
    return options, storage


def _tm_options(data: dict[str, Any]) -> dict[str, Any]:
    settings = object_of(data.get("settings"))
    opts = object_of(data.get("options"))
    ovr = object_of(opts.get("override"))

    def strings(value: Any) -> list[str]:
        items = value if isinstance(value, list) else [value] if value is not None else []
        return [v for v in items if isinstance(v, str)]

    noframes = ovr.get("noframes")
    position = settings.get("position")
    return {
        "config": {"enabled": 0 if settings.get("enabled") is False else 1},
        "custom": {
            "noframes": None if noframes is None else int(bool(noframes)),
            "runAt": opts.get("run_at") if isinstance(opts.get("run_at"), str) else None,
            "exclude": strings(ovr.get("use_excludes")),
            "include": strings(ovr.get("use_includes")),
            "match": strings(ovr.get("use_matches")),
            "origExclude": ovr.get("merge_excludes") is not False,
            "origInclude": ovr.get("merge_includes") is not False,
            "origMatch": ovr.get("merge_matches") is not False,
        },
        "position": int(position) if isinstance(position, int | float) else None,
    }


def plan_userscript_file(
    code: str,
    label: str,
    folder_name: str,
    cached: Callable[[str], Resource | None],
    *,
    base_url: str = "",
    fetch: bool = False,
) -> ImportPlan:
    """A single ``.user.js`` as an import."""
    plan = ImportPlan("userscript", [])
    out = plan_userscript(ScriptSource(code, label, base_url=base_url), cached, fetch=fetch)
    plan.problems.extend(f"{label}: {p}" for p in out.problems)
    plan.warnings.extend(f"{label}: {w}" for w in out.warnings)
    plan.resources.extend(out.resources)
    rules = [out.rule] if out.rule is not None else []
    plan.folders.append(FolderPlan(name=folder_name, groups=[GroupPlan("Scripts", rules=rules)]))
    return plan
