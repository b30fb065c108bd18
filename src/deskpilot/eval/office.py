"""Reading office files the way a checker needs them: cells and paragraphs with their styles.

Formats: ODF (``.ods``/``.odt`` and the flat ``.fods``/``.fodt``), OOXML (``.xlsx``/``.docx``)
and CSV, read with the standard library (zip + XML), so a check depends on the file alone —
not on the app that wrote it. A file that is missing, not a document or lacks the sheet asked
for raises :class:`CheckFailed` (the agent did not produce it).
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

from deskpilot.errors import CheckFailed

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "x": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
}


def q(tag: str) -> str:
    """``"table:table-cell"`` → ``"{urn:…table:1.0}table-cell"``."""
    prefix, local = tag.split(":")
    return f"{{{NS[prefix]}}}{local}"


@dataclass(frozen=True)
class Cell:
    value: float | str | None  # a number for numeric cells, else the shown text
    text: str
    formula: str
    bold: bool


@dataclass(frozen=True)
class Paragraph:
    text: str
    style: str  # display name: "Heading 1", "Text Body", "Normal"…
    runs: tuple[tuple[str, bool], ...]  # (text, bold)

    def is_bold(self, word: str) -> bool | None:
        """Whether every character of the first occurrence of ``word`` is bold (None: absent)."""
        at = self.text.find(word)
        if at < 0:
            return None
        flags: list[bool] = [b for text, b in self.runs for _ in text]
        return all(flags[at : at + len(word)])


def _exists(path: Path) -> None:
    if not path.is_file():
        raise CheckFailed(f"{path.name} does not exist")


def _xml(data: bytes, what: str) -> ET.Element:
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise CheckFailed(f"{what} is not valid XML ({exc})") from exc


def _zip_part(path: Path, name: str, required: bool = True) -> ET.Element | None:
    try:
        with zipfile.ZipFile(path) as zf:
            if name not in zf.namelist():
                if required:
                    raise CheckFailed(f"{path.name} has no {name}: not this kind of document")
                return None
            return _xml(zf.read(name), f"{path.name}:{name}")
    except zipfile.BadZipFile as exc:
        raise CheckFailed(f"{path.name} is not a zipped office document") from exc


# -- ODF ------------------------------------------------------------------------------------


def _odf_parts(path: Path) -> tuple[ET.Element, ET.Element | None]:
    """(content root, styles root) of a zipped or flat ODF file."""
    _exists(path)
    if zipfile.is_zipfile(path):
        content = _zip_part(path, "content.xml")
        assert content is not None
        return content, _zip_part(path, "styles.xml", required=False)
    try:
        root = _xml(path.read_bytes(), path.name)
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


def _runs(runs: list[tuple[str, bool]]) -> tuple[str, tuple[tuple[str, bool], ...]]:
    return "".join(t for t, _ in runs), tuple(runs)


def odf_paragraphs(path: Path) -> list[Paragraph]:
    content, styles_root = _odf_parts(path)
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
        text, parts = _runs(runs)
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


def _odf_cell(path: Path, sheet: str | int, col: int, row: int) -> Cell:
    content, styles_root = _odf_parts(path)
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
                return _odf_cell_value(cell, styles, row_el)
            c += cols
        break
    return Cell(None, "", "", False)


def _odf_cell_value(cell: ET.Element, styles: _OdfStyles, row: ET.Element) -> Cell:
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


# -- OOXML ----------------------------------------------------------------------------------


def docx_paragraphs(path: Path) -> list[Paragraph]:
    _exists(path)
    doc = _zip_part(path, "word/document.xml")
    styles = _zip_part(path, "word/styles.xml", required=False)
    assert doc is not None
    names: dict[str, str] = {}
    style_bold: dict[str, bool] = {}
    if styles is not None:
        for st in styles.iter(q("w:style")):
            sid = st.get(q("w:styleId"), "")
            name = st.find(q("w:name"))
            names[sid] = name.get(q("w:val"), sid) if name is not None else sid
            b = st.find(f"{q('w:rPr')}/{q('w:b')}")
            if b is not None:
                style_bold[sid] = b.get(q("w:val"), "true") not in ("0", "false")
    out = []
    for p in doc.iter(q("w:p")):
        ps = p.find(f"{q('w:pPr')}/{q('w:pStyle')}")
        sid = ps.get(q("w:val"), "") if ps is not None else ""
        runs: list[tuple[str, bool]] = []
        for r in p.iter(q("w:r")):
            b = r.find(f"{q('w:rPr')}/{q('w:b')}")
            bold = style_bold.get(sid, False)
            if b is not None:
                bold = b.get(q("w:val"), "true") not in ("0", "false")
            for el in r:
                if el.tag == q("w:t"):
                    runs.append((el.text or "", bold))
                elif el.tag == q("w:tab"):
                    runs.append(("\t", bold))
                elif el.tag == q("w:br"):
                    runs.append(("\n", bold))
        text, parts = _runs(runs)
        # Word's built-in names are lower case ("heading 1"); show them as LibreOffice does
        shown = names.get(sid, sid) if sid else "Normal"
        out.append(Paragraph(text, shown[:1].upper() + shown[1:], parts))
    return out


def _xlsx_sheet_part(path: Path, sheet: str | int) -> str:
    book = _zip_part(path, "xl/workbook.xml")
    rels = _zip_part(path, "xl/_rels/workbook.xml.rels")
    assert book is not None and rels is not None
    sheets = book.findall(f"{q('x:sheets')}/{q('x:sheet')}")
    if isinstance(sheet, int):
        if sheet >= len(sheets):
            raise CheckFailed(f"{path.name} has {len(sheets)} sheet(s), no sheet #{sheet + 1}")
        chosen = sheets[sheet]
    else:
        found = [s for s in sheets if s.get("name") == sheet]
        if not found:
            names = ", ".join(s.get("name", "?") for s in sheets)
            raise CheckFailed(f"{path.name} has no sheet {sheet!r} (it has {names})")
        chosen = found[0]
    rid = chosen.get(q("r:id"))
    for rel in rels.iter(q("rel:Relationship")):
        if rel.get("Id") == rid:
            target = rel.get("Target", "")
            return target.lstrip("/") if target.startswith("/") else f"xl/{target}"
    raise CheckFailed(f"{path.name}: the sheet's part is missing")


def _xlsx_cell(path: Path, sheet: str | int, ref: str) -> Cell:
    _exists(path)
    part = _zip_part(path, _xlsx_sheet_part(path, sheet))
    assert part is not None
    for c in part.iter(q("x:c")):
        if c.get("r", "").upper() != ref.upper():
            continue
        kind, v = c.get("t", "n"), c.find(q("x:v"))
        raw = v.text if v is not None and v.text is not None else ""
        f = c.find(q("x:f"))
        formula = f.text or "" if f is not None else ""
        if kind == "s":
            shared = _zip_part(path, "xl/sharedStrings.xml")
            assert shared is not None
            items = shared.findall(q("x:si"))
            text = "".join(items[int(raw)].itertext()) if raw.isdigit() else ""
            value: float | str | None = text
        elif kind == "inlineStr":
            text = "".join(c.itertext())
            value = text
        elif kind in ("str", "b", "e"):
            text = value = raw
        else:
            text = raw
            value = float(raw) if raw else None
        return Cell(value, text, formula, _xlsx_bold(path, c.get("s")))
    return Cell(None, "", "", False)


def _xlsx_bold(path: Path, style: str | None) -> bool:
    if not style or not style.isdigit():
        return False
    styles = _zip_part(path, "xl/styles.xml", required=False)
    if styles is None:
        return False
    xfs = styles.findall(f"{q('x:cellXfs')}/{q('x:xf')}")
    fonts = styles.findall(f"{q('x:fonts')}/{q('x:font')}")
    if int(style) >= len(xfs):
        return False
    font = int(xfs[int(style)].get("fontId", "0"))
    return font < len(fonts) and fonts[font].find(q("x:b")) is not None


# -- the entry points -----------------------------------------------------------------------


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
        return _xlsx_cell(path, sheet, ref)
    if suffix == ".csv":
        _exists(path)
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8", errors="replace"))))
        text = rows[row][col] if row < len(rows) and col < len(rows[row]) else ""
        try:
            value: float | str | None = float(text)
        except ValueError:
            value = text or None
        return Cell(value, text, "", False)
    return _odf_cell(path, sheet, col, row)


def read_paragraphs(path: Path) -> list[Paragraph]:
    if path.suffix.lower() == ".docx":
        return docx_paragraphs(path)
    return odf_paragraphs(path)


def document_text(path: Path) -> str:
    """All the text of a document (paragraphs, or cells row by row), or a plain file's text."""
    _exists(path)
    suffix = path.suffix.lower()
    if suffix in (".odt", ".fodt", ".docx"):
        return "\n".join(p.text for p in read_paragraphs(path))
    if suffix in (".ods", ".fods"):
        content, _ = _odf_parts(path)
        return "\n".join("".join(p.itertext()) for p in content.iter(q("text:p")))
    if suffix == ".xlsx":
        shared = _zip_part(path, "xl/sharedStrings.xml", required=False)
        strings = [] if shared is None else ["".join(si.itertext()) for si in shared]
        part = _zip_part(path, _xlsx_sheet_part(path, 0))
        assert part is not None
        values = [v.text or "" for v in part.iter(q("x:v"))]
        return "\n".join(strings + values)
    return path.read_text(encoding="utf-8", errors="replace")
