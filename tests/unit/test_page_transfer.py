"""Rule library export/import: a lossless round trip, a Stylus export, a Violentmonkey backup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskpilot.errors import RulesError
from deskpilot.pages.import_plan import apply_plan
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import parse_patterns
from deskpilot.pages.transfer import export_library, plan_deskpilot, plan_import

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pages"


def build(lib: Library) -> None:
    f = lib.create_folder(
        "Work",
        label="WRK",
        include=parse_patterns(["https://*.corp.test/*"], "include"),
        exclude=parse_patterns(["*logout*"], "exclude"),
    )
    g = lib.create_group(f.id, "Wiki", include=parse_patterns(["regex:.*/wiki/.*"], "include"))
    lib.create_rule(g.id, "Wide", css="main{max-width:none}", frames="all")
    r = lib.create_rule(
        g.id,
        "Toc",
        js="document.title += ' ✓';\n// ünïcode",
        css="nav{position:sticky}",
        run_at="document-start",
        include=parse_patterns(["domain:corp.test", "prefix:https://w.corp.test/"], "include"),
    )
    lib.set_enabled(r.id, False)
    lib.create_group(f.id, "Empty group")
    lib.set_enabled(lib.create_folder("Off").id, False)


def test_export_then_import_is_lossless(tmp_path: Path) -> None:
    with Library(tmp_path / "a.sqlite3") as a:
        build(a)
        exported = export_library(a)
    text = json.dumps(exported)
    with Library(tmp_path / "b.sqlite3") as b:
        apply_plan(b, plan_deskpilot(json.loads(text)))
        again = export_library(b)
    assert again == exported
    assert exported["folders"][0]["groups"][0]["rules"][1]["include"] == [
        {"value": "corp.test", "kind": "domain"},
        {"value": "https://w.corp.test/", "kind": "prefix"},
    ]


def test_importing_twice_keeps_both_copies_with_fresh_ids(tmp_path: Path) -> None:
    with Library(tmp_path / "a.sqlite3") as a:
        build(a)
        exported = export_library(a)
        apply_plan(a, plan_deskpilot(exported))
        ids = [f.id for f in a.tree()]
        assert len(ids) == 4 and len(set(ids)) == 4


def test_a_stylus_export_imports_into_its_own_folder(tmp_path: Path) -> None:
    plan = plan_import(FIXTURES / "stylus-export.json", folder="Stylus")
    assert plan.source == "stylus"
    with Library(tmp_path / "r.sqlite3") as lib:
        lib.create_folder("Mine")
        apply_plan(lib, plan)
        folder = lib.tree()[1]
    assert folder.name == "Stylus"
    # order.prio first, then order.main
    assert [g.name for g in folder.groups] == ["Dark docs", "Wide reader"]
    dark, wide = folder.groups
    assert not dark.enabled
    assert [r.css for r in dark.rules] == [
        "body { background: #111; color: #eee; }\n  pre { background: #000; }"
    ]
    assert [(p.kind, p.value) for p in dark.rules[0].include] == [
        ("url", "https://docs.example/"),
        ("prefix", "https://docs.example/api/"),
    ]
    assert [p.value for p in wide.exclude] == ["*print*"]
    assert [r.name for r in wide.rules] == ["Wide reader #1", "Wide reader #2"]
    second = wide.rules[1]
    assert second.scope.matches("https://sub.example.org/x")
    assert second.scope.matches("https://blog.example.net/42")
    assert not second.scope.matches("https://blog.example.net/42/comments")
    with Library(tmp_path / "r.sqlite3") as lib:
        applies = [r.name for r in lib.applicable("https://news.example/read/1")]
        assert applies == ["Wide reader #1"]
        # a style's own exclusions match as Stylus matches them: without the query
        assert lib.applicable("https://news.example/read/print") == []
        assert [r.name for r in lib.applicable("https://news.example/read/1?print=1")] == [
            "Wide reader #1"
        ]


def test_a_violentmonkey_backup_imports_scripts_in_order(tmp_path: Path) -> None:
    plan = plan_import(FIXTURES / "violentmonkey-backup.zip")
    assert plan.source == "violentmonkey"
    with Library(tmp_path / "r.sqlite3") as lib:
        apply_plan(lib, plan)
        (folder,) = lib.tree()
        assert folder.name == "Violentmonkey: violentmonkey-backup"  # named after the file
        counter, banner = folder.groups[0].rules  # position 1, then 2
        assert counter.name == "Counter" and not counter.enabled
        assert counter.frames == "all" and counter.run_at == "document-end"
        assert banner.name == "Hide banner" and banner.enabled
        assert banner.run_at == "document-start" and banner.frames == "top"
        assert banner.js is not None and "dataset.banner" in banner.js
        assert [(p.kind, p.value) for p in banner.include] == [
            ("match", "*://*.example.com/*"),
            ("match", "https://extra.test/*"),
        ]
        assert banner.scope.matches("https://shop.example.com/cart")
        assert not banner.scope.matches("https://www.example.com/admin/users")
        assert counter.scope.matches("http://counter.test/page")
        assert not counter.scope.matches("http://counter.test/page?nocount=1")


def test_bad_files_are_refused_and_change_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(RulesError, match="not a deskpilot export"):
        plan_import(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "deskpilot-rules", "version": 1, "folders": [{"groups": []}]}')
    with pytest.raises(RulesError, match="folder 1: 'name' is missing"):
        plan_import(broken)


RULE = {"name": "r", "css": "a{}"}


@pytest.mark.parametrize(
    ("folder", "says"),
    [
        ({"name": "X", "label": "TOOLONG"}, "label 'TOOLONG' must be 1 to 3 characters"),
        ({"name": "  "}, "folder 2 '  ': the folder needs a name"),
        ({"name": "X", "enabled": "no"}, "folder 2: 'enabled' must be true or false"),
        (
            {"name": "X", "groups": [{"name": "g", "rules": [{**RULE, "css": 5}]}]},
            "folder 2 / group 1 / rule 1: 'css' must be text or null, not int",
        ),
        (
            {"name": "X", "groups": [{"name": "g", "rules": [{**RULE, "include": [5]}]}]},
            "'include' must be a list of patterns",
        ),
        (
            {"name": "X", "groups": [{"name": "g", "rules": [{**RULE, "include": ["regex:("]}]}]},
            "rule 1: regex pattern '(' does not compile",
        ),
        (
            {"name": "X", "groups": [{"name": "g", "rules": [{**RULE, "run_at": "soon"}]}]},
            "rule 1 'r': run_at must be one of",
        ),
        (
            {"name": "X", "groups": [{"name": "g", "rules": [{"name": "r", "css": " "}]}]},
            "rule 1 'r': a rule needs CSS, JS or both",
        ),
        ({"name": "X", "groups": ["g"]}, "folder 2: item 1 of 'groups' is not an object"),
    ],
)
def test_a_malformed_export_names_the_item_and_changes_nothing(
    tmp_path: Path, folder: dict[str, object], says: str
) -> None:
    file = tmp_path / "export.json"
    good = {"name": "Kept", "groups": [{"name": "g", "rules": [RULE]}]}
    file.write_text(
        json.dumps({"format": "deskpilot-rules", "version": 1, "folders": [good, folder]})
    )
    with Library(tmp_path / "rules.sqlite3") as lib:
        revision = lib.revision
        with pytest.raises(RulesError) as caught:
            apply_plan(lib, plan_import(file))
        assert says in str(caught.value)
        assert lib.revision == revision and lib.tree() == []  # the good folder is not saved
