"""Changing a saved rule, the extension files a change writes, what a session keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deskpilot.cli import main
from deskpilot.config import load_settings
from deskpilot.errors import InvalidArguments
from deskpilot.pages.extension import write_extension
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import parse_patterns
from deskpilot.pages.store import open_library
from deskpilot.tools.context import SessionResources


def _rule(lib: Library) -> str:
    f = lib.create_folder("F")
    g = lib.create_group(f.id, "G")
    inc = parse_patterns(["https://a.com/*"], "include")
    return lib.create_rule(g.id, "R", js="one();", css="a{}", include=inc).id


def test_a_rule_changes_in_place_and_its_revision_goes_up(tmp_path: Path) -> None:
    with Library(tmp_path / "rules.sqlite3") as lib:
        rid = _rule(lib)
        before, revision = lib.find(rid), lib.revision
        after = lib.update_rule(rid, js="two();", run_at="document-start")
        assert after.js == "two();" and after.css == "a{}" and after.run_at == "document-start"
        assert after.revision == before.revision + 1 and lib.revision == revision + 1
        assert after.pattern_dict() == before.pattern_dict()  # patterns kept unless given
        after = lib.update_rule(rid, css="", exclude=parse_patterns(["*print*"], "exclude"))
        assert after.css is None
        assert after.pattern_dict() == {"include": ["https://a.com/*"], "exclude": ["*print*"]}


@pytest.mark.parametrize(
    "change",
    [{"js": "", "css": ""}, {"run_at": "soon"}, {"frames": "some"}, {"name": " "}],
)
def test_a_bad_change_is_refused_and_changes_nothing(
    tmp_path: Path, change: dict[str, str]
) -> None:
    with Library(tmp_path / "rules.sqlite3") as lib:
        rid = _rule(lib)
        before, revision = lib.find(rid), lib.revision
        with pytest.raises(InvalidArguments):
            lib.update_rule(rid, **change)  # type: ignore[arg-type]
        assert lib.find(rid) == before and lib.revision == revision


def test_only_the_launch_set_is_held(tmp_path: Path) -> None:
    """The manifest's set holds its JS (a newer set registered later supersedes it); the set
    the service worker registers while the browser runs does not."""
    ext = tmp_path / "ext"
    with Library(tmp_path / "rules.sqlite3") as lib:
        rid = _rule(lib)
        launch = write_extension(lib, ext, for_launch=True)
        lib.update_rule(rid, js="three();")
        later = write_extension(lib, ext)
    manifest = json.loads((ext / "manifest.json").read_text())
    files = manifest["content_scripts"][1]["js"]
    assert files[:3] == [f"gen/{launch.rev}/{n}" for n in ("runtime.js", "hold.js", "data.js")]
    assert "hold()" in (ext / files[1]).read_text()
    current = json.loads((ext / "gen" / "current.json").read_text())
    assert current["rev"] == later.rev > launch.rev
    assert not any(f.endswith("hold.js") for f in current["files"])
    assert "three();" in (ext / f"gen/{later.rev}/{rid}.js").read_text()


@pytest.mark.asyncio
async def test_session_resources_close_each_item_even_if_one_fails() -> None:
    closed: list[str] = []

    class Item:
        def __init__(self, name: str, fail: bool = False) -> None:
            self.name, self.fail = name, fail

        async def close(self) -> None:
            closed.append(self.name)
            if self.fail:
                raise RuntimeError("boom")

    res = SessionResources()
    first = res.get("a", lambda: Item("a", fail=True))
    assert res.get("a", lambda: Item("other")) is first  # made once
    res.get("b", lambda: Item("b"))
    await res.close()
    assert closed == ["a", "b"]
    res.get("a", lambda: Item("again"))  # a closed set can be used again: made afresh
    await res.close()
    assert closed[-1] == "again"


def test_rules_edit_from_the_command_line(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "DESKPILOT_HOME": str(tmp_path),
        "DESKPILOT_SANDBOX": "",
        "EDITOR": "",
        "VISUAL": "",
    }
    settings = load_settings(env=env)
    with open_library(settings) as lib:
        rid = _rule(lib)
    run = CliRunner().invoke
    code = tmp_path / "new.js"
    code.write_text("four();")
    done = run(main, ["rules", "edit", rid, "--js", str(code), "--frames", "all"], env=env)
    assert done.exit_code == 0, done.output
    assert "revision 2" in done.output and "not running" in done.output
    with open_library(settings) as lib:
        rule = lib.find(rid)
        assert rule.js == "four();" and rule.frames == "all"  # type: ignore[union-attr]
    for args, says in [
        ([], "nothing to change"),
        (["--js", str(code), "--no-js"], "not both"),
        (["--no-js", "--no-css"], "nothing changed"),
        (["--include", "regex:("], "nothing changed"),
    ]:
        bad = run(main, ["rules", "edit", rid, *args], env=env)
        assert bad.exit_code != 0 and says in bad.output, (args, bad.output)
    with open_library(settings) as lib:
        assert lib.find(rid).revision == 2  # none of them changed it


def test_rules_export_to_a_file_it_cannot_write_says_so(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "DESKPILOT_HOME": str(tmp_path), "DESKPILOT_SANDBOX": ""}
    with open_library(load_settings(env=env)) as lib:
        _rule(lib)
    out = tmp_path / "no" / "such" / "dir" / "rules.json"
    done = CliRunner().invoke(main, ["rules", "export", "-o", str(out)], env=env)
    assert done.exit_code == 1 and f"cannot write {out}" in done.output, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    good = tmp_path / "rules.json"
    done = CliRunner().invoke(main, ["rules", "export", "-o", str(good)], env=env)
    assert done.exit_code == 0 and json.loads(good.read_text())["folders"][0]["name"] == "F"
