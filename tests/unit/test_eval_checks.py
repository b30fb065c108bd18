"""Checkers on plain state (files, a request log, commands) and how results compose."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from deskpilot.errors import CheckBroken
from deskpilot.eval.check_env import CheckEnv, sha256_file
from deskpilot.eval.checks import evaluate
from deskpilot.eval.oracle import find_element
from deskpilot.eval.server import RequestLog
from deskpilot.eval.task import Check, Find

CHECK: TypeAdapter[Any] = TypeAdapter(Check)


@pytest.fixture
def env(tmp_path: Path) -> CheckEnv:
    home = tmp_path / "home"
    home.mkdir()
    return CheckEnv(
        home=home,
        app_env={"PATH": os.environ.get("PATH", "")},
        display=":99",
        variables={"home": str(home)},
    )


def check(env: CheckEnv, **spec: Any) -> tuple[bool, str]:
    result = evaluate(CHECK.validate_python(spec), env)
    return result.ok, result.detail


def test_file_checks(env: CheckEnv) -> None:
    (env.home / "a.txt").write_text("milk\nbread\n")
    assert check(env, kind="file", path="~/a.txt", lines=["milk", "bread"])[0]
    assert check(env, kind="file", path="a.txt", equals="milk\nbread")[0]  # trailing \n ignored
    assert not check(env, kind="file", path="~/a.txt", equals="milk\nbread", exact=True)[0]
    ok, why = check(env, kind="file", path="~/a.txt", contains=["eggs"])
    assert not ok and "lacks 'eggs'" in why
    assert not check(env, kind="file", path="~/a.txt", excludes=["milk"])[0]
    assert check(env, kind="file", path="~/a.txt", regex="^bread$")[0]
    ok, why = check(env, kind="file", path="~/missing.txt", equals="x")
    assert not ok and "does not exist" in why  # the agent did not make it: a failure
    assert check(env, kind="file", path="~/missing.txt", exists=False)[0]


def test_unchanged_compares_with_what_setup_wrote(env: CheckEnv) -> None:
    path = env.home / "keep.txt"
    path.write_text("v1")
    env.written[str(path)] = sha256_file(path)
    assert check(env, kind="file", path="~/keep.txt", unchanged=True)[0]
    path.write_text("v2")
    assert not check(env, kind="file", path="~/keep.txt", unchanged=True)[0]
    (env.home / "other.txt").write_text("x")
    with pytest.raises(CheckBroken, match="needs a file the setup wrote"):
        check(env, kind="file", path="~/other.txt", unchanged=True)  # a task bug, not a fail


def test_http_checks_match_method_path_form_query_and_count(env: CheckEnv) -> None:
    env.http = RequestLog()
    with pytest.raises(CheckBroken):
        evaluate(CHECK.validate_python({"kind": "http", "path": "/x"}), CheckEnv(env.home, {}, ""))
    env.http.add(
        {"method": "GET", "path": "/results.html", "query": {"q": ["quantum"]}, "form": {}}
    )
    env.http.add(
        {
            "method": "POST",
            "path": "/submit",
            "query": {},
            "form": {"name": ["Ada"], "news": ["on"]},
        }
    )
    assert check(env, kind="http", path="/results.html", query={"q": "quantum"})[0]
    assert not check(env, kind="http", path="/results.html", query={"q": "quant"})[0]
    assert check(env, kind="http", method="post", path="/submit", form={"name": "Ada"}, count=1)[0]
    assert not check(env, kind="http", method="POST", form={"name": "Ada"}, without=["news"])[0]
    assert check(env, kind="http", method="DELETE", count=0)[0]
    assert check(env, kind="http", path_re=r"^/sub")[0]


def test_command_and_osworld_checks_read_command_output(env: CheckEnv) -> None:
    (env.home / "todo.txt").write_text("buy milk\n")
    assert check(env, kind="command", run=["cat", "{home}/todo.txt"], stdout="buy milk")[0]
    assert not check(env, kind="command", run=["false"])[0]
    with pytest.raises(CheckBroken, match="not installed"):
        check(env, kind="command", run=["no-such-binary-xyz"])
    rules = {"type": "rule", "rules": {"include": ["milk"], "exclude": ["eggs"]}}
    cat = {"type": "vm_command_line", "command": "cat $HOME/todo.txt"}
    env.app_env = {**env.app_env, "HOME": str(env.home)}
    assert check(env, kind="osworld", func="check_include_exclude", result=cat, expected=rules)[0]
    exact = {"type": "rule", "rules": {"expected": "buy milk\n"}}
    assert check(env, kind="osworld", func="exact_match", result=cat, expected=exact)[0]
    vm_file = {"type": "vm_file", "path": "~/gone.txt"}
    ok, why = check(
        env,
        kind="osworld",
        func="file_contains",
        result=vm_file,
        expected={"type": "rule", "rules": {"expected": ["x"]}},
    )
    assert not ok and "does not exist" in why


def test_checks_compose(env: CheckEnv) -> None:
    (env.home / "a.txt").write_text("a")
    yes = {"kind": "file", "path": "~/a.txt", "equals": "a"}
    no = {"kind": "file", "path": "~/a.txt", "equals": "b"}
    assert check(env, kind="any", of=[no, yes])[0]
    assert not check(env, kind="all", of=[no, yes])[0]
    assert check(env, kind="not", of=no)[0]
    result = evaluate(CHECK.validate_python({"kind": "all", "of": [yes, no]}), env)
    assert [c.ok for c in result.of] == [True, False] and result.detail == "1 of 2 hold"


def test_oracle_find_matches_roles_names_shown_names_states_and_index() -> None:
    nodes = [
        {"id": "1", "role": "push-button", "name": "7 7", "states": ["enabled"]},
        {"id": "2", "role": "text", "name": "", "states": ["editable"]},
        {"id": "3", "role": "text", "name": "", "states": ["editable", "focused"]},
    ]
    assert find_element(nodes, Find(role="push button", name="7")) == "1"  # "7 7" shows as "7"
    assert find_element(nodes, Find(role="text", index=1)) == "3"
    assert find_element(nodes, Find(role="text", states=["focused"])) == "3"
    assert find_element(nodes, Find(role="text", name="Name:"), {"2": "Name:"}) == "2"
    assert find_element(nodes, Find(name_re="^Na"), {"3": "Name:"}) == "3"
    assert find_element(nodes, Find(role="text", index=2)) is None
