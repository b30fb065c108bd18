"""No check can pass by accident: for each kind, a check that holds on a known end state, and
the same check with each of its fields changed, one at a time, that does not hold.

A table at the bottom proves the mutations reach every field each kind accepts (a new field
with no mutation fails this file), and contradictory or vacuous checks are refused at load.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from deskpilot.errors import CheckBroken
from deskpilot.eval import check_live
from deskpilot.eval.check_env import Captured, CheckEnv, sha256_file
from deskpilot.eval.checks import evaluate
from deskpilot.eval.server import RequestLog
from deskpilot.eval.task import (
    AtspiCheck,
    CellCheck,
    Check,
    CommandCheck,
    DocumentCheck,
    FileCheck,
    HttpCheck,
    OsworldCheck,
    OutputCheck,
    ParagraphCheck,
    WindowCheck,
)

CHECK: TypeAdapter[Any] = TypeAdapter(Check)

NODES = [
    {"role": "push button", "name": "OK", "text": "", "states": ["enabled", "focusable"]},
    {"role": "label", "name": "Total", "text": "1,234.5", "states": ["enabled"], "value": 3.0},
]
TITLES = ["report.odt - LibreOffice Writer", "Untitled - Mousepad"]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The home's files, made once (office files take a while to write)."""
    from docx import Document
    from openpyxl import Workbook
    from openpyxl.styles import Font

    home = tmp_path_factory.mktemp("made") / "home"
    home.mkdir()
    (home / "a.txt").write_text("milk\nbread\n")
    (home / "keep.txt").write_text("v1")
    (home / "A.txt").write_text("MILK\nBREAD\n")
    doc = Document()
    doc.add_paragraph("Quarterly report", style="Heading 1")
    para = doc.add_paragraph("Sales grew by ")
    para.add_run("12").bold = True
    para.add_run(" percent.")
    doc.save(str(home / "r.docx"))
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Data"
    sheet["A1"] = 42
    sheet["A1"].font = Font(bold=True)
    sheet["A2"] = "Globex"
    sheet["B1"] = "=SUM(A1:A1)"
    book.save(str(home / "t.xlsx"))
    return home


@pytest.fixture
def env(made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CheckEnv:
    home = tmp_path / "home"
    shutil.copytree(made, home)
    e = CheckEnv(
        home=home,
        app_env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)},
        display=":99",
        variables={"home": str(home)},
    )
    e.written[str(home / "keep.txt")] = sha256_file(home / "keep.txt")
    e.written[str(home / "a.txt")] = "0" * 64  # setup wrote something else there
    e.http = RequestLog()
    e.http.add(
        {
            "method": "POST",
            "path": "/order",
            "query": {"ref": ["mail"]},
            "form": {"product": ["Blue Kettle"], "amount": ["34.90"]},
        }
    )
    proc = subprocess.Popen(["sh", "-c", "echo picked; exit 3"], stdout=subprocess.PIPE)
    out, _ = proc.communicate()
    (tmp_path / "dialog.stdout").write_bytes(out)
    e.captured["dialog"] = Captured(proc, tmp_path / "dialog.stdout")
    monkeypatch.setattr(check_live, "window_titles", lambda _display, _backend="auto": list(TITLES))
    monkeypatch.setattr(
        check_live,
        "probe_nodes",
        lambda app, _env: [dict(n) for n in NODES] if re.search(app, "soffice") else [],
    )
    return e


def holds(env: CheckEnv, spec: dict[str, Any]) -> bool:
    return evaluate(CHECK.validate_python(spec), env).ok


#: per kind: a check that holds, and per field the values that must each make it fail
CASES: list[tuple[type, dict[str, Any], dict[str, list[Any]]]] = [
    (
        FileCheck,
        {
            "kind": "file",
            "path": "~/a.txt",
            "equals": "milk\nbread",
            "contains": ["milk"],
            "excludes": ["eggs"],
            "lines": ["milk", "bread"],
            "regex": "^bread$",
        },
        {
            "path": ["~/b.txt"],
            "equals": ["milk"],
            "contains": [["eggs"]],
            "excludes": [["milk"]],
            "lines": [["milk"]],
            "regex": ["^eggs$"],
            "exact": [True],
        },
    ),
    (
        CellCheck,
        {
            "kind": "cell",
            "path": "~/t.xlsx",
            "cell": "A1",
            "sheet": "Data",
            "value": 42.3,
            "bold": True,
            "tolerance": 0.5,
        },
        {
            "path": ["~/u.xlsx"],
            "cell": ["A2"],
            "sheet": ["Other"],
            "value": [43, 42.9],
            "bold": [False],
            "tolerance": [0.1],
        },
    ),
    (
        ParagraphCheck,
        {
            "kind": "paragraph",
            "path": "~/r.docx",
            "index": 1,
            "text": "Sales grew by 12 percent.",
            "contains": "grew",
            "bold": "12",
            "not_bold": "Sales",
        },
        {
            "path": ["~/s.docx"],
            "index": [0, 5],
            "text": ["THIS TEXT IS NOT IN THE DOCUMENT"],
            "contains": ["shrank"],
            "bold": ["Sales", "absent"],
            "not_bold": ["12"],
            "style": ["Heading 1"],
        },
    ),
    (
        DocumentCheck,
        {"kind": "document", "path": "~/r.docx", "contains": ["Quarterly"], "excludes": ["Q4"]},
        {"path": ["~/s.docx"], "contains": [["Q4"]], "excludes": [["Quarterly"]]},
    ),
    (
        WindowCheck,
        {"kind": "window", "title": r"report\.odt"},
        {"title": ["^Save$"], "absent": [True]},
    ),
    (
        AtspiCheck,
        {
            "kind": "atspi",
            "app": "soffice",
            "role": "label",
            "name": "Total",
            "name_re": "^To",
            "text": "1,234.5",
            "text_re": "234",
            "number": 1234.5,
            "value": 3.0,
            "states": ["enabled"],
            "count": 1,
        },
        {
            "role": ["push button"],
            "name": ["Sum"],
            "name_re": ["^Sum"],
            "text": ["1234"],
            "text_re": ["^9"],
            "number": [1234.0],
            "value": [4.0],
            "states": [["focused"]],
            "count": [2],
            "app": ["^writer$"],
        },
    ),
    (
        OutputCheck,
        {
            "kind": "output",
            "of": "dialog",
            "stdout": "picked",
            "stdout_re": "^pick",
            "exit_code": 3,
        },
        {"stdout": ["other"], "stdout_re": ["^x"], "exit_code": [0], "of": ["nothing"]},
    ),
    (
        HttpCheck,
        {
            "kind": "http",
            "method": "POST",
            "path": "/order",
            "path_re": "^/ord",
            "form": {"product": "Blue Kettle"},
            "query": {"ref": "mail"},
            "without": ["card"],
            "count": 1,
        },
        {
            "method": ["GET"],
            "path": ["/pay"],
            "path_re": ["^/pay"],
            "form": [{"product": "Red Kettle"}],
            "query": [{"ref": "ad"}],
            "without": [["amount"]],
            "count": [0, 2],
        },
    ),
    (
        CommandCheck,
        {
            "kind": "command",
            "run": ["sh", "-c", "cat {home}/a.txt; exit 1"],
            "stdout": "milk\nbread",
            "stdout_re": "bread$",
            "contains": ["milk"],
            "excludes": ["eggs"],
            "exit_code": 1,
        },
        {
            "run": [["sh", "-c", "echo eggs"]],
            "stdout": ["milk"],
            "stdout_re": ["^eggs"],
            "contains": [["eggs"]],
            "excludes": [["bread"]],
            "exit_code": [0],
        },
    ),
    (
        OsworldCheck,
        {
            "kind": "osworld",
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "/home/user/a.txt"},
            "expected": {"type": "vm_file", "path": "~/A.txt"},
            "options": {"ignore_case": True},
        },
        {
            "result": [{"type": "vm_file", "path": "~/keep.txt"}],
            "expected": [{"type": "vm_file", "path": "~/keep.txt"}],
            "options": [{}],
        },
    ),
    (
        OsworldCheck,
        {
            "kind": "osworld",
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": "cat $HOME/a.txt"},
            "expected": {"type": "rule", "rules": {"include": ["milk"], "exclude": ["eggs"]}},
        },
        {"func": ["exact_match", "match_in_list"]},
    ),
    (FileCheck, {"kind": "file", "path": "~/gone.txt", "exists": False}, {"exists": [True]}),
    # a.txt is not what setup wrote (see the fixture): only "unchanged" tells
    (FileCheck, {"kind": "file", "path": "~/a.txt"}, {"unchanged": [True]}),
    (
        CellCheck,
        {"kind": "cell", "path": "~/t.xlsx", "cell": "B1", "formula": "SUM(A1"},
        {"formula": ["AVERAGE("]},
    ),
]
#: fields that select what is read rather than what it must be (changing them to a wrong
#: value makes the check unable to read: a CheckBroken, also never a pass)
BROKEN_WHEN_WRONG = {(OutputCheck, "of")}


def mutations() -> list[tuple[str, type, dict[str, Any], dict[str, Any]]]:
    return [
        (f"{model.__name__}.{name}.{i}", model, base, {name: value})
        for model, base, fields in CASES
        for name, values in fields.items()
        for i, value in enumerate(values)
    ]


@pytest.mark.parametrize(
    ("model", "base"), [(m, b) for m, b, _ in CASES], ids=[m.__name__ for m, _, _ in CASES]
)
def test_each_base_check_holds(env: CheckEnv, model: type, base: dict[str, Any]) -> None:
    assert holds(env, base), base


@pytest.mark.parametrize(
    ("label", "model", "base", "change"), mutations(), ids=[m[0] for m in mutations()]
)
def test_each_field_changed_makes_the_check_fail(
    env: CheckEnv, label: str, model: type, base: dict[str, Any], change: dict[str, Any]
) -> None:
    spec = {**base, **change}
    if (model, label.split(".")[1]) in BROKEN_WHEN_WRONG:
        with pytest.raises(CheckBroken):
            holds(env, spec)
        return
    assert not holds(env, spec), f"{label}: {change} still holds"


@pytest.mark.parametrize(
    "model", sorted({m for m, _, _ in CASES}, key=lambda m: m.__name__), ids=lambda m: m.__name__
)
def test_the_mutations_reach_every_field_of_each_kind(model: type) -> None:
    accepted = set(model.model_fields) - {"kind"}
    mutated = {name for m, _, fields in CASES if m is model for name in fields}
    assert accepted <= mutated, f"{model.__name__}: no mutation for {sorted(accepted - mutated)}"


def test_the_index_of_a_paragraph_does_not_excuse_its_text(env: CheckEnv) -> None:
    """The false pass researchers found: index + text held on a document without the text."""
    spec = {
        "kind": "paragraph",
        "path": "~/r.docx",
        "index": 0,
        "text": "THIS TEXT IS NOT IN THE DOCUMENT",
    }
    result = evaluate(CHECK.validate_python(spec), env)
    assert not result.ok and "THIS TEXT" in result.detail


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "file", "path": "~/a", "exists": False, "equals": "x"}, "cannot be combined"),
        ({"kind": "file", "path": "~/a", "exact": True}, "exact applies to equals"),
        ({"kind": "file", "path": "~/a", "regex": "([a"}, "not a valid regex"),
        ({"kind": "cell", "path": "~/t.xlsx", "cell": "A1"}, "at least one of value"),
        (
            {"kind": "cell", "path": "~/t.xlsx", "cell": "A1", "value": "x", "tolerance": 1},
            "tolerance applies",
        ),
        ({"kind": "paragraph", "path": "~/r.docx", "style": "Heading 1"}, "text, contains"),
        ({"kind": "document", "path": "~/r.docx"}, "contains, excludes"),
        ({"kind": "http"}, "an http check"),
        ({"kind": "window", "title": "*x"}, "not a valid regex"),
        ({"kind": "atspi", "app": "x", "text_re": "(("}, "not a valid regex"),
        ({"kind": "file", "path": "~/a", "colour": "red"}, "Extra inputs"),
    ],
)
def test_vacuous_or_contradictory_checks_are_refused_at_load(
    spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        CHECK.validate_python(spec)
