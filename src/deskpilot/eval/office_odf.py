"""OpenDocument (``.ods``/``.odt``, zipped or flat ``.fods``/``.fodt``): paragraphs with their
style's display name and bold runs, and spreadsheet cells (value, text, formula, bold)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

from deskpilot.errors import CheckFailed
from deskpilot.eval.office_xml import Cell, Paragraph, exists, joined_runs, parse_xml, q, zip_part


def odf_parts(path: Path) -> tuple[ET.Element, ET.Element | None]:
    """(content root, styles root) of a zipped or flat ODF file."""
    exists(path)
    if zipfile.is_zipfile(path):
        content = zip_part(path, "content.xml")
        assert content is not None
        return content, zip_part(path, "styles.xml", required=False)
    try:
        root = parse_xml(path.read_bytes(), path.name)
    except CheckFailed:
        raise CheckFailed(
            f"{path.name} is not an ODF document (not zipped, not flat XML)"
        ) from None
    if root.tag != q("office:document"):
        raise CheckFailed(f"{path.name} is not an ODF document")
    return root, root


class _OdfStyles:
    """Style lookups over automatic styles (content) and common styles (styles.xml)."""

    def __init__(self, content: ET.Element, styles: ET.Element | None) -> None:
        self.by_name: dict[str, ET.Element] = {}
        self.common: set[str] = set()  # styles a person picks (not automatic ones)
        for root in (styles, content):
            if root is None:
                continue
            for el in root.iter(q("style:style")):
                self.by_name[el.get(q("style:name"), "")] = el
            for group in root.iter(q("office:styles")):
                self.common |= {el.get(q("style:name"), "") for el in group.iter(q("style:style"))}

    def _chain(self, name: str) -> list[ET.Element]:
        out: list[ET.Element] = []
        while name and name in self.by_name and len(out) < 20:
            el = self.by_name[name]
            out.append(el)
            name = el.get(q("style:parent-style-name"), "")
        return out

    def display(self, name: str) -> str:
        """The user-visible name of a paragraph style (an automatic style names its parent)."""
        for el in self._chain(name):
            own = el.get(q("style:name"), "")
            if own in self.common:
                return (el.get(q("style:display-name")) or own).replace("_20_", " ")
        return name.replace("_20_", " ")

    def bold(self, name: str) -> bool | None:
        for el in self._chain(name):
            props = el.find(q("style:text-properties"))
            if props is not None and props.get(q("fo:font-weight")) is not None:
                return props.get(q("fo:font-weight")) in ("bold", "700", "800", "900")
        return None


def _spaces(text: str) -> str:
    """ODF's white-space rule: a run of spaces, tabs and newlines is one space (<text:s> and
    <text:tab> stand for the others)."""
    return re.sub(r"[ \t\r\n]+", " ", text)


def _odf_text(el: ET.Element, styles: _OdfStyles, bold: bool, runs: list[tuple[str, bool]]) -> None:
    if el.text:
        runs.append((_spaces(el.text), bold))
    for child in el:
        if child.tag == q("text:s"):
            runs.append((" " * int(child.get(q("text:c"), "1")), bold))
        elif child.tag == q("text:tab"):
            runs.append(("\t", bold))
        elif child.tag == q("text:line-break"):
            runs.append(("\n", bold))
        elif child.tag in (q("office:annotation"), q("text:note")):
            pass
        else:
            inner = styles.bold(child.get(q("text:style-name"), ""))
            _odf_text(child, styles, bold if inner is None else inner, runs)
        if child.tail:
            runs.append((_spaces(child.tail), bold))


def odf_paragraphs(path: Path) -> list[Paragraph]:
    content, styles_root = odf_parts(path)
    styles = _OdfStyles(content, styles_root)
    body = content.find(f"{q('office:body')}/{q('office:text')}")
    if body is None:
        raise CheckFailed(f"{path.name} is not a text document")
    out = []
    for el in body.iter():
        if el.tag not in (q("text:p"), q("text:h")):
            continue
        name = el.get(q("text:style-name"), "")
        runs: list[tuple[str, bool]] = []
        _odf_text(el, styles, bool(styles.bold(name)), runs)
        if runs:
            runs[0] = (runs[0][0].lstrip(" "), runs[0][1])
        text, parts = joined_runs(runs)
        style = styles.display(name) if name else ""
        if el.tag == q("text:h") and not style:
            style = f"Heading {el.get(q('text:outline-level'), '1')}"
        out.append(Paragraph(text, style, parts))
    return out


def _odf_sheet(content: ET.Element, sheet: str | int, name: str) -> ET.Element:
    tables = content.findall(f"{q('office:body')}/{q('office:spreadsheet')}/{q('table:table')}")
    if not tables:
        raise CheckFailed(f"{name} is not a spreadsheet")
    if isinstance(sheet, int):
        if sheet >= len(tables):
            raise CheckFailed(f"{name} has {len(tables)} sheet(s), no sheet #{sheet + 1}")
        return tables[sheet]
    for t in tables:
        if t.get(q("table:name")) == sheet:
            return t
    names = ", ".join(t.get(q("table:name"), "?") for t in tables)
    raise CheckFailed(f"{name} has no sheet {sheet!r} (it has {names})")


def odf_cell(path: Path, sheet: str | int, col: int, row: int) -> Cell:
    content, styles_root = odf_parts(path)
    styles = _OdfStyles(content, styles_root)
    table = _odf_sheet(content, sheet, path.name)
    r = 0
    for row_el in table.iter(q("table:table-row")):
        rows = int(row_el.get(q("table:number-rows-repeated"), "1"))
        if r + rows <= row:
            r += rows
            continue
        c = 0
        for cell in row_el:
            if cell.tag not in (q("table:table-cell"), q("table:covered-table-cell")):
                continue
            cols = int(cell.get(q("table:number-columns-repeated"), "1"))
            if c + cols > col:
                return __odf_cell_value(cell, styles, row_el)
            c += cols
        break
    return Cell(None, "", "", False)


def __odf_cell_value(cell: ET.Element, styles: _OdfStyles, row: ET.Element) -> Cell:
    kind = cell.get(q("office:value-type"), "")
    text = "\n".join("".join(p.itertext()) for p in cell.findall(q("text:p")))
    value: float | str | None = text or None
    if kind in ("float", "percentage", "currency"):
        value = float(cell.get(q("office:value"), "nan"))
    elif kind == "boolean":
        value = cell.get(q("office:boolean-value"), "")
    elif kind == "date":
        value = cell.get(q("office:date-value"), text)
    formula = re.sub(r"^of:", "", cell.get(q("table:formula"), ""))
    style = cell.get(q("table:style-name")) or ""
    return Cell(value, text, formula, bool(styles.bold(style)))
