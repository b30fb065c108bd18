"""Everything a task file gets wrong is found when it loads, before any desktop starts: every
problem of a file, every broken file of a directory; the good ones run only when asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deskpilot.errors import TaskError
from deskpilot.eval.suite import load_suite
from deskpilot.eval.task import Find, Task
from deskpilot.eval.validate import command_programs, needed_apps, task_problems

GOOD = """
goal = "Write hello"
[[check]]
kind = "file"
path = "~/hello.txt"
equals = "hello"
[[oracle]]
tool = "perform"
args = { action = "click", elementID = { find = { role = "push-button", name = "OK" } } }
"""

#: one file with many problems: each must be named
BROKEN = """
goal = "x"
[[setup]]
launch = ["mousepad"]
window = "([unclosed"
[[setup]]
write = "~/a.txt"
from = "fixtures/nowhere.txt"
[[check]]
kind = "output"
of = "nothing-captured"
[[check]]
kind = "http"
path = "/x"
[[oracle]]
tool = "no_such_tool"
[[oracle]]
tool = "perform"
args = { action = "fly", elementID = { find = { role = "button", nmae = "OK" } } }
[[oracle]]
tool = "wait"
args = {}
[[oracle]]
tool = "list_windows"
until = { window = "*bad" }
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_every_problem_of_a_broken_file_is_listed(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.toml", BROKEN)
    with pytest.raises(TaskError) as info:
        load_suite(tmp_path)
    text = str(info.value)
    assert str(path) in text
    for part in (
        "setup.0.window",
        "setup.1.from: the fixture",
        "check.0.of: no launch step captures",
        "check.1: an http check needs a 'serve'",
        "oracle.0: no tool 'no_such_tool'",
        "oracle.1.args.elementID.find: nmae: unknown key",
        "oracle.1.args.action (perform)",
        "oracle.2.args (wait): 'seconds' is a required property",
        "oracle.3",
    ):
        assert part in text, f"{part!r} not in:\n{text}"


def test_a_directory_names_every_broken_file_and_runs_the_good_only_when_asked(
    tmp_path: Path,
) -> None:
    write(tmp_path, "good.toml", GOOD)
    write(tmp_path, "bad1.toml", BROKEN)
    write(tmp_path, "bad2.toml", GOOD.replace('tool = "perform"', 'tool = "perfrom"'))
    with pytest.raises(TaskError) as info:
        load_suite(tmp_path)
    text = str(info.value)
    assert "2 of 3 task file(s) do not load" in text and "bad1.toml" in text
    assert "bad2.toml" in text and "no tool 'perfrom'" in text and "--skip-broken" in text
    suite = load_suite(tmp_path, skip_broken=True)
    assert [t.id for t in suite.tasks] == ["good"]
    assert sorted(b.path.name for b in suite.broken) == ["bad1.toml", "bad2.toml"]


def test_eval_run_refuses_a_broken_suite_before_any_desktop_and_exits_non_zero(
    tmp_path: Path,
) -> None:
    write(tmp_path, "bad.toml", BROKEN)
    write(tmp_path, "good.toml", GOOD)
    env = {"PATH": "/nonexistent", "DESKPILOT_HOME": str(tmp_path / "home")}  # no Xvfb
    for cmd in ("run", "check"):
        done = subprocess.run(
            [sys.executable, "-m", "deskpilot", "eval", cmd, str(tmp_path), "--policy", "noop"]
            if cmd == "run"
            else [sys.executable, "-m", "deskpilot", "eval", cmd, str(tmp_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode != 0 and "1 of 2 task file(s) do not load" in done.stderr
        assert "no_such_tool" in done.stderr and not (tmp_path / "deskpilot-eval").exists()


def test_programs_started_through_commands_are_needed_apps(tmp_path: Path) -> None:
    assert list(command_programs(["sh", "-c", "cd ~ && gimp a.png | tee x; VAR=1 vlc"])) == [
        "gimp",
        "tee",
        "vlc",
    ]
    assert list(command_programs(["timeout", "5", "soffice", "--calc"])) == ["soffice"]
    task = Task.model_validate(
        {
            "id": "t",
            "goal": "g",
            "apps": ["mousepad"],
            "setup": [{"launch": ["localc"]}, {"run": ["bash", "-c", "xdg-open x; thunar y"]}],
            "check": [{"kind": "file", "path": "~/a"}],
        }
    )
    assert needed_apps(task) == ["mousepad", "localc", "xdg-open", "thunar"]


def test_the_starter_suite_and_its_osworld_file_have_no_problems() -> None:
    suite = load_suite("starter")
    assert not suite.broken and all(task_problems(t) == [] for t in suite.tasks)


def test_osworld_files_list_all_their_problems(tmp_path: Path) -> None:
    data = {
        "id": "x",
        "instruction": "do it",
        "config": [
            {"type": "googledrive", "parameters": {}},
            {"type": "execute", "parameters": {"command": 5}},
        ],
        "evaluator": {
            "func": ["compare_table", "vlc_thing"],
            "result": [
                {"type": "vm_file", "path": "/home/user/a.xlsx"},
                {"type": "vlc_playing_info"},
            ],
            "expected": [{"type": "rule", "rules": {}}, {"type": "rule", "rules": {}}],
            "options": [{"rules": [{"type": "chart"}]}, {}],
        },
    }
    write(tmp_path, "x.json", json.dumps(data))
    with pytest.raises(TaskError) as info:
        load_suite(tmp_path)
    text = str(info.value)
    for part in (
        "config.0: OSWorld step 'googledrive'",
        "config.1: 'command' must be",
        "getter 'vlc_playing_info' is not supported",
    ):
        assert part in text, text


def test_find_by_value_and_by_relation() -> None:
    from deskpilot.eval.oracle import find_element

    nodes = [
        {"id": "r1", "role": "table row", "name": "", "bounds": [0, 0, 400, 20]},
        {"id": "a", "role": "table cell", "name": "", "text": "Acme", "bounds": [0, 0, 100, 20]},
        {"id": "d1", "role": "push button", "name": "Delete", "bounds": [300, 0, 80, 20]},
        {"id": "r2", "role": "table row", "name": "", "bounds": [0, 20, 400, 20]},
        {"id": "g", "role": "table cell", "name": "", "text": "Globex", "bounds": [0, 20, 100, 20]},
        {"id": "d2", "role": "push button", "name": "Delete", "bounds": [300, 20, 80, 20]},
        {"id": "n", "role": "spin button", "name": "Qty", "value": 3.0, "bounds": [0, 50, 9, 9]},
    ]
    assert find_element(nodes, Find(role="push button", name="Delete", in_row="^Globex$")) == "d2"
    assert find_element(nodes, Find(role="push button", name="Delete", in_group="Acme")) == "d1"
    assert find_element(nodes, Find(role="push button", in_row="Initech")) is None
    assert find_element(nodes, Find(value="Globex")) == "g"
    assert find_element(nodes, Find(role="spin button", value="3")) == "n"
    assert find_element(nodes, Find(value_re="^Glo")) == "g"
    assert find_element(nodes, Find(value="Delete")) is None  # a name is not a value


def test_an_osworld_file_with_bad_steps_names_its_unknown_metric_too(tmp_path: Path) -> None:
    data = {
        "id": "y",
        "instruction": "do it",
        "config": [{"type": "login", "parameters": {}}],
        "evaluator": {
            "func": "vlc_thing",
            "result": {"type": "vm_file", "path": "/a"},
            "expected": {"type": "rule", "rules": {}},
        },
    }
    write(tmp_path, "y.json", json.dumps(data))
    with pytest.raises(TaskError) as info:
        load_suite(tmp_path)
    assert "OSWorld step 'login'" in str(info.value)
    assert "metric 'vlc_thing' is not supported" in str(info.value)


def test_an_app_started_on_the_hidden_task_folder_is_refused_at_load(tmp_path: Path) -> None:
    """The task's folder and the file store are hidden from a trial's apps (they hold the
    answers): an app launched on one could not read it, so the task is refused, saying why."""
    peek = GOOD.replace(
        "[[check]]",
        '[[setup]]\nlaunch = ["mousepad", "{task_dir}/a.txt"]\nready = "none"\n[[check]]',
    )
    write(tmp_path, "peek.toml", peek)
    with pytest.raises(TaskError, match=r"setup.0.launch: an app cannot read \{task_dir\}"):
        load_suite(tmp_path)
