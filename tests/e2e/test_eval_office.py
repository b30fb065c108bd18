"""The office readers of the checkers on files LibreOffice wrote (ODF, OOXML) and on flat ODF."""

from __future__ import annotations

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from deskpilot.errors import CheckFailed
from deskpilot.eval import office

FIXTURES = Path(__file__).parent.parent / "fixtures" / "eval"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("office")
    for name in ("doc.fodt", "sheet.fods"):
        shutil.copy(FIXTURES / name, out / name)

    def convert(job: tuple[str, str]) -> None:
        target, source = job
        profile = out / f"profile-{target}"  # one profile each: conversions run at once
        subprocess.run(
            [
                "soffice",
                f"-env:UserInstallation=file://{profile}",
                "--headless",
                "--convert-to",
                target,
                "--outdir",
                str(out),
                str(out / source),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )

    jobs = [
        ("odt", "doc.fodt"),
        ("docx", "doc.fodt"),
        ("ods", "sheet.fods"),
        ("xlsx", "sheet.fods"),
    ]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(convert, jobs))
    return out


@pytest.mark.app  # LibreOffice converts the fixtures (headless)
@pytest.mark.parametrize("name", ["doc.fodt", "doc.odt", "doc.docx"])
def test_paragraphs_with_styles_and_bold_words(files: Path, name: str) -> None:
    heading, body = office.read_paragraphs(files / name)
    assert (heading.text, heading.style) == ("Quarterly report", "Heading 1")
    assert body.text == "Dear Ada, sales grew."  # ODF's white-space rule
    assert body.style in ("Text body", "Body Text")  # LibreOffice's name / Word's name
    assert body.is_bold("Dear") is True and body.is_bold("Ada") is False
    assert body.is_bold("Dear Ada") is False and body.is_bold("absent") is None
    assert "sales grew" in office.document_text(files / name)


@pytest.mark.app
@pytest.mark.parametrize("name", ["sheet.fods", "sheet.ods", "sheet.xlsx"])
def test_cells_values_formulas_styles_and_sheets(files: Path, name: str) -> None:
    path = files / name
    total = office.read_cell(path, "B6")
    assert total.value == 1550.5 and "SUM" in total.formula and "B2" in total.formula
    assert office.read_cell(path, "A1").bold and not office.read_cell(path, "B2").bold
    assert office.read_cell(path, "b3").value == 350.5
    assert office.read_cell(path, "A6", "Budget").value == "Total"
    assert office.read_cell(path, "A1", "Notes").text == "hello"
    assert office.read_cell(path, "A1", 1).text == "hello"
    assert office.read_cell(path, "Z99").value is None  # an empty cell, not an error
    with pytest.raises(CheckFailed, match="no sheet 'Missing'"):
        office.read_cell(path, "A1", "Missing")


def test_files_that_are_not_documents_fail_the_check(tmp_path: Path) -> None:
    bad = tmp_path / "report.odt"
    bad.write_text("plain text saved under an .odt name")
    with pytest.raises(CheckFailed, match="not an ODF document"):
        office.read_paragraphs(bad)
    with pytest.raises(CheckFailed, match="does not exist"):
        office.read_cell(tmp_path / "none.xlsx", "A1")
    (tmp_path / "t.csv").write_text("a,b\n1,2.5\n")
    assert office.read_cell(tmp_path / "t.csv", "B2").value == 2.5
