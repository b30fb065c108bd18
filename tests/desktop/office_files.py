"""Office files for the LibreOffice tests: write flat ODF documents, read back what was saved.

The tests check a task's effect in the saved file, not through the tools: :func:`read_sheets`
parses an ``.ods`` (zip) or ``.fods`` (flat XML) into each sheet's cells — text, value and
formula — with repeated rows and columns expanded.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape

OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"

Value = str | float | int


def write_fods(path: Path, sheets: dict[str, list[list[Value]]]) -> Path:
    """A flat ODF spreadsheet with these sheets (rows of strings and numbers)."""
    body = []
    for name, rows in sheets.items():
        body.append(f'<table:table table:name="{escape(name)}">')
        for row in rows:
            body.append("<table:table-row>")
            for value in row:
                if isinstance(value, int | float):
                    body.append(
                        f'<table:table-cell office:value-type="float" office:value="{value}">'
                        f"<text:p>{value}</text:p></table:table-cell>"
                    )
                else:
                    body.append(
                        '<table:table-cell office:value-type="string">'
                        f"<text:p>{escape(value)}</text:p></table:table-cell>"
                    )
            body.append("</table:table-row>")
        body.append("</table:table>")
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<office:document xmlns:office="{OFFICE}" xmlns:table="{TABLE}" xmlns:text="{TEXT}" '
        'office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">'
        "<office:body><office:spreadsheet>" + "".join(body) + "</office:spreadsheet>"
        "</office:body></office:document>\n",
        encoding="utf-8",
    )
    return path


def write_fodt(path: Path, paragraphs: list[str]) -> Path:
    """A flat ODF text document with these paragraphs."""
    body = "".join(f"<text:p>{escape(p)}</text:p>" for p in paragraphs)
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<office:document xmlns:office="{OFFICE}" xmlns:text="{TEXT}" office:version="1.3" '
        'office:mimetype="application/vnd.oasis.opendocument.text">'
        f"<office:body><office:text>{body}</office:text></office:body></office:document>\n",
        encoding="utf-8",
    )
    return path


def write_fodp(path: Path, titles: list[str]) -> Path:
    """A flat ODF presentation: one slide per title (a text frame holding it)."""
    draw = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
    svg = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
    pages = "".join(
        f'<draw:page draw:name="page{i}"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" '
        f'svg:height="3cm"><draw:text-box><text:p>{escape(t)}</text:p></draw:text-box>'
        "</draw:frame></draw:page>"
        for i, t in enumerate(titles, 1)
    )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<office:document xmlns:office="{OFFICE}" xmlns:text="{TEXT}" xmlns:draw="{draw}" '
        f'xmlns:svg="{svg}" office:version="1.3" '
        'office:mimetype="application/vnd.oasis.opendocument.presentation">'
        f"<office:body><office:presentation>{pages}</office:presentation></office:body>"
        "</office:document>\n",
        encoding="utf-8",
    )
    return path


@dataclass(frozen=True)
class Cell:
    text: str
    value: float | None = None
    formula: str = ""


def read_sheets(path: Path) -> dict[str, list[list[Cell]]]:
    """Each sheet's rows of cells, in order (trailing empty cells and rows dropped)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            root = ET.fromstring(zf.read("content.xml"))
    else:
        root = ET.parse(path).getroot()
    out: dict[str, list[list[Cell]]] = {}
    for table in root.iter(f"{{{TABLE}}}table"):
        rows: list[list[Cell]] = []
        for row in table.iter(f"{{{TABLE}}}table-row"):
            cells: list[Cell] = []
            for cell in row:
                if cell.tag not in (f"{{{TABLE}}}table-cell", f"{{{TABLE}}}covered-table-cell"):
                    continue
                repeat = int(cell.get(f"{{{TABLE}}}number-columns-repeated", "1"))
                text = "\n".join("".join(p.itertext()) for p in cell.iter(f"{{{TEXT}}}p"))
                raw = cell.get(f"{{{OFFICE}}}value")
                value = float(raw) if raw is not None else None
                formula = cell.get(f"{{{TABLE}}}formula", "")
                cells.extend([Cell(text, value, formula)] * min(repeat, 1024))
            while cells and cells[-1] == Cell(""):
                cells.pop()
            repeat = int(row.get(f"{{{TABLE}}}number-rows-repeated", "1"))
            rows.extend([cells] * min(repeat, 1024))
        while rows and not rows[-1]:
            rows.pop()
        out[table.get(f"{{{TABLE}}}name", "")] = rows
    return out


def column(rows: list[list[Cell]], index: int) -> list[Cell]:
    """The cells of one column (Cell("") where a row is shorter)."""
    return [r[index] if index < len(r) else Cell("") for r in rows]
