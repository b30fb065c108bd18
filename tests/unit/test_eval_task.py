"""Task files, suites and the OSWorld subset: what loads, and the errors for what does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskpilot.errors import TaskError
from deskpilot.eval.suite import load_suite, packaged_suites
from deskpilot.eval.task import FileCheck, LaunchStep, WriteStep

MINIMAL = """
goal = "Write hello"
[[check]]
kind = "file"
path = "~/hello.txt"
equals = "hello"
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_task_file_loads_with_defaults(tmp_path: Path) -> None:
    write(tmp_path, "notes.hello.toml", MINIMAL + '[[setup]]\nlaunch = ["mousepad"]\n')
    suite = load_suite(tmp_path)
    (task,) = suite.tasks
    assert task.id == "notes.hello" and task.family == "notes"
    assert isinstance(task.check[0], FileCheck) and task.check[0].equals == "hello"
    (step,) = task.setup_steps()
    assert isinstance(step, LaunchStep) and step.ready == "tree"
    assert task.base_dir == str(tmp_path.resolve())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL.replace('goal = "Write hello"', ""), "goal: Field required"),
        (MINIMAL.replace('kind = "file"', 'kind = "telepathy"'), "check.0"),
        (MINIMAL + "colour = 1\n", "colour: unknown key"),
        (MINIMAL + '[[setup]]\nlaunch = ["x"]\nwrite = "~/a"\n', "setup.0: one action key"),
        (MINIMAL + "[[setup]]\nlaunch = []\n", "setup.0 (launch)"),
        (MINIMAL.replace("[[check]]", "x = [").replace("kind", "#"), "not valid TOML"),
    ],
)
def test_bad_task_files_name_the_file_and_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, "bad.toml", text)
    with pytest.raises(TaskError) as info:
        load_suite(tmp_path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_duplicate_ids_and_empty_suites_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="no task files"):
        load_suite(tmp_path)
    write(tmp_path, "a.toml", 'id = "same"\n' + MINIMAL)
    write(tmp_path, "b/b.toml", 'id = "same"\n' + MINIMAL)
    with pytest.raises(TaskError, match="'same' is also used by"):
        load_suite(tmp_path)


def test_fixtures_and_hidden_folders_are_not_tasks(tmp_path: Path) -> None:
    write(tmp_path, "t.toml", MINIMAL)
    write(tmp_path, "fixtures/page.json", "[1, 2]")
    write(tmp_path, ".cache/x.toml", "nonsense")
    assert [t.id for t in load_suite(tmp_path).tasks] == ["t"]


def test_select_by_globs_and_unknown_globs_list_the_tasks(tmp_path: Path) -> None:
    for name in ("web.a", "web.b", "pad.c"):
        write(tmp_path, f"{name}.toml", MINIMAL)
    suite = load_suite(tmp_path)
    assert [t.id for t in suite.select("web.*")] == ["web.a", "web.b"]
    assert [t.id for t in suite.select("pad.c, web.b")] == ["pad.c", "web.b"]
    with pytest.raises(TaskError, match=r"--tasks nope\.\*: no task .* pad\.c"):
        suite.select("web.a,nope.*")


def test_unknown_suite_names_the_shipped_ones() -> None:
    with pytest.raises(TaskError, match="starter"):
        load_suite("no-such-suite-here")


def test_the_starter_suite_ships_20_tasks_of_varied_kinds_each_with_an_oracle() -> None:
    assert "starter" in packaged_suites()
    suite = load_suite("starter")
    assert len(suite.tasks) >= 20
    assert all(t.oracle for t in suite.tasks)
    assert len({t.family for t in suite.tasks}) >= 8

    def kinds_of(check: object) -> set[str]:
        inner = getattr(check, "of", [])
        inner = inner if isinstance(inner, list) else [inner]
        return {getattr(check, "kind", "")}.union(*(kinds_of(c) for c in inner))

    kinds = set().union(*(kinds_of(c) for t in suite.tasks for c in t.check))
    assert {"file", "http", "output", "atspi", "window", "paragraph", "osworld"} <= kinds
    apps = {a for t in suite.tasks for a in t.apps}
    assert {"mousepad", "chromium", "zenity", "lowriter", "gnome-calculator"} <= apps
    assert any(t.source.endswith(".json") for t in suite.tasks)  # an OSWorld-format task


OSWORLD = {
    "id": "3b27600c",
    "snapshot": "os",
    "instruction": "Add a line to /home/user/todo.txt",
    "config": [
        {"type": "execute", "parameters": {"command": "touch /home/user/todo.txt", "shell": True}},
        {"type": "launch", "parameters": {"command": ["mousepad", "/home/user/todo.txt"]}},
        {"type": "sleep", "parameters": {"seconds": 5}},
        {
            "type": "download",
            "parameters": {"files": [{"url": "seed.txt", "path": "/home/user/s.txt"}]},
        },
        {"type": "activate_window", "parameters": {"window_name": "todo.txt - Mousepad"}},
    ],
    "evaluator": {
        "func": ["exact_match", "check_include_exclude"],
        "conj": "or",
        "result": [
            {"type": "vm_command_line", "command": "cat /home/user/todo.txt", "shell": True},
            {"type": "vm_file", "path": "/home/user/todo.txt", "dest": "todo.txt"},
        ],
        "expected": [
            {"type": "rule", "rules": {"expected": "x\n"}},
            {"type": "rule", "rules": {"include": ["x"], "exclude": []}},
        ],
    },
}


def test_osworld_task_json_converts_to_setup_and_checks(tmp_path: Path) -> None:
    write(tmp_path, "3b27600c.json", json.dumps(OSWORLD))
    write(tmp_path, "seed.txt", "seed")
    (task,) = load_suite(tmp_path).tasks
    assert task.goal == OSWORLD["instruction"] and "osworld" in task.tags
    kinds = [type(s).__name__ for s in task.setup_steps()]
    assert kinds == ["RunStep", "LaunchStep", "WriteStep", "ActivateStep"]  # sleep dropped
    run, launch, write_step = task.setup_steps()[:3]
    assert run.run == ["sh", "-c", "touch $HOME/todo.txt"]  # type: ignore[union-attr]
    assert launch.launch == ["mousepad", "~/todo.txt"]  # type: ignore[union-attr]
    assert isinstance(write_step, WriteStep) and write_step.from_ == str(tmp_path / "seed.txt")
    (any_check,) = task.check
    assert any_check.kind == "any" and [c.kind for c in any_check.of] == ["osworld"] * 2  # type: ignore[union-attr]
    assert any_check.of[0].result["command"] == "cat $HOME/todo.txt"  # type: ignore[union-attr]
    assert task.apps == ["mousepad"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"config": [{"type": "googledrive", "parameters": {}}]}, "'googledrive' is not supported"),
        (
            {"evaluator": {**OSWORLD["evaluator"], "func": ["compare_pptx_files", "x"]}},
            "metric 'x' is not supported",
        ),
        (
            {"evaluator": {**OSWORLD["evaluator"], "options": [{"colour": 1}, {}]}},
            "exact_match has no option 'colour'",
        ),
    ],
)
def test_unsupported_osworld_parts_are_named(tmp_path: Path, change: dict, message: str) -> None:  # type: ignore[type-arg]
    write(tmp_path, "t.json", json.dumps({**OSWORLD, **change}))
    with pytest.raises(TaskError, match=message):
        load_suite(tmp_path)
