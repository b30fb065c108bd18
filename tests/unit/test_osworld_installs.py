"""Software installs in OSWorld setup commands (eval/osworld_installs.py): what this machine has
is a no-op, what it lacks refuses the task at load, the command's other clauses still run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deskpilot.errors import TaskError
from deskpilot.eval import osworld, osworld_installs
from deskpilot.eval.osworld_installs import Install, judge, parse_clause

HAVE = {"apt": {"zsh", "unzip", "xsel", "python3"}, "pip": {"cssselect"}}
CHECKS = {"apt": HAVE["apt"].__contains__, "pip": HAVE["pip"].__contains__}


@pytest.mark.parametrize(
    ("clause", "installs"),
    [
        ("echo password | sudo -S apt-get install zsh -y", [Install("apt", "zsh")]),
        ("echo 'password' | sudo -S apt-get install -y expect", [Install("apt", "expect")]),
        ("sudo apt install jq -y", [Install("apt", "jq")]),
        ("sudo aptget update", []),
        ("apt-get update -y", []),
        ("pip install PyMuPDF", [Install("pip", "PyMuPDF")]),
        ("python3 -m pip install -U 'pysrt>=1.1'", [Install("pip", "pysrt")]),
        ("echo password | sudo -S pip install pysrt", [Install("pip", "pysrt")]),
        ("xsel -bc", None),
        ("apt-cache show zsh", None),
        ("pip show cssselect", None),
    ],
)
def test_clauses(clause: str, installs: list[Install] | None) -> None:
    assert parse_clause(clause) == installs


def test_installed_software_drops_its_clauses_and_keeps_the_rest() -> None:
    cmd = (
        "echo password | sudo -S apt-get update -y && echo password | sudo -S apt-get install "
        "unzip -y && unzip ~/x.zip -d ~/Desktop/ && rm ~/x.zip"
    )
    judged = judge(cmd, CHECKS)
    assert judged is not None and not judged.missing
    assert judged.rest == "unzip ~/x.zip -d ~/Desktop/ && rm ~/x.zip"
    only = judge("echo password | sudo -S apt install xsel; xsel -bc", CHECKS)
    assert only is not None and only.rest == "xsel -bc"
    gone = judge("pip install cssselect", CHECKS)
    assert gone is not None and gone.rest is None and not gone.missing


def test_missing_software_is_named_and_other_commands_are_left_alone() -> None:
    judged = judge("echo password | sudo -S apt-get install astyle cpp zsh -y", CHECKS)
    assert judged is not None
    assert [i.package for i in judged.missing] == ["astyle", "cpp"]
    assert judge("ls ~ && echo done", CHECKS) is None  # no install: run as written
    assert judge("for p in a b; do pip install $p; done", CHECKS) is None  # not taken apart


def _task(command: Any) -> dict[str, Any]:
    return {
        "id": "t",
        "instruction": "do it",
        "snapshot": "os",
        "config": [{"type": "execute", "parameters": {"command": command, "shell": True}}],
        "evaluator": {"func": "infeasible"},
    }


def test_a_task_loads_without_its_installs_or_is_refused_naming_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(osworld_installs, "CHECKS", CHECKS)
    done = osworld.convert(
        _task("echo password | sudo -S apt install xsel && xsel -bc"), tmp_path / "t.json"
    )
    runs = [s for s in done["setup"] if "run" in s]
    assert [s["run"] for s in runs] == [["sh", "-c", "xsel -bc"]]
    bare = osworld.convert(_task(["pip", "install", "cssselect"]), tmp_path / "t.json")
    assert not [s for s in bare["setup"] if "run" in s]
    with pytest.raises(TaskError, match=r"installs PyMuPDF.*pip install PyMuPDF here first"):
        osworld.convert(_task("pip install PyMuPDF"), tmp_path / "t.json")
