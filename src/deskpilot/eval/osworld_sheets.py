"""OSWorld's ``compare_table``: a result spreadsheet against a gold one (or itself), by rules.

Sheets are named as OSWorld names them: ``0`` or ``"RI0"`` (the result's first sheet),
``"EI1"`` (the expected file's second), ``"RNSheet1"``/``"ENTotals"`` (by name). XLSX is read
with openpyxl (cached values: what LibreOffice or Excel computed), ODS with odfpy, CSV with
the standard library. Rules: ``sheet_name``, ``sheet_data`` (values, numbers rounded to
``precision`` digits), ``sheet_print`` (values as text), ``sheet_fuzzy`` (ranges compared
after normalisation), ``check_cell`` (a cell's value or style against ``{method, ref}``),
``freeze`` (frozen panes), ``zoom`` (the sheet's zoom against a ref).
"""

from __future__ import annotations

import csv
import difflib
import functools
import operator
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: the keys each rule accepts (beyond "type")
TABLE_RULES: dict[str, tuple[str, ...]] = {
    "sheet_name": (),
    "sheet_data": ("sheet_idx0", "sheet_idx1", "precision", "ignore_case"),
    "sheet_print": ("sheet_idx0", "sheet_idx1", "ignore_case"),
    "sheet_fuzzy": ("sheet_idx0", "sheet_idx1", "rules"),
    "check_cell": ("sheet_idx", "coordinate", "props"),
    "freeze": ("sheet_idx0", "sheet_idx1"),
    "zoom": ("sheet_idx", "method", "ref"),
    "chart": ("sheet_idx0", "sheet_idx1", "chart_props"),
    "pivot_table": ("sheet_idx0", "sheet_idx1", "pivot_props"),
    "style": ("sheet_idx0", "sheet_idx1", "props"),
    "row_props": ("sheet_idx0", "sheet_idx1", "props"),
    "col_props": ("sheet_idx0", "sheet_idx1", "props"),
    "data_validation": ("sheet_idx", "dv_props"),
}
DIMENSION_PROPS = (
    "hidden",
    "height",
    "width",
    "outlineLevel",
    "outline_level",
    "collapsed",
    "customHeight",
    "customWidth",
)
DV_PROPS = (
    "ranges",
    "type",
    "formula1",
    "formula2",
    "operator",
    "allowBlank",
    "allow_blank",
    "showDropDown",
    "showInputMessage",
    "showErrorMessage",
    "error",
    "errorTitle",
    "errorStyle",
    "prompt",
    "promptTitle",
    "imeMode",
)
CHART_PROPS = (
    "title",
    "legend",
    "anchor",
    "width",
    "height",
    "type",
    "direction",
    "xtitle",
    "ytitle",
    "ztitle",
)
PIVOT_PROPS = (
    "name",
    "show_total",
    "show_empty_row",
    "show_empty_col",
    "show_headers",
    "location",
    "filter",
    "selection",
    "ordered",
    "col_fields",
    "row_fields",
    "data_fields",
    "data_fields_name",
)

Grid = list[list[Any]]


class Book:
    """One workbook's sheet names and values (and, for XLSX, its openpyxl workbook)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.xl: Any = None
        self.sheets: dict[str, Grid] = {}
        from deskpilot.eval.osworld_files import file_kind

        suffix = file_kind(path)
        if suffix in (".xlsx", ".xlsm"):
            from openpyxl import load_workbook

            with path.open("rb") as fh:  # a file object: the store's files may lack a suffix
                self.xl = load_workbook(fh, data_only=True)
            for ws in self.xl.worksheets:
                self.sheets[ws.title] = [list(row) for row in ws.iter_rows(values_only=True)]
        elif suffix in (".ods", ".fods"):
            self.sheets = _ods_sheets(path)
        elif suffix == ".csv":
            with path.open(encoding="utf-8", errors="replace", newline="") as fh:
                self.sheets[path.stem] = [[_number(c) for c in r] for r in csv.reader(fh)]
        else:
            raise ValueError(f"{path.name} is not a spreadsheet")

    @property
    def names(self) -> list[str]:
        return list(self.sheets)

    def grid(self, name: str) -> Grid:
        return _trim(self.sheets[name])


def _number(text: str) -> Any:
    try:
        return float(text) if text.strip() else None
    except ValueError:
        return text


def _ods_sheets(path: Path) -> dict[str, Grid]:
    from odf.opendocument import load
    from odf.table import Table, TableCell, TableRow

    doc = load(str(path))
    out: dict[str, Grid] = {}
    for table in doc.spreadsheet.getElementsByType(Table):
        rows: Grid = []
        for row in table.getElementsByType(TableRow):
            cells: list[Any] = []
            for cell in row.getElementsByType(TableCell):
                repeat = int(cell.getAttribute("numbercolumnsrepeated") or 1)
                kind = cell.getAttribute("valuetype")
                if kind in ("float", "percentage", "currency"):
                    value: Any = float(cell.getAttribute("value"))
                elif kind == "boolean":
                    value = cell.getAttribute("booleanvalue") == "true"
                else:
                    text = "\n".join(str(p) for p in cell.childNodes if p.qname[1] == "p")
                    value = text or None
                cells.extend([value] * min(repeat, 1024))
            repeat_rows = int(row.getAttribute("numberrowsrepeated") or 1)
            rows.extend([list(cells) for _ in range(min(repeat_rows, 1024))])
        out[str(table.getAttribute("name"))] = rows
    return out


def _trim(rows: Grid) -> Grid:
    """Values without trailing empty rows and columns (what a data frame of it holds)."""
    rows = [list(r) for r in rows]
    while rows and all(v in (None, "") for v in rows[-1]):
        rows.pop()
    width = max(
        (max((i + 1 for i, v in enumerate(r) if v not in (None, "")), default=0) for r in rows),
        default=0,
    )
    return [[(r[i] if i < len(r) else None) for i in range(width)] for r in rows]


def _sheet(idx: Any, result: Book, expected: Book | None) -> tuple[Book, str]:
    if isinstance(idx, int):
        return result, result.names[idx]
    text = str(idx)
    book = result if text.startswith("R") else expected
    if book is None or len(text) < 3 or text[:2] not in ("RI", "RN", "EI", "EN"):
        raise KeyError(idx)
    return (book, book.names[int(text[2:])]) if text[1] == "I" else (book, text[2:])


def _round(value: Any, digits: int) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return round(float(value), digits)


def _show(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _cell(book: Book, name: str, ref: str) -> Any:
    from openpyxl.utils.cell import coordinate_to_tuple

    row, col = coordinate_to_tuple(ref)
    rows = book.sheets[name]
    return rows[row - 1][col - 1] if row <= len(rows) and col <= len(rows[row - 1]) else None


def _fuzzy(rule: dict[str, Any], a: Book, sa: str, b: Book, sb: str) -> bool:
    from openpyxl.worksheet.cell_range import MultiCellRange

    for part in rule.get("rules", []):
        for rng in MultiCellRange(" ".join(part["range"])):
            for row, col in rng.cells:
                from openpyxl.utils import get_column_letter

                ref = f"{get_column_letter(col)}{row}"
                v1, v2 = _show(_cell(a, sa, ref)), _show(_cell(b, sb, ref))
                for old, new in part.get("normalization", []):
                    v1, v2 = v1.replace(old, new), v2.replace(old, new)
                if "trim_leadings" in part:
                    v1, v2 = v1.lstrip(part["trim_leadings"]), v2.lstrip(part["trim_leadings"])
                if "trim_trailings" in part:
                    v1 = v1.rstrip(part["trim_trailings"])
                    v2 = v2.rstrip(part["trim_trailings"])
                if "ignore_chars" in part:
                    drop = set(part["ignore_chars"])
                    v1 = "".join(c for c in v1 if c not in drop)
                    v2 = "".join(c for c in v2 if c not in drop)
                if part.get("ignore_case"):
                    v1, v2 = v1.lower(), v2.lower()
                kind = part.get("type", "exact_match")
                if kind == "includes":
                    ok = v2 in v1
                elif kind == "included_by":
                    ok = v1 in v2
                elif kind == "fuzzy_match":
                    ratio = 100 * difflib.SequenceMatcher(None, v1, v2).ratio()
                    ok = ratio >= float(part.get("threshold", 85.0))
                else:
                    ok = v1 == v2
                if not ok:
                    return False
    return True


def match_rule(value: Any, rule: dict[str, Any]) -> bool:
    """OSWorld's ``{method, ref}``: re[.FLAG…], eq, ne, le, lt, ge, gt, approx:THRESHOLD."""
    method, ref = str(rule.get("method", "eq")), rule.get("ref")
    if method.startswith("re"):
        flags = functools.reduce(
            operator.or_, (getattr(re, f) for f in method.split(".")[1:]), re.RegexFlag(0)
        )
        return re.search(str(ref), str(value if value is not None else ""), flags) is not None
    if method in ("eq", "ne", "le", "lt", "ge", "gt"):
        compare: Callable[[Any, Any], bool] = getattr(operator, method)
        try:
            return bool(compare(value, ref))
        except TypeError:
            return False
    if method == "spreadsheet_range":  # the range lies within ref[1] and covers ref[0]
        from openpyxl.worksheet.cell_range import CellRange

        try:
            got = CellRange(str(value).split()[0])
            inner, outer = CellRange(str(ref[0])), CellRange(str(ref[1]))  # type: ignore[index]
        except (ValueError, TypeError, IndexError):
            return False
        return bool(got.issuperset(inner) and got.issubset(outer))
    if method.startswith("approx:"):
        try:
            return abs(float(value) - float(ref)) <= float(method.split(":", 1)[1])  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
    raise ValueError(f"check_cell method {method!r} is not supported")


STYLE_PROPS = (
    "number_format",
    "font_name",
    "font_family",
    "font_color",
    "font_bold",
    "font_italic",
    "font_underline",
    "font_size",
    "fill_type",
    "bgcolor",
    "fgcolor",
    "horizontal_alignment",
    "vertical_alignment",
)


def _style(cell: Any, prop: str) -> Any:
    font, fill = cell.font, cell.fill
    styles: dict[str, Callable[[], Any]] = {
        "number_format": lambda: cell.number_format,
        "font_name": lambda: font.name,
        "font_family": lambda: font.family,
        "font_color": lambda: font.color.rgb if font.color is not None else None,
        "font_bold": lambda: font.bold,
        "font_italic": lambda: font.italic,
        "font_underline": lambda: font.underline,
        "font_size": lambda: font.size,
        "fill_type": lambda: fill.fill_type,
        "bgcolor": lambda: fill.fgColor.rgb if fill.fgColor is not None else None,
        "fgcolor": lambda: fill.fgColor.rgb if fill.fgColor is not None else None,
        "horizontal_alignment": lambda: cell.alignment.horizontal,
        "vertical_alignment": lambda: cell.alignment.vertical,
    }
    if prop not in styles:
        raise ValueError(f"check_cell property {prop!r} is not supported")
    return styles[prop]()


def _rich_text(title: Any) -> str | None:
    try:
        return str(title.tx.rich.p[0].r[0].t)
    except (AttributeError, IndexError, TypeError):
        return None


def _ref(data: Any) -> str:
    for kind in ("numRef", "strRef"):
        ref = getattr(data, kind, None)
        if ref is not None and getattr(ref, "f", None):
            return str(ref.f)
    return ""


def charts(book: Book, name: str, props: list[str]) -> dict[str, dict[str, Any]]:
    """A sheet's charts by their data (series and categories), with the properties asked."""
    if book.xl is None or name not in book.xl.sheetnames:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for chart in book.xl[name]._charts:
        key = ";".join(f"{_ref(s.val)},{_ref(s.cat)}" for s in chart.series)
        info: dict[str, Any] = {}
        getters: dict[str, Any] = {
            "title": lambda c: _rich_text(c.title),
            "legend": lambda c: c.legend.position if c.legend is not None else None,
            "anchor": lambda c: [
                c.anchor.editAs,
                c.anchor._from.col,
                c.anchor.to.row,
                c.anchor.to.col,
                c.anchor.to.row,
            ],
            "width": lambda c: c.width,
            "height": lambda c: c.height,
            "type": lambda c: c.tagname,
            "direction": lambda c: getattr(c, "barDir", None),
            "xtitle": lambda c: _rich_text(getattr(c.x_axis, "title", None)),
            "ytitle": lambda c: _rich_text(getattr(c.y_axis, "title", None)),
            "ztitle": lambda c: _rich_text(getattr(getattr(c, "z_axis", None), "title", None)),
        }
        for prop in props:
            try:
                info[prop] = getters[prop](chart)
            except AttributeError:
                info[prop] = None
        out[key] = info
    return out


def pivots(book: Book, name: str, props: list[str]) -> dict[str, dict[str, Any]]:
    """A sheet's pivot tables by their source range, with the properties asked."""
    if book.xl is None or name not in book.xl.sheetnames:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for pvt in book.xl[name]._pivots:
        fields = [[(i.h, i.x) for i in f.items if i.x is not None] for f in pvt.pivotFields]
        left = next((i for i, f in enumerate(fields) if f), len(fields))
        chosen = fields[left:]
        while chosen and not chosen[-1]:
            chosen.pop()
        src = pvt.cache.cacheSource
        ws_src = src.worksheetSource
        key = f"{src.type};{ws_src.ref if ws_src is not None else ''};" + (
            str(ws_src.sheet) if ws_src is not None else ""
        )
        info: dict[str, Any] = {}
        simple = {
            "name": "name",
            "show_total": "visualTotals",
            "show_empty_row": "showEmptyRow",
            "show_empty_col": "showEmptyCol",
            "show_headers": "showHeaders",
        }
        for prop, attr in simple.items():
            if prop in props:
                info[prop] = getattr(pvt, attr, None)
        if "location" in props:
            info["location"] = str(pvt.location.ref) if pvt.location is not None else None
        if "filter" in props or "selection" in props:
            info["selection"] = (
                chosen if "ordered" in props else [sorted(set(r), key=str) for r in chosen]
            )
        if "filter" in props:
            info["filter_fields"] = sorted(f.fld for f in pvt.pageFields)
        if "col_fields" in props:
            info["col_fields"] = [f.x - left for f in pvt.colFields]
        if "row_fields" in props:
            info["row_fields"] = [f.x - left for f in pvt.rowFields]
        if "data_fields" in props:
            named = "data_fields_name" in props
            info["data_fields"] = [
                f"{f.fld - left};{f.name if named else ''};{f.subtotal};{f.showDataAs}"
                for f in pvt.dataFields
            ]
        out[key] = info
    return out


def _styles(book: Book, name: str, props: list[str]) -> list[list[Any]] | None:
    if book.xl is None or name not in book.xl.sheetnames:
        return None
    return [[[_style(c, p) for p in props] for c in row] for row in book.xl[name].iter_rows()]


def _dimensions(book: Book, name: str, kind: str, props: list[str]) -> dict[Any, Any] | None:
    if book.xl is None or name not in book.xl.sheetnames:
        return None
    ws = book.xl[name]
    dims = ws.row_dimensions if kind == "row_props" else ws.column_dimensions
    return {key: {p: getattr(dim, p, None) for p in props} for key, dim in dims.items()}


def _dv(dv: Any, attr: str) -> Any:
    if attr == "ranges":
        return str(dv.sqref)
    return getattr(dv, attr, None)


def _rule(rule: dict[str, Any], result: Book, expected: Book | None) -> bool:
    kind = rule["type"]
    if kind == "sheet_name":
        return expected is not None and result.names == expected.names
    if kind in ("sheet_data", "sheet_print"):
        a, sa = _sheet(rule["sheet_idx0"], result, expected)
        b, sb = _sheet(rule["sheet_idx1"], result, expected)
        g1, g2 = a.grid(sa), b.grid(sb)
        if kind == "sheet_data":
            digits = int(rule.get("precision", 4))
            g1 = [[_round(v, digits) for v in r] for r in g1]
            g2 = [[_round(v, digits) for v in r] for r in g2]
        else:
            g1 = [[_show(v) for v in r] for r in g1]
            g2 = [[_show(v) for v in r] for r in g2]
        if rule.get("ignore_case"):
            g1 = [[v.lower() if isinstance(v, str) else v for v in r] for r in g1]
            g2 = [[v.lower() if isinstance(v, str) else v for v in r] for r in g2]
        return g1 == g2
    if kind == "sheet_fuzzy":
        a, sa = _sheet(rule["sheet_idx0"], result, expected)
        b, sb = _sheet(rule["sheet_idx1"], result, expected)
        return _fuzzy(rule, a, sa, b, sb)
    if kind == "check_cell":
        book, name = _sheet(rule["sheet_idx"], result, expected)
        for prop, want in rule["props"].items():
            if prop == "value":
                value = _cell(book, name, rule["coordinate"])
            else:
                if book.xl is None:
                    return False
                value = _style(book.xl[name][rule["coordinate"]], prop)
            if not match_rule(value, want):
                return False
        return True
    if kind == "freeze":
        a, sa = _sheet(rule["sheet_idx0"], result, expected)
        b, sb = _sheet(rule["sheet_idx1"], result, expected)
        if a.xl is None or b.xl is None:
            return False
        return bool(a.xl[sa].freeze_panes == b.xl[sb].freeze_panes)
    if kind == "zoom":
        book, name = _sheet(rule["sheet_idx"], result, expected)
        if book.xl is None:
            return False
        zoom = book.xl[name].sheet_view.zoomScale or 100
        return match_rule(zoom, {"method": rule.get("method", "eq"), "ref": rule.get("ref")})
    if kind in ("row_props", "col_props"):
        a, sa = _sheet(rule["sheet_idx0"], result, expected)
        b, sb = _sheet(rule["sheet_idx1"], result, expected)
        props = list(rule.get("props", []))
        return _dimensions(a, sa, kind, props) == _dimensions(b, sb, kind, props)
    if kind == "data_validation":
        book, name = _sheet(rule["sheet_idx"], result, expected)
        if book.xl is None or name not in book.xl.sheetnames:
            return False
        found = list(book.xl[name].data_validations.dataValidation)
        wanted = list(rule.get("dv_props", []))
        if len(found) < len(wanted):
            return False
        return all(
            any(
                all(match_rule(_dv(dv, attr), want) for attr, want in props.items())
                for props in wanted
            )
            for dv in found
        )
    if kind in ("chart", "pivot_table", "style"):
        a, sa = _sheet(rule["sheet_idx0"], result, expected)
        b, sb = _sheet(rule["sheet_idx1"], result, expected)
        if kind == "style":
            props = list(rule.get("props", []))
            return _styles(a, sa, props) == _styles(b, sb, props)
        read = charts if kind == "chart" else pivots
        props = list(rule.get("chart_props" if kind == "chart" else "pivot_props", []))
        got = read(a, sa, props)
        return bool(got) and got == read(b, sb, props)
    raise ValueError(f"compare_table rule {kind!r} is not supported")


def compare_table(result: Any, expected: Any, rules: list[dict[str, Any]] | None = None) -> float:
    """1 when every rule holds on the result workbook (and the expected one); 0 otherwise,
    also when the result is not a readable spreadsheet."""
    if isinstance(result, list):
        result = result[0] if result else None
    if result is None or not Path(str(result)).exists():
        raise FileNotFoundError(2, "no such file", str(result))
    try:
        got = Book(Path(str(result)))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, TypeError):
        return 0.0
    want = Book(Path(str(expected))) if expected is not None else None
    for rule in rules or []:
        try:
            if not _rule(rule, got, want):
                return 0.0
        except (KeyError, IndexError):  # a sheet the result does not have
            return 0.0
    return 1.0
