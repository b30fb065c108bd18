"""Reading office files the way a checker needs them: cells and paragraphs with their styles.

Formats: ODF (``.ods``/``.odt`` and the flat ``.fods``/``.fodt``), OOXML (``.xlsx``/``.docx``)
and CSV, read with the standard library (zip + XML), so a check depends on the file alone —
not on the app that wrote it. A file that is missing, not a document or lacks the sheet asked
for raises :class:`CheckFailed` (the agent did not produce it).

The readers are :mod:`~deskpilot.eval.office_odf` and :mod:`~deskpilot.eval.office_ooxml`;
what they share is in :mod:`~deskpilot.eval.office_xml`.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from deskpilot.eval.office_odf import odf_cell, odf_paragraphs, odf_parts
from deskpilot.eval.office_ooxml import docx_paragraphs, xlsx_cell, xlsx_sheet_part
from deskpilot.eval.office_xml import Cell, Paragraph, exists, q, zip_part


def cell_index(ref: str) -> tuple[int, int]:
    """``"B7"`` → (column 1, row 6), both 0-based."""
    m = re.fullmatch(r"([A-Za-z]{1,3})([1-9][0-9]*)", ref)
    if m is None:
        raise ValueError(f"not a cell reference: {ref!r}")
    col = 0
    for ch in m.group(1).upper():
        col = col * 26 + (ord(ch) - 64)
    return col - 1, int(m.group(2)) - 1


def read_cell(path: Path, ref: str, sheet: str | int = 0) -> Cell:
    col, row = cell_index(ref)
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        return xlsx_cell(path, sheet, ref)
    if suffix == ".csv":
        exists(path)
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8", errors="replace"))))
        text = rows[row][col] if row < len(rows) and col < len(rows[row]) else ""
        try:
            value: float | str | None = float(text)
        except ValueError:
            value = text or None
        return Cell(value, text, "", False)
    return odf_cell(path, sheet, col, row)


def read_paragraphs(path: Path) -> list[Paragraph]:
    if path.suffix.lower() == ".docx":
        return docx_paragraphs(path)
    return odf_paragraphs(path)


def document_text(path: Path) -> str:
    """All the text of a document (paragraphs, or cells row by row), or a plain file's text."""
    exists(path)
    suffix = path.suffix.lower()
    if suffix in (".odt", ".fodt", ".docx"):
        return "\n".join(p.text for p in read_paragraphs(path))
    if suffix in (".ods", ".fods"):
        content, _ = odf_parts(path)
        return "\n".join("".join(p.itertext()) for p in content.iter(q("text:p")))
    if suffix == ".xlsx":
        shared = zip_part(path, "xl/sharedStrings.xml", required=False)
        strings = [] if shared is None else ["".join(si.itertext()) for si in shared]
        part = zip_part(path, xlsx_sheet_part(path, 0))
        assert part is not None
        values = [v.text or "" for v in part.iter(q("x:v"))]
        return "\n".join(strings + values)
    return path.read_text(encoding="utf-8", errors="replace")
