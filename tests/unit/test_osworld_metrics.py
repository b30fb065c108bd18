"""OSWorld's metrics on files made with the libraries of each format: each holds on the gold
file itself and fails on a file that differs in what it compares; the file store's layout;
the conversion of OSWorld's steps (postconfig, sudo, Chrome, infeasible)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deskpilot.eval.osworld_chrome import is_expected_tabs, same_url
from deskpilot.eval.osworld_metrics import file_kind, score
from deskpilot.eval.osworld_store import store_path
from deskpilot.eval.suite import load_suite


def sheet(path: Path, rows: list[list[Any]], chart: bool = False, bold: bool = False) -> Path:
    from openpyxl import Workbook
    from openpyxl.chart import BarChart, Reference
    from openpyxl.styles import Font

    book = Workbook()
    ws = book.active
    assert ws is not None
    for row in rows:
        ws.append(row)
    if bold:
        ws["A1"].font = Font(bold=True)
    if chart:
        bar = BarChart()
        bar.add_data(Reference(ws, min_col=2, min_row=1, max_row=len(rows)), titles_from_data=True)
        bar.title = "Sales"
        ws.add_chart(bar, "D2")
    book.save(str(path))
    return path


def test_compare_table_rules(tmp_path: Path) -> None:
    gold = sheet(tmp_path / "gold", [["Name", "Value"], ["a", 1.00001]], chart=True, bold=True)
    same = sheet(tmp_path / "same.xlsx", [["Name", "Value"], ["a", 1.0]], chart=True, bold=True)
    other = sheet(tmp_path / "other.xlsx", [["Name", "Value"], ["a", 2]], bold=False)
    data = {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}
    assert file_kind(gold) == ".xlsx"  # the store's files have no suffix
    assert score("compare_table", same, gold, data) == 1.0  # rounded to 4 digits
    assert score("compare_table", other, gold, data) == 0.0
    chart = {
        "rules": [
            {
                "type": "chart",
                "sheet_idx0": 0,
                "sheet_idx1": "EI0",
                "chart_props": ["type", "title"],
            }
        ]
    }
    assert score("compare_table", same, gold, chart) == 1.0
    assert score("compare_table", other, gold, chart) == 0.0  # no chart at all
    cell = {
        "rules": [
            {
                "type": "check_cell",
                "sheet_idx": 0,
                "coordinate": "A1",
                "props": {
                    "font_bold": {"method": "eq", "ref": True},
                    "value": {"method": "eq", "ref": "Name"},
                },
            }
        ]
    }
    assert score("compare_table", same, None, cell) == 1.0
    assert score("compare_table", other, None, cell) == 0.0
    with pytest.raises(FileNotFoundError):
        score("compare_table", tmp_path / "missing.xlsx", gold, data)
    (tmp_path / "text.xlsx").write_text("not a workbook")
    assert score("compare_table", tmp_path / "text.xlsx", gold, data) == 0.0


def test_documents_and_slides(tmp_path: Path) -> None:
    from docx import Document
    from pptx import Presentation
    from pptx.util import Inches

    for name, text in (
        ("gold", "Quarterly  report"),
        ("same.docx", "Quarterly report"),
        ("other.docx", "Annual report"),
    ):
        doc = Document()
        doc.add_paragraph(text)
        doc.save(str(tmp_path / name))
    assert score("compare_docx_files", tmp_path / "same.docx", tmp_path / "gold", {}) == 1.0
    assert score("compare_docx_files", tmp_path / "other.docx", tmp_path / "gold", {}) == 0.0
    assert (
        score(
            "compare_docx_files",
            tmp_path / "same.docx",
            tmp_path / "gold",
            {"ignore_blanks": False},
        )
        == 0.0
    )

    def deck(name: str, title: str, left: float) -> Path:
        prs = Presentation()
        slide = prs.slides.add_slide(prs.slide_layouts[5])
        slide.shapes.title.text = title  # type: ignore[union-attr]
        slide.shapes.add_textbox(Inches(left), Inches(1), Inches(2), Inches(1)).text = "x"
        prs.save(str(tmp_path / name))
        return tmp_path / name

    gold = deck("deck", "Plan", 1)
    assert score("compare_pptx_files", deck("a.pptx", "Plan", 1), gold, {}) == 1.0
    assert score("compare_pptx_files", deck("b.pptx", "Plans", 1), gold, {}) == 0.0
    moved = deck("c.pptx", "Plan", 3)
    assert score("compare_pptx_files", moved, gold, {}) == 0.0
    assert score("compare_pptx_files", moved, gold, {"examine_shape": False}) == 1.0


def test_json_objects_urls_and_settings_files(tmp_path: Path) -> None:
    rules = {"expected": {"name": "Ada", "tags": ["x", "y"]}}
    assert score("check_direct_json_object", '{"name": "Ada", "tags": ["x", "y"]}', rules, {})
    assert not score("check_direct_json_object", "{'name': 'Bob'}", rules, {})
    assert not score("check_direct_json_object", "not json", rules, {})
    assert same_url("https://www.example.com/a/", "http://example.com/a")
    assert not same_url("https://example.com/a?q=1", "https://example.com/a?q=2")
    tabs = [{"url": "https://www.drugs.com/"}, {"url": "https://github.com"}]
    assert is_expected_tabs(tabs, {"type": "url", "urls": ["drugs.com", "github.com/"]}) == 1.0
    assert is_expected_tabs(tabs[:1], {"type": "url", "urls": ["drugs.com", "github.com"]}) == 0
    rc = tmp_path / "vlcrc"
    rc.write_text("#qt-max-volume=125\nqt-max-volume=200\n")
    assert score("check_qt_max_volume", rc, {"expected_qt_max_volume": 200}, {}) == 1.0
    assert score("check_qt_max_volume", rc, {"expected_qt_max_volume": 125}, {}) == 0.0
    gimprc = tmp_path / "gimprc"
    gimprc.write_text('# GIMP gimprc\n(theme "Light")\n(undo-levels 100)\n')
    assert score("check_config_status", gimprc, {"key": "undo-levels", "value": "100"}, {}) == 1
    assert score("check_config_status", gimprc, {"key": "theme", "value": '"Dark"'}, {}) == 0


def test_the_store_is_keyed_by_url() -> None:
    assert store_path("https://huggingface.co/d/x/resolve/main/a%20b.xlsx") == (
        "huggingface.co/d/x/resolve/main/a b.xlsx"
    )
    one = store_path("https://drive.google.com/uc?id=1&export=download")
    two = store_path("https://drive.google.com/uc?id=2&export=download")
    assert one.startswith("drive.google.com/uc__") and one != two
    assert ".." not in store_path("https://x.org/a/../../etc/passwd")


OSWORLD = {
    "id": "calc-net",
    "snapshot": "libreoffice_calc",
    "instruction": "Add a Net Income column.",
    "config": [
        {
            "type": "download",
            "parameters": {
                "files": [
                    {"url": "https://example.org/files/NetIncome.xlsx", "path": "/home/user/N.xlsx"}
                ]
            },
        },
        {"type": "open", "parameters": {"path": "/home/user/N.xlsx"}},
        {"type": "execute", "parameters": {"command": "echo pw | sudo -S true", "shell": True}},
        {
            "type": "launch",
            "parameters": {"command": ["google-chrome", "--remote-debugging-port=1337"]},
        },
        {
            "type": "launch",
            "parameters": {"command": ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]},
        },
        {"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://drugs.com"]}},
    ],
    "evaluator": {
        "postconfig": [
            {
                "type": "activate_window",
                "parameters": {"window_name": "N.xlsx - LibreOffice Calc", "strict": True},
            },
            {
                "type": "execute",
                "parameters": {
                    "command": ["python", "-c", "import pyautogui; pyautogui.hotkey('ctrl', 's')"]
                },
            },
        ],
        "func": "compare_table",
        "result": {"type": "vm_file", "path": "/home/user/N.xlsx", "dest": "N.xlsx"},
        "expected": {
            "type": "cloud_file",
            "path": "https://example.org/gold/N.xlsx",
            "dest": "N_gt.xlsx",
        },
        "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
    },
}


def test_an_osworld_file_converts_for_the_trial(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text(json.dumps(OSWORLD))
    (task,) = load_suite(tmp_path).tasks
    assert task.downloads == [
        "https://example.org/files/NetIncome.xlsx",
        "https://example.org/gold/N.xlsx",
    ]
    assert task.setup[0] == {
        "write": "~/N.xlsx",
        "from": "{store}/example.org/files/NetIncome.xlsx",
    }
    assert task.setup[1]["launch"] == ["libreoffice", "--calc", "~/N.xlsx"]
    assert task.setup[3]["launch"] == ["google-chrome", "--remote-debugging-port={cdp_port}"]
    assert task.setup[4] == {"open_tab": "https://drugs.com"}  # socat is dropped
    assert [next(iter(s)) for s in task.postconfig] == ["activate", "run"]
    assert task.postconfig[0]["required"] is False and task.settle > 0
    check = task.check[0]
    assert check.expected == {
        "type": "cloud_file",  # type: ignore[union-attr]
        "path": "{store}/example.org/gold/N.xlsx",
    }
    infeasible = {**OSWORLD, "id": "inf", "evaluator": {"func": "infeasible"}}
    (tmp_path / "t.json").write_text(json.dumps(infeasible))
    (task,) = load_suite(tmp_path).tasks
    assert task.check[0].kind == "answer" and task.check[0].infeasible  # type: ignore[union-attr]


def test_fetch_list_prints_what_the_store_lacks(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "t.json").write_text(json.dumps(OSWORLD))
    store = tmp_path / "store"
    (store / "example.org" / "gold").mkdir(parents=True)
    (store / "example.org" / "gold" / "N.xlsx").write_text("x")
    env = {
        **os.environ,
        "DESKPILOT_OSWORLD_STORE": str(store),
        "DESKPILOT_HOME": str(tmp_path / "home"),
    }
    fetch = [sys.executable, "-m", "deskpilot", "eval", "osworld", "fetch-list"]
    done = subprocess.run(
        [*fetch, str(tmp_path / "suite")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines() == [
        f"https://example.org/files/NetIncome.xlsx\t{store}/example.org/files/NetIncome.xlsx"
    ]
    assert "1 of 2 file(s) listed" in done.stderr
    script = subprocess.run(
        [
            sys.executable,
            "-m",
            "deskpilot",
            "eval",
            "osworld",
            "fetch-list",
            "--script",
            str(tmp_path / "suite"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert script.stdout.startswith("curl -fL") and "--create-dirs" in script.stdout


def test_image_structure_by_ssim(tmp_path: Path) -> None:
    from PIL import Image, ImageDraw

    def picture(name: str, shift: int = 0) -> Path:
        img = Image.new("RGB", (64, 48), (40, 40, 40))
        draw = ImageDraw.Draw(img)
        draw.rectangle((10 + shift, 10, 30 + shift, 30), fill=(200, 60, 60))
        draw.ellipse((35, 5, 60, 40), fill=(60, 200, 60))
        img.save(tmp_path / name, format="PNG")
        return tmp_path / name

    gold = picture("gold")
    assert score("check_structure_sim", picture("same.png"), gold, {}) == 1.0
    assert score("check_structure_sim", picture("moved.png", shift=25), gold, {}) == 0.0
    from PIL import ImageEnhance

    darker = tmp_path / "darker.png"
    ImageEnhance.Brightness(Image.open(gold)).enhance(0.6).save(darker)
    assert score("check_brightness_decrease_and_structure_sim", darker, gold, {}) == 1.0
    assert score("check_brightness_decrease_and_structure_sim", gold, darker, {}) == 0.0
