"""Office Open XML (``.docx``/``.xlsx``): paragraphs with their style names and bold runs,
worksheet cells with shared strings, formulas and bold fonts."""

from __future__ import annotations

from pathlib import Path

from deskpilot.errors import CheckFailed
from deskpilot.eval.office_xml import Cell, Paragraph, exists, joined_runs, q, zip_part


def docx_paragraphs(path: Path) -> list[Paragraph]:
    exists(path)
    doc = zip_part(path, "word/document.xml")
    styles = zip_part(path, "word/styles.xml", required=False)
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
        text, parts = joined_runs(runs)
        # Word's built-in names are lower case ("heading 1"); show them as LibreOffice does
        shown = names.get(sid, sid) if sid else "Normal"
        out.append(Paragraph(text, shown[:1].upper() + shown[1:], parts))
    return out


def xlsx_sheet_part(path: Path, sheet: str | int) -> str:
    book = zip_part(path, "xl/workbook.xml")
    rels = zip_part(path, "xl/_rels/workbook.xml.rels")
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


def xlsx_cell(path: Path, sheet: str | int, ref: str) -> Cell:
    exists(path)
    part = zip_part(path, xlsx_sheet_part(path, sheet))
    assert part is not None
    for c in part.iter(q("x:c")):
        if c.get("r", "").upper() != ref.upper():
            continue
        kind, v = c.get("t", "n"), c.find(q("x:v"))
        raw = v.text if v is not None and v.text is not None else ""
        f = c.find(q("x:f"))
        formula = f.text or "" if f is not None else ""
        if kind == "s":
            shared = zip_part(path, "xl/sharedStrings.xml")
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
    styles = zip_part(path, "xl/styles.xml", required=False)
    if styles is None:
        return False
    xfs = styles.findall(f"{q('x:cellXfs')}/{q('x:xf')}")
    fonts = styles.findall(f"{q('x:fonts')}/{q('x:font')}")
    if int(style) >= len(xfs):
        return False
    font = int(xfs[int(style)].get("fontId", "0"))
    return font < len(fonts) and fonts[font].find(q("x:b")) is not None
