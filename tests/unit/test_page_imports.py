"""Imports are all or nothing, for every format: each item checked as Stylus or Violentmonkey
checks it, every problem listed with its item, nothing saved on any. And what the formats
carry beside code: UserCSS settings, a backup's script values, the @require cache."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from deskpilot.cli import main
from deskpilot.config import load_settings
from deskpilot.errors import RulesError
from deskpilot.pages.import_plan import apply_plan
from deskpilot.pages.library import Library
from deskpilot.pages.script_data import Resource
from deskpilot.pages.script_gen import script_file
from deskpilot.pages.store import open_library
from deskpilot.pages.transfer import export_library, plan_deskpilot, plan_import
from deskpilot.pages.userscript_meta import parse_meta
from deskpilot.pages.userscripts import decode_vm_value

GOOD_STYLE = {"name": "Good", "enabled": True, "sections": [{"code": "a{}", "domains": ["a.com"]}]}


def refused(path: Path, **kw: Any) -> list[str]:
    with pytest.raises(RulesError) as caught:
        plan_import(path, **kw)
    head, *lines = str(caught.value).splitlines()
    assert head.startswith("nothing imported: ")
    return [line.removeprefix("  - ") for line in lines]


def test_a_malformed_stylus_export_is_refused_whole_with_every_problem_named(
    tmp_path: Path,
) -> None:
    export = [
        {"settings": {}, "order": {"main": [], "prio": []}},
        GOOD_STYLE,
        {"name": "Number", "sections": [{"code": 42}]},
        {"sections": [{"code": "b{}"}]},
        {"name": "   ", "sections": [{"code": "b{}"}]},
        {"name": "No sections"},
        {"name": "Flag", "enabled": "yes", "sections": [{"code": "c{}"}]},
        {"name": "Lists", "sections": [{"code": "d{}", "urls": "https://a.com/"}]},
        {"name": "Regex", "sections": [{"code": "e{}", "regexps": ["("]}]},
        {"name": "Override", "sections": [{"code": "f{}"}], "exclusions": [5]},
        {"name": "UserCSS", "usercssData": {"name": "UserCSS"}, "sections": [{"code": ""}]},
        {
            "name": "Less",
            "usercssData": {"preprocessor": "less"},
            "sections": [{"code": ""}],
            "sourceCode": "/* ==UserStyle==\n@name Less\n==/UserStyle== */\n@c: red; a{color:@c}",
        },
        "not a style",
    ]
    path = tmp_path / "stylus-2026-12-01.json"
    path.write_text(json.dumps(export))
    problems = refused(path)
    expected = [
        "style 3 'Number': section 1: 'code' must be CSS text, not int 42",
        "style 4: 'name' must be non-empty text",
        "style 5: 'name' must be non-empty text",
        "style 6 'No sections': 'sections' must be a non-empty list",
        "style 7 'Flag': 'enabled' must be true or false, not 'yes'",
        "style 8 'Lists': section 1: 'urls' must be a list of text",
        "style 9 'Regex': section 1: regexps '(': regex pattern '(' does not compile",
        "style 10 'Override': 'exclusions' must be a list of text",
        "style 11 'UserCSS': a UserCSS style needs its 'sourceCode' text",
        "style 12 'Less': it is written in less, which deskpilot cannot compile",
        "style 13: not a style",
    ]
    assert len(problems) == len(expected), problems
    for want, got in zip(expected, problems, strict=True):
        assert got.startswith(want), (want, got)
    with Library(tmp_path / "rules.sqlite3") as lib:
        with pytest.raises(RulesError):
            apply_plan(lib, plan_import(path))
        assert lib.tree() == [] and lib.revision == 0


def test_usercss_settings_apply_as_stylus_applies_them(tmp_path: Path) -> None:
    source = """/* ==UserStyle==
@name        Dark
@namespace   example.org
@version     1.0.0
@preprocessor default
@var color bg "Background" #111111
@var select font "Font" ["Sans*", "Serif"]
@var number size "Size" [14, 8, 30, 1, "px"]
==/UserStyle== */
@-moz-document domain("docs.example") {
  body { background: var(--bg); font-size: var(--size); font-family: var(--font); }
}
"""
    export = [
        {
            "name": "Dark",
            "sourceCode": source,
            "enabled": True,
            "sections": [{"code": ""}],
            "usercssData": {
                "name": "Dark",
                "preprocessor": "default",
                "vars": {"bg": {"type": "color", "value": "#222222"}},
            },
        }
    ]
    path = tmp_path / "stylus.json"
    path.write_text(json.dumps(export))
    plan = plan_import(path)
    (rule,) = plan.folders[0].groups[0].rules
    assert rule.css is not None and ":root {" in rule.css
    assert "--bg: #222222;" in rule.css  # the value the user chose
    assert "--size: 14px;" in rule.css and "--font: Sans;" in rule.css  # defaults
    assert [(p.kind, p.value) for p in rule.include] == [("domain", "docs.example")]
    # a .user.css file: Stylus's mandatory @name, @namespace, @version
    bare = tmp_path / "bare.user.css"
    bare.write_text("/* ==UserStyle==\n@name Bare\n==/UserStyle== */\na { color: red }\n")
    assert refused(bare) == [
        "bare.user.css: the ==UserStyle== block has no @namespace (Stylus requires it)",
        "bare.user.css: the ==UserStyle== block has no @version (Stylus requires it)",
    ]
    uso = tmp_path / "uso.user.css"
    uso.write_text(
        "/* ==UserStyle==\n@name U\n@namespace n\n@version 1\n@preprocessor uso\n"
        '@var text accent "Accent" red\n==/UserStyle== */\na { color: /*[[accent]]*/; }\n'
    )
    plan = plan_import(uso)
    assert plan.folders[0].name == "UserCSS: uso"
    assert plan.folders[0].groups[0].rules[0].css == "a { color: red; }"


def _zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


SCRIPT = """// ==UserScript==
// @name        Counter
// @namespace   https://example.org
// @match       https://*.example.com/*
// @grant       GM_getValue
// @grant       GM_setValue
// ==/UserScript==
GM_setValue('n', GM_getValue('n', 0) + 1);
"""


def test_a_violentmonkey_backup_carries_its_values(tmp_path: Path) -> None:
    meta = parse_meta(SCRIPT)
    assert meta is not None and meta.uri == "https-3a-2f-2fexample.org-0aCounter-0a"
    values = {"n": "n41", "name": "sAnn", "on": "btrue", "obj": 'o{"a":[1,2]}', "f": "n1.5"}
    path = tmp_path / "violentmonkey_2026-12-01_10.00.00.zip"
    path.write_bytes(
        _zip(
            {
                "Counter.user.js": SCRIPT,
                "violentmonkey": json.dumps(
                    {
                        "scripts": {"Counter": {"config": {"enabled": 0}, "position": 3}},
                        "values": {meta.uri: values},
                    }
                ),
            }
        )
    )
    plan = plan_import(path)
    (rule,) = plan.folders[0].groups[0].rules
    assert rule.values == {"n": 41, "name": "Ann", "on": True, "obj": {"a": [1, 2]}, "f": 1.5}
    assert not rule.enabled
    with Library(tmp_path / "rules.sqlite3") as lib:
        apply_plan(lib, plan)
        rid = lib.tree()[0].groups[0].rules[0].id
        assert lib.values(rid)["n"] == 41 and lib.script_state(rid).epoch == 1
        exported = export_library(lib)
    with Library(tmp_path / "again.sqlite3") as lib:
        apply_plan(lib, plan_deskpilot(json.loads(json.dumps(exported))))
        assert export_library(lib) == exported  # values and all


def test_a_tampermonkey_zip_brings_its_settings_and_storage(tmp_path: Path) -> None:
    path = tmp_path / "tampermonkey-backup-chrome.zip"
    options = {
        "settings": {"enabled": False, "position": 2},
        "options": {
            "run_at": "document-start",
            "override": {
                "use_matches": ["https://extra.test/*"],
                "merge_matches": True,
                "noframes": True,
            },
        },
    }
    path.write_bytes(
        _zip(
            {
                "Counter.user.js": SCRIPT,
                "Counter.options.json": json.dumps(options),
                "Counter.storage.json": json.dumps({"ts": 1, "data": {"n": 7}}),
            }
        )
    )
    (rule,) = plan_import(path).folders[0].groups[0].rules
    assert rule.values == {"n": 7} and not rule.enabled
    assert rule.run_at == "document-start" and rule.frames == "top"
    assert [p.value for p in rule.include] == ["https://*.example.com/*", "https://extra.test/*"]


def test_a_malformed_violentmonkey_backup_names_every_script(tmp_path: Path) -> None:
    path = tmp_path / "vm.zip"
    path.write_bytes(
        _zip(
            {
                "Counter.user.js": SCRIPT,
                "Nameless.user.js": "// ==UserScript==\n// @match *://*/*\n// ==/UserScript==\n",
                "Html.user.js": "<html>// ==UserScript==\n// @name H\n// ==/UserScript==",
                "Bad.user.js": "// ==UserScript==\n// @name Bad\n// @match http://*.a.*/x\n"
                "// @include /(/\n// @require https://cdn.test/x.js\n// ==/UserScript==\n",
                "violentmonkey": json.dumps({"scripts": {"Counter": "oops"}, "values": []}),
            }
        )
    )
    problems = refused(path)
    assert "the backup's violentmonkey entry: 'values' is not an object" in problems
    assert "Counter.user.js: its entry in violentmonkey is not an object" in problems
    assert any(p.startswith("Nameless.user.js: the metadata block has no @name") for p in problems)
    assert any(p.startswith("Html.user.js: not a userscript") for p in problems)
    bad = [p for p in problems if p.startswith("Bad.user.js")]
    assert len(bad) == 3, bad  # the @match, the @include, the @require
    assert any("@match 'http://*.a.*/x'" in p for p in bad)
    assert any("@include '/(/'" in p for p in bad)
    assert any("@require: https://cdn.test/x.js is not in deskpilot's cache" in p for p in bad)


def test_a_deskpilot_export_lists_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    rule = {"name": "r", "css": "a{}"}
    path.write_text(
        json.dumps(
            {
                "format": "deskpilot-rules",
                "version": 2,
                "folders": [
                    {
                        "name": "A",
                        "label": "TOOLONG",
                        "groups": [
                            {
                                "name": "g",
                                "rules": [
                                    {**rule, "css": 5},
                                    {**rule, "include": ["match:http://exa*mple.com/x"]},
                                    {**rule, "values": [1]},
                                ],
                            }
                        ],
                    },
                    {"groups": []},
                ],
                "resources": [{"url": "https://x/y.js", "base64": "%%%"}],
            }
        )
    )
    problems = refused(path)
    assert "folder 1 / group 1 / rule 1: 'css' must be text or null, not int" in problems
    assert any(p.startswith("folder 1 / group 1 / rule 2: match pattern") for p in problems)
    assert "folder 1 / group 1 / rule 3: 'values' must be an object" in problems
    assert "folder 2: 'name' is missing" in problems
    assert "resource 1 'https://x/y.js': 'base64' is not base64" in problems
    assert any("label 'TOOLONG' must be 1 to 3 characters" in p for p in problems)


def test_a_userscript_file_needs_its_require_from_the_cache_or_a_local_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "lib.js").write_text("var LIB = 1;")
    script = tmp_path / "uses-lib.user.js"
    pinned = "https://cdn.test/x.js#sha256=" + "0" * 64
    lines = f"// @require lib.js\n// @require {pinned}\n// @grant"
    script.write_text(SCRIPT.replace("// @grant", lines, 1))
    problems = refused(script)
    assert problems == [
        "uses-lib.user.js: @require: https://cdn.test/x.js#sha256="
        + "0" * 64
        + " is not in deskpilot's cache: fill it with `deskpilot rules cache add "
        "https://cdn.test/x.js#sha256=" + "0" * 64 + " FILE` (a copy you have) or `deskpilot "
        "rules cache fetch https://cdn.test/x.js#sha256=" + "0" * 64 + "` (online), or import "
        "with --fetch"
    ]
    wrong = Resource("https://cdn.test/x.js", b"var X = 1;")
    problems = refused(script, cached=lambda url: wrong if "cdn.test" in url else None)
    assert "its sha256 hash does not match the file" in problems[0]
    import hashlib

    good = Resource("https://cdn.test/x.js", b"var X = 2;")
    digest = hashlib.sha256(good.body).hexdigest()
    script.write_text(script.read_text().replace("0" * 64, digest))
    plan = plan_import(script, cached=lambda url: good if "cdn.test" in url else None)
    assert [r.url for r in plan.resources] == [(tmp_path / "lib.js").as_uri()]  # the local file
    assert plan.folders[0].name == "Userscript: uses-lib"


def test_the_generated_script_gets_exactly_its_grants(tmp_path: Path) -> None:
    with Library(tmp_path / "rules.sqlite3") as lib:
        f = lib.create_folder("F")
        g = lib.create_group(f.id, "G")
        mk = lambda js: lib.create_rule(g.id, "s", js=js)  # noqa: E731
        full = script_file(
            lib, mk(SCRIPT.replace("// @grant       GM_setValue\n", "// @grant GM.setValue\n")), "k"
        )
        assert full is not None
        assert full.params == ["GM_info", "GM", "unsafeWindow", "GM_getValue"]  # GM.x: no GM_x
        assert full.spec["values"] is True and "GM.setValue" in full.spec["grants"]
        none = script_file(
            lib,
            mk(SCRIPT.replace("GM_getValue", "none").replace("// @grant       GM_setValue\n", "")),
            "k",
        )
        assert none is not None and none.params == ["GM_info", "GM", "unsafeWindow"]
        assert none.spec["none"] and not none.spec["values"]
        gone = SCRIPT.replace("// @grant", "// @require https://cdn.test/gone.js\n// @grant", 1)
        missing = script_file(lib, mk(gone), "k")
        assert missing is not None
        assert "throw new Error" in missing.define_js(1) and "gone.js" in missing.define_js(1)
        plain = lib.create_rule(g.id, "plain", js="document.title = 'x';")
        assert script_file(lib, plain, "k") is None


def test_a_library_from_before_userscripts_is_upgraded(tmp_path: Path) -> None:
    from deskpilot.pages.schema import MIGRATIONS, transaction

    path = tmp_path / "rules.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    with transaction(db):
        MIGRATIONS[0](db)
        db.execute("PRAGMA user_version=1")
        db.execute("INSERT INTO folders VALUES ('f_1', 'F', NULL, 1, 0, 'x', 'x')")
        db.execute("INSERT INTO groups VALUES ('g_1', 'f_1', 'G', 1, 0, 'x', 'x')")
        db.execute(
            "INSERT INTO rules (id, group_id, name, position, js, created_at, updated_at) "
            "VALUES ('r_1', 'g_1', 'R', 0, 'x()', 'x', 'x')"
        )
        for n, value in enumerate(["*://*.a.com/*", "http*://a.com/*", "*://www.google.*/*"]):
            db.execute(
                "INSERT INTO patterns (owner_type, owner_id, mode, kind, value, position) "
                "VALUES ('rule', 'r_1', 'include', 'match', ?, ?)",
                (value, n),
            )
        db.execute(
            "INSERT INTO rule_errors (rule_id, url, kind, message, first_at, last_at) "
            "VALUES ('r_1', 'u', 'js_exception', 'm', 'x', 'x')"
        )
    db.close()
    with Library(path) as lib:
        (rule,) = lib.applicable("https://x.a.com/")
        assert [p.kind for p in rule.include] == ["match", "vm-match", "glob"]
        assert len(lib.errors("r_1")) == 1  # kept through the rebuild
        lib.update_rule("r_1", run_at="document-body")  # the new run time
        lib.set_values("r_1", {"k": [1]})
        assert lib.values("r_1") == {"k": [1]}


def test_rules_add_from_a_userscript_file_and_from_css(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path), "DESKPILOT_SANDBOX": ""}
    script = tmp_path / "counter.user.js"
    script.write_text(
        SCRIPT.replace("// @match", "// @run-at document-start\n// @noframes\n// @match", 1)
    )
    run = CliRunner().invoke
    done = run(main, ["rules", "add", str(script)], env=env)
    assert done.exit_code == 0, done.output
    assert "added rule r_" in done.output and "'Counter'" in done.output
    css = tmp_path / "hide.css"
    css.write_text(".ad { display: none }")
    done = run(
        main,
        [
            "rules",
            "add",
            "--css",
            str(css),
            "--name",
            "Hide ads",
            "--include",
            "https://news.example/*",
        ],
        env=env,
    )
    assert done.exit_code == 0, done.output
    done = run(
        main, ["rules", "add", str(script), "--include", "match:http://exa*mple.com/x"], env=env
    )
    assert done.exit_code == 1 and "is invalid" in done.output
    with open_library(load_settings(env=env)) as lib:
        scripts, rules = lib.tree()
        (counter,) = scripts.groups[0].rules
        assert scripts.name == "Userscripts" and rules.name == "Rules"
        assert counter.run_at == "document-start" and counter.frames == "top"
        assert [(p.kind, p.value) for p in counter.include] == [
            ("match", "https://*.example.com/*")
        ]
        assert counter.js == script.read_text()
        assert rules.groups[0].rules[0].css == ".ad { display: none }"
    # flags replace what the metadata says
    done = run(
        main,
        [
            "rules",
            "add",
            str(script),
            "--include",
            "https://other.test/*",
            "--run-at",
            "document-idle",
            "--name",
            "Mine",
        ],
        env=env,
    )
    assert done.exit_code == 0, done.output
    with open_library(load_settings(env=env)) as lib:
        mine = lib.tree()[0].groups[0].rules[1]
        assert mine.name == "Mine" and mine.run_at == "document-idle"
        assert [p.value for p in mine.include] == ["https://other.test/*"]


def test_rules_edit_opens_the_editor_and_follows_a_userscripts_new_lines(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path), "DESKPILOT_SANDBOX": ""}
    script = tmp_path / "counter.user.js"
    script.write_text(SCRIPT)
    run = CliRunner().invoke
    assert run(main, ["rules", "add", str(script)], env=env).exit_code == 0
    with open_library(load_settings(env=env)) as lib:
        rid = lib.tree()[0].groups[0].rules[0].id
    editor = tmp_path / "editor.sh"
    editor.write_text(
        "#!/bin/sh\nsed -i 's|https://\\*.example.com/\\*|https://*.example.org/*|' \"$1\"\n"
    )
    editor.chmod(0o755)
    done = run(main, ["rules", "edit", rid], env={**env, "EDITOR": str(editor)})
    assert done.exit_code == 0, done.output
    assert "follow its new metadata lines" in done.output
    with open_library(load_settings(env=env)) as lib:
        rule = lib.find(rid)
        assert "example.org" in (rule.js or "")  # type: ignore[union-attr]
        assert [p.value for p in rule.include] == ["https://*.example.org/*"]
    done = run(main, ["rules", "edit", rid], env={**env, "EDITOR": "true"})
    assert done.exit_code == 0 and "no change" in done.output


def test_vm_values_decode_as_violentmonkey_stores_them() -> None:
    assert decode_vm_value("s12") == "12"
    assert decode_vm_value("n12") == 12 and decode_vm_value("n-1.25") == -1.25
    assert decode_vm_value("bfalse") is False
    assert decode_vm_value('o{"x":null}') == {"x": None}
    assert decode_vm_value(5) == 5  # Tampermonkey's storage: values as they are


def test_what_stylus_and_violentmonkey_store_beside_the_code(tmp_path: Path) -> None:
    # Stylus: url-prefix("") matches nothing; a section of only that applies nowhere
    path = tmp_path / "stylus.json"
    path.write_text(
        json.dumps(
            [
                {
                    "name": "S",
                    "sections": [
                        {"code": "a{}", "urlPrefixes": [""]},
                        {"code": "b{}", "urlPrefixes": ["", "https://a.com/"]},
                    ],
                }
            ]
        )
    )
    plan = plan_import(path)
    (rule,) = plan.folders[0].groups[0].rules
    assert rule.css == "b{}" and [p.value for p in rule.include] == ["https://a.com/"]
    assert any("targets only empty URLs" in w for w in plan.warnings)
    # Violentmonkey: a relative @require is read from where the script was installed
    script = SCRIPT.replace("// @grant", "// @require lib/x.js\n// @grant", 1)
    backup = tmp_path / "vm.zip"
    info = {"custom": {"lastInstallURL": "https://host.test/s/counter.user.js"}}
    entry = json.dumps({"scripts": {"Counter": info}})
    backup.write_bytes(_zip({"Counter.user.js": script, "violentmonkey": entry}))
    lib = Resource("https://host.test/s/lib/x.js", b"var X;")
    plan = plan_import(backup, cached=lambda url: lib if url == lib.url else None)
    assert plan.folders[0].groups[0].rules[0].base_url == "https://host.test/s/counter.user.js"


def test_the_cli_refuses_a_malformed_stylus_export_whole(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path), "DESKPILOT_SANDBOX": ""}
    path = tmp_path / "stylus-2026-12-01-10-00.json"
    path.write_text(json.dumps([GOOD_STYLE, {"name": "Bad", "sections": [{"code": 42}]}, {}]))
    done = CliRunner().invoke(main, ["rules", "import", str(path), "--yes"], env=env)
    assert done.exit_code == 1
    assert "nothing imported: 3 problems" in done.output
    assert "style 2 'Bad': section 1: 'code' must be CSS text, not int 42" in done.output
    assert "style 3: 'name' must be non-empty text" in done.output
    with open_library(load_settings(env=env)) as lib:
        assert lib.tree() == []
    path.write_text(json.dumps([GOOD_STYLE]))
    done = CliRunner().invoke(main, ["rules", "import", str(path), "--yes"], env=env)
    assert done.exit_code == 0, done.output
    with open_library(load_settings(env=env)) as lib:
        assert [f.name for f in lib.tree()] == ["Stylus: stylus-2026-12-01-10-00"]
