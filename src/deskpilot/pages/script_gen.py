"""The files a userscript becomes in the generated extension.

A userscript's file calls the page runtime's ``defineScript(key, spec, params, fn)``: ``fn``
is a function whose parameters are the names the script may use — ``GM_info``, ``GM``,
``unsafeWindow`` and each granted ``GM_*`` function (``@grant none``: only ``GM_info`` and
``GM.info``) — and whose body is the script's ``@require`` files, in order, then its own code.
``spec`` carries ``GM_info``, the grants, the ``@resource`` files (base64) and whether its
values must be read before it runs. A ``@unwrap`` script is a plain file run as it is, at top
level, by the extension (``chrome.scripting``), without GM API.

What the extension's worker needs to know of each script (its ``@connect`` list) goes to
``gen/N/scripts.json``; the values deskpilot holds, with their epochs, to ``gen/values.json``
(:mod:`deskpilot.pages.script_data`).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from deskpilot._version import VERSION
from deskpilot.pages import script_data
from deskpilot.pages.library import Library
from deskpilot.pages.resources import absolute, data_url, integrity_problem
from deskpilot.pages.tree import Rule
from deskpilot.pages.userscript_meta import (
    GM4_NAMES,
    GM_FUNCTIONS,
    UserscriptMeta,
    needs_values,
    parse_meta,
)

#: the script's own names for what a manager gives it, in the order ``fn`` takes them
BASE_PARAMS = ("GM_info", "GM", "unsafeWindow")


@dataclass
class ScriptFile:
    """One userscript of a rule set."""

    key: str
    rule: Rule
    meta: UserscriptMeta
    spec: dict[str, Any]
    params: list[str]
    body: str  # requires, then the code
    problems: list[str] = field(default_factory=list)

    @property
    def unwrap(self) -> bool:
        return bool(self.spec.get("unwrap"))

    def define_js(self, rev: int) -> str:
        file = f"gen/{rev}/{self.rule.id}.raw.js"
        spec = {**self.spec, "file": file} if self.unwrap else self.spec
        head = f"window.__deskpilotPages.defineScript({json.dumps(self.key)}, {json.dumps(spec)}, "
        if self.unwrap:
            return head + f"{json.dumps(self.params)}, null);\n"
        kind = "async function" if self.meta.flag("topLevelAwait") else "function"
        broken = "".join(
            f"throw new Error({json.dumps(p)});\n" for p in self.problems[:1]
        )  # a missing @require: said when the script would run
        return (
            f"{head}{json.dumps(self.params)}, {kind} ({', '.join(self.params)}) {{\n"
            f"{broken}{self.body}\n}});\n"
            f"//# sourceURL=deskpilot-rule-{self.rule.id}.user.js\n"
        )

    def raw_js(self) -> str:
        return self.body + f"\n//# sourceURL=deskpilot-rule-{self.rule.id}.user.js\n"


def script_file(library: Library, rule: Rule, key: str) -> ScriptFile | None:
    """The userscript ``rule`` is, or None when its JS is a plain rule body."""
    meta = parse_meta(rule.js or "")
    if meta is None:
        return None
    state = library.script_state(rule.id)
    grants = sorted({g for g in meta.grants if g in GM_FUNCTIONS})  # GM.x grants only GM.x
    none = "none" in meta.grants or not meta.grants
    params = list(BASE_PARAMS)
    if not none:
        params += grants
        if "window.close" in meta.grants or "window.focus" in meta.grants:
            params += ["window"]
            params += [n for n in ("close", "focus") if f"window.{n}" in meta.grants]
    problems: list[str] = []
    requires = []
    for url in meta.items("require"):
        text = _file(library, url, state.base_url, problems, "@require")
        if text is not None:
            requires.append(text.decode("utf-8", errors="replace"))
    resources = {}
    for name, url in meta.resources.items():
        body = _file(library, url, state.base_url, problems, f"@resource {name}")
        if body is not None:
            res = library.resource(absolute(url, state.base_url))
            inline = data_url(url)
            mime = (inline.mime if inline else res.mime if res else "") or "text/plain"
            resources[name] = {
                "url": url,
                "mime": mime,
                "b64": base64.b64encode(body).decode(),
            }
    spec = {
        "grants": [*grants, *(g for g in meta.grants if g.startswith(("GM.", "window.")))],
        "none": none,
        "values": needs_values(meta) and not none,
        "unwrap": meta.flag("unwrap"),
        "resources": resources,
        "gm4": {short: twin for short, twin in GM4_NAMES.items()},
        "info": {
            "script": gm_info_script(meta, rule),
            "metaStr": meta.text,
            "handlerVersion": VERSION,
        },
    }
    code = "\n;\n".join([*requires, rule.js or ""]) if requires else (rule.js or "")
    return ScriptFile(key, rule, meta, spec, params, code, problems)


def _file(library: Library, url: str, base: str, problems: list[str], line: str) -> bytes | None:
    inline = data_url(url.strip())
    if inline is not None:
        return inline.body
    full = absolute(url, base)
    res = library.resource(full)
    if res is None:
        problems.append(
            f"{line} {full} is not in deskpilot's cache (deskpilot rules cache add {full} FILE)"
        )
        return None
    bad = integrity_problem(full, res.body)
    if bad:
        problems.append(f"{line} {full}: {bad}")
        return None
    return res.body


def gm_info_script(meta: UserscriptMeta, rule: Rule) -> dict[str, Any]:
    """``GM_info.script``: the metadata as Violentmonkey gives it, with Tampermonkey's names
    for the lists too."""
    out: dict[str, Any] = {k: v for k, v in meta.values.items() if k != "resource"}
    for key in ("include", "exclude", "match", "excludeMatch", "require", "grant", "connect"):
        out.setdefault(key, [])
    out.update(
        {
            "name": meta.name or rule.name,
            "namespace": meta.namespace,
            "description": meta.first("description"),
            "version": meta.first("version"),
            "runAt": rule.run_at,
            "noframes": rule.frames == "top",
            "unwrap": meta.flag("unwrap"),
            "resources": [{"name": n, "url": u} for n, u in meta.resources.items()],
            "includes": out["include"],
            "excludes": out["exclude"],
            "matches": out["match"],
            "excludeMatches": out["excludeMatch"],
            "connects": out["connect"],
            "requires": out["require"],
            "grants": out["grant"],
        }
    )
    return out


def scripts_json(files: list[ScriptFile]) -> str:
    return json.dumps(
        {
            f.rule.id: {"name": f.meta.name or f.rule.name, "connect": f.meta.items("connect")}
            for f in files
        }
    )


def values_json(library: Library) -> str:
    """Every userscript's values with their epoch (scripts absent from the library are
    forgotten by the browser)."""
    ids = [r.id for _f, _g, r in library.chains() if r.js and parse_meta(r.js) is not None]
    states = script_data.states(library.db)
    stored = script_data.all_values(library.db)
    entries = {
        rid: {"epoch": states[rid].epoch if rid in states else 0, "data": stored.get(rid, {})}
        for rid in ids
        if rid in stored or (rid in states and states[rid].epoch > 0)
    }
    return json.dumps({"values": entries, "scripts": ids}, ensure_ascii=False)
