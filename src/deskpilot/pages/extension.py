"""The generated Chromium extension that applies the rule library with no deskpilot running.

deskpilot writes it from the library on every change and loads it into the agent browser
(``--load-extension``). Layout::

    manifest.json        MV3; content scripts: bridge.js (isolated world) and the rule set
                         current when the browser starts (MAIN world, document start, frames)
    sw.js, bridge.js     static (package data)
    gen/current.json     {"rev": N, "files": [...]}: the newest rule set; the service worker
                         registers it dynamically when it is newer than the manifest's
    gen/N/runtime.js     the page runtime (package data)
    gen/N/hold.js        (manifest only) hold this set's JS until the injection is over: a
                         newer set registered since the launch supersedes it (runtime.js)
    gen/N/data.js        the enabled rules in order: CSS, compiled patterns, flags
    gen/N/r_<id>.js      one file per JS rule (a syntax error breaks only that rule); a
                         userscript's holds its @require files and GM API wrapper
                         (:mod:`deskpilot.pages.script_gen`); r_<id>.raw.js an @unwrap one
    gen/N/scripts.json   what the worker needs of each userscript (its @connect list)
    gen/values.json      the userscripts' values deskpilot holds, with their epochs
    offscreen.*, icon.png  the clipboard's document, the notifications' icon
    panes/               the code of open JS TEMP panes (re-run after a reload)

Why an extension and not only a CDP connection: scripts a CDP client registers vanish when it
disconnects, and deskpilot's processes are short-lived; a content script from an unpacked
extension runs at document start in every frame (cross-site ones too), is not subject to the
page's CSP, and lives as long as the browser.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from deskpilot.pages.library import Library
from deskpilot.pages.script_gen import ScriptFile, script_file, scripts_json, values_json
from deskpilot.pages.tree import Folder, Group, Rule

NAME = "deskpilot page rules"
KEEP_REVISIONS = 3
STATIC = ("sw.js", "bridge.js", "offscreen.html", "offscreen.js")
PERMISSIONS = [
    "scripting",
    "storage",
    "notifications",
    "offscreen",
    "clipboardWrite",
    "downloads",
    "tabs",
]


def asset(name: str) -> str:
    return (resources.files("deskpilot") / "data" / "pages" / name).read_text(encoding="utf-8")


def asset_bytes(name: str) -> bytes:
    return (resources.files("deskpilot") / "data" / "pages" / name).read_bytes()


def runtime_js() -> str:
    """The page runtime with the GM API inside its closure."""
    return asset("runtime.js").replace("  /*@GM@*/", asset("gm.js"), 1)


@dataclass(frozen=True)
class RuleSet:
    """The enabled rules of one library revision, as the page runtime takes them."""

    rev: int
    rules: list[dict[str, Any]]
    code: dict[str, str]  # key → JS body
    scripts: dict[str, ScriptFile] = field(default_factory=dict)  # key → userscript
    values: str = "{}"  # gen/values.json

    def data_js(self) -> str:
        return f"window.__deskpilotPages.load({self.rev}, {json.dumps(self.rules)});\n"

    def define_js(self, key: str) -> str:
        if key in self.scripts:
            return self.scripts[key].define_js(self.rev)
        body = self.code[key]
        return (
            f"window.__deskpilotPages.define({json.dumps(key)}, function (dp) {{\n{body}\n}});\n"
            f"//# sourceURL=deskpilot-rule-{key.split('@')[0]}.js\n"
        )


def rule_key(rule: Rule) -> str:
    return f"{rule.id}@{rule.revision}"


def _level(node: Folder | Group | Rule) -> dict[str, list[list[str]]]:
    return {"inc": [p.wire for p in node.include], "exc": [p.wire for p in node.exclude]}


def rule_set(library: Library) -> RuleSet:
    rules: list[dict[str, Any]] = []
    code: dict[str, str] = {}
    scripts: dict[str, ScriptFile] = {}
    for folder, group, rule in library.chains():
        if not (folder.enabled and group.enabled and rule.enabled):
            continue
        key = rule_key(rule)
        entry: dict[str, Any] = {
            "key": key,
            "id": rule.id,
            "name": rule.name,
            "css": rule.css,
            "hasJs": rule.js is not None,
            "runAt": rule.run_at,
            "frames": rule.frames,
            "levels": [_level(folder), _level(group), _level(rule)],
        }
        if rule.js is not None:
            code[key] = rule.js
            script = script_file(library, rule, key)
            if script is not None:
                scripts[key] = script
                entry["us"] = {"epoch": library.script_state(rule.id).epoch}
        rules.append(entry)
    return RuleSet(library.revision, rules, code, scripts, values_json(library))


HOLD_JS = "window.__deskpilotPages.hold();\n"


def _files(rs: RuleSet) -> dict[str, str]:
    base = f"gen/{rs.rev}"
    out = {f"{base}/runtime.js": runtime_js(), f"{base}/data.js": rs.data_js()}
    for key in rs.code:
        out[f"{base}/{key.split('@')[0]}.js"] = rs.define_js(key)
    return out


def _side_files(rs: RuleSet) -> dict[str, str]:
    """The set's files that are not content scripts."""
    base = f"gen/{rs.rev}"
    out = {f"{base}/scripts.json": scripts_json(list(rs.scripts.values()))}
    for script in rs.scripts.values():
        if script.unwrap:
            out[f"{base}/{script.rule.id}.raw.js"] = script.raw_js()
    return out


def launch_files(files: list[str]) -> list[str]:
    """The manifest's list: the set's files with hold.js after the runtime."""
    return [files[0], files[0].rsplit("/", 1)[0] + "/hold.js", *files[1:]]


def manifest(files: list[str]) -> dict[str, Any]:
    common = {
        "matches": ["<all_urls>"],
        "run_at": "document_start",
        "all_frames": True,
        "match_about_blank": True,
        "match_origin_as_fallback": True,
    }
    return {
        "manifest_version": 3,
        "name": NAME,
        "version": "1.0",
        "description": "Applies deskpilot's page rules (generated; edit with `deskpilot rules`).",
        "permissions": PERMISSIONS,
        "host_permissions": ["<all_urls>"],
        "background": {"service_worker": "sw.js"},
        "content_scripts": [
            {**common, "js": ["bridge.js"]},
            {**common, "js": files, "world": "MAIN"},
        ],
    }


def write_extension(library: Library, directory: Path, *, for_launch: bool = False) -> RuleSet:
    """Write the current rule set; with ``for_launch`` also point the manifest at it (the
    manifest is read when the browser starts, so it changes only then)."""
    rs = rule_set(library)
    directory.mkdir(parents=True, exist_ok=True)
    generated = _files(rs)
    for rel, text in {**generated, **_side_files(rs)}.items():
        _write(directory / rel, text)
    _write(directory / f"gen/{rs.rev}/hold.js", HOLD_JS)
    _write(directory / "gen" / "values.json", rs.values)
    for name in STATIC:
        _write(directory / name, asset(name))
    icon = directory / "icon.png"
    if not icon.exists():
        icon.write_bytes(asset_bytes("icon.png"))
    order = list(generated)
    _write(directory / "gen" / "current.json", json.dumps({"rev": rs.rev, "files": order}))
    manifest_path = directory / "manifest.json"
    if for_launch or not manifest_path.exists():
        _write(manifest_path, json.dumps(manifest(launch_files(order)), indent=2))
    (directory / "panes").mkdir(exist_ok=True)
    _prune(directory, keep={rs.rev, _manifest_rev(manifest_path)})
    return rs


def _manifest_rev(path: Path) -> int:
    try:
        data = json.loads(path.read_text())
        files = data["content_scripts"][1]["js"]
        return int(files[0].split("/")[1])
    except (OSError, ValueError, KeyError, IndexError):
        return -1


def _prune(directory: Path, keep: set[int]) -> None:
    revs = sorted(
        (int(p.name) for p in (directory / "gen").iterdir() if p.is_dir() and p.name.isdigit()),
        reverse=True,
    )
    for rev in revs[KEEP_REVISIONS:]:
        if rev not in keep:
            shutil.rmtree(directory / "gen" / str(rev), ignore_errors=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def push_script(rs: RuleSet) -> list[str]:
    """What deskpilot evaluates in an open document to bring it to ``rs``: the runtime, the
    set, then each JS rule on its own (one rule's syntax error leaves the others)."""
    return [runtime_js(), rs.data_js(), *(rs.define_js(k) for k in rs.code)]
