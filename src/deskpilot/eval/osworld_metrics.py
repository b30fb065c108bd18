"""OSWorld's metrics, written for deskpilot on the libraries made for each format.

A metric takes what the ``result`` getter read (a path, a command's output, a value), what the
``expected`` getter read (a gold file's path, or ``rules``) and its ``options``, and returns a
score in 0..1; deskpilot counts a check as holding only at 1 (OSWorld averages partial
scores; a partial score here is a failure, its value in the check's detail). The options each
metric accepts are its keyword parameters: any other option is refused when the task loads
(:func:`osworld_problems`), as is a ``compare_table`` rule it does not know.

Formats: XLSX with openpyxl, ODS/ODT with odfpy, DOCX with python-docx, PPTX with
python-pptx, images with Pillow, CSV and JSON with the standard library.
"""

from __future__ import annotations

import csv
import difflib
import inspect
import json
import math
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from deskpilot.errors import CheckBroken
from deskpilot.eval.osworld_files import file_kind

Metric = Callable[..., float]


def _path(value: Any) -> Path:
    if isinstance(value, list):  # a multi-file getter's first file
        value = value[0] if value else None
    if value is None:
        raise FileNotFoundError(2, "no file", "(none)")
    path = Path(str(value))
    if not path.exists():
        raise FileNotFoundError(2, "no such file", str(path))
    return path


def _text(value: Any) -> str:
    return _path(value).read_text(encoding="utf-8", errors="replace")


def _rules(expected: Any) -> dict[str, Any]:
    if not isinstance(expected, dict):
        raise CheckBroken("this metric needs a 'rule' getter as its expected value")
    return expected


def _score(ok: bool) -> float:
    return 1.0 if ok else 0.0


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


# -- text and values ---------------------------------------------------------------------------


def exact_match(result: Any, expected: Any) -> float:
    return _score(result == _rules(expected).get("expected"))


def literal_match(
    result: Any, expected: Any, type: str = "str", ignore_case: bool = False
) -> float:
    want = _rules(expected).get("expected")
    if type == "list" and isinstance(result, list) and isinstance(want, list):
        got, want = [str(x) for x in result], [str(x) for x in want]
        if ignore_case:
            got, want = [x.lower() for x in got], [x.lower() for x in want]
        return _score(got == want)
    got_s, want_s = str(result), str(want)
    return _score(got_s.lower() == want_s.lower() if ignore_case else got_s == want_s)


def check_include_exclude(result: Any, expected: Any) -> float:
    rules = _rules(expected)
    text = str(result or "")
    return _score(
        all(s in text for s in rules.get("include", []))
        and not any(s in text for s in rules.get("exclude", []))
    )


def match_in_list(result: Any, expected: Any) -> float:
    return _score(result in (_rules(expected).get("expected") or []))


def is_in_list(result: Any, expected: Any) -> float:
    return _score(_rules(expected).get("expected") in (result or []))


def fuzzy_match(result: Any, expected: Any) -> float:
    return _ratio(str(result or ""), str(_rules(expected).get("expected", "")))


def file_contains(result: Any, expected: Any) -> float:
    text = _text(result)
    return _score(all(s in text for s in _rules(expected).get("expected", [])))


def check_line_number(result: Any, expected: Any) -> float:
    want = int(_rules(expected).get("expected", -1))
    return _score(len(_text(result).splitlines()) == want)


def compare_text_file(
    result: Any, expected: Any, ignore_blanks: bool = False, ignore_case: bool = False
) -> float:
    got, want = _text(result), _text(expected)
    if ignore_blanks:
        got, want = re.sub(r"[\t\n ]", "", got), re.sub(r"[\t\n ]", "", want)
    if ignore_case:
        got, want = got.lower(), want.lower()
    return _score(got == want)


def diff_text_file(result: Any, expected: Any) -> float:
    return _ratio(_text(result), _text(expected))


def _json_value(result: Any) -> Any:
    if isinstance(result, str):
        text = result.strip()
        try:
            return json.loads(text)
        except ValueError:
            try:
                return json.loads(text.replace("'", '"'))
            except ValueError:
                return None
    return result


def check_direct_json_object(result: Any, expected: Any) -> float:
    """The JSON object the result printed holds the expected keys and values (with
    ``expect_in_result``: a value of the result contains the expected text, or one of the
    listed values)."""
    rules = _rules(expected)
    got = _json_value(result)
    want = rules.get("expected") or {}
    if not isinstance(got, dict) or not isinstance(want, dict):
        return 0.0
    for key, value in want.items():
        if key == "ignore_list_order":
            continue
        have = got.get(key)
        if rules.get("expect_in_result"):
            if isinstance(value, list):
                if not any(v == have or (isinstance(have, list) and v in have) for v in value):
                    return 0.0
            elif isinstance(value, str):
                if not isinstance(have, str) or value not in have:
                    return 0.0
            elif have != value:
                return 0.0
        elif want.get("ignore_list_order") and isinstance(value, list):
            if not isinstance(have, list) or sorted(map(str, have)) != sorted(map(str, value)):
                return 0.0
        elif have != value:
            return 0.0
    return 1.0


def check_json(result: Any, expected: Any, is_yaml: bool = False) -> float:
    """Rules ``expect``/``unexpect``: lists of {key: [path…], method: eq|ne|re, ref: value}."""
    if is_yaml:
        raise CheckBroken("check_json with is_yaml needs a YAML reader, which deskpilot lacks")
    try:
        data = json.loads(_text(result))
    except ValueError:
        return 0.0
    rules = _rules(expected)

    def holds(rule: dict[str, Any]) -> bool:
        value = data
        for key in rule["key"]:
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                return False
        method, ref = rule.get("method", "eq"), rule.get("ref")
        if method == "re":
            return re.search(str(ref), str(value)) is not None
        return bool(value == ref) if method == "eq" else bool(value != ref)

    return _score(
        all(holds(r) for r in rules.get("expect", []))
        and not any(holds(r) for r in rules.get("unexpect", []))
    )


def check_list(result: Any, expected: Any) -> float:
    """Rules ``expect``/``unexpect``: regexes each of which some line must (must not) match."""
    rules = _rules(expected)
    lines = _text(result).splitlines()
    expect = [re.compile(p) for p in rules.get("expect", [])]
    unexpect = [re.compile(p) for p in rules.get("unexpect", [])]
    return _score(
        all(any(p.search(line) for line in lines) for p in expect)
        and not any(p.search(line) for p in unexpect for line in lines)
    )


# -- CSV ---------------------------------------------------------------------------------------


def _csv_rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        return [row for row in csv.reader(fh)]


def compare_csv(result: Any, expected: Any, ignore_case: bool = False) -> float:
    def norm(rows: list[list[str]]) -> list[list[str]]:
        out = [[c.strip() for c in row] for row in rows]
        out = [row for row in out if any(row)]
        return [[c.lower() for c in row] for row in out] if ignore_case else out

    return _score(norm(_csv_rows(_path(result))) == norm(_csv_rows(_path(expected))))


def check_csv(result: Any, expected: Any) -> float:
    """Rules ``expect``/``unexpect``: lists of {column: value} a row must (must not) match."""
    rules = _rules(expected)
    with _path(result).open(encoding="utf-8", errors="replace", newline="") as fh:
        rows = list(csv.DictReader(fh))

    def found(rule: dict[str, Any]) -> bool:
        return any(all(str(row.get(k)) == str(v) for k, v in rule.items()) for row in rows)

    return _score(
        all(found(r) for r in rules.get("expect", []))
        and not any(found(r) for r in rules.get("unexpect", []))
    )


# -- spreadsheets ------------------------------------------------------------------------------


from deskpilot.eval.osworld_sheets import (  # noqa: E402
    CHART_PROPS,
    DIMENSION_PROPS,
    DV_PROPS,
    PIVOT_PROPS,
    STYLE_PROPS,
    TABLE_RULES,
    compare_table,
)

# -- documents ---------------------------------------------------------------------------------


def _paragraphs(path: Path) -> list[str]:
    suffix = file_kind(path)
    if suffix == ".docx":
        from docx import Document

        try:
            return [p.text for p in Document(str(path)).paragraphs]
        except (zipfile.BadZipFile, KeyError, ValueError):
            return []
    if suffix == ".odt":
        from odf import teletype
        from odf.opendocument import load
        from odf.text import P

        try:
            doc = load(str(path))
        except (zipfile.BadZipFile, KeyError, ValueError):
            return []
        return [teletype.extractText(p) for p in doc.getElementsByType(P)]
    return _text(path).splitlines()


def compare_docx_files(
    result: Any,
    expected: Any,
    ignore_blanks: bool = True,
    ignore_case: bool = False,
    ignore_order: bool = False,
    content_only: bool = False,
    fuzzy_match: bool = False,
    delete_empty_lines: bool = False,
) -> float:
    got_path, want_path = _path(result), _path(expected)
    if file_kind(got_path) != file_kind(want_path):
        return 0.0
    got, want = _paragraphs(got_path), _paragraphs(want_path)
    if ignore_order:
        got, want = sorted(got), sorted(want)
    if delete_empty_lines:
        got, want = [p for p in got if p.strip()], [p for p in want if p.strip()]
    if content_only or ignore_blanks:
        a = re.sub(r"\s+", " ", "\n".join(got)).strip()
        b = re.sub(r"\s+", " ", "\n".join(want)).strip()
        if ignore_case:
            a, b = a.lower(), b.lower()
        if content_only or fuzzy_match:
            return _ratio(a, b)
        return _score(a == b)
    if len(got) != len(want):
        return 0.0
    if ignore_case:
        got, want = [p.lower() for p in got], [p.lower() for p in want]
    if fuzzy_match:
        return min((_ratio(a, b) for a, b in zip(got, want, strict=True)), default=1.0)
    return _score(got == want)


def compare_docx_files_and_ignore_new_lines(
    result: Any, expected: Any, ignore_blanks: bool = True
) -> float:
    return compare_docx_files(
        result, expected, ignore_blanks=ignore_blanks, delete_empty_lines=True
    )


def compare_docx_tables(result: Any, expected: Any) -> float:
    from docx import Document

    def tables(path: Path) -> list[list[list[str]]]:
        return [
            [[c.text.strip() for c in row.cells] for row in t.rows]
            for t in Document(str(path)).tables
        ]

    return _score(tables(_path(result)) == tables(_path(expected)))


def compare_line_spacing(result: Any, expected: Any) -> float:
    from docx import Document

    def spacing(path: Path) -> list[tuple[str, Any]]:
        return [(p.text, p.paragraph_format.line_spacing) for p in Document(str(path)).paragraphs]

    return _score(spacing(_path(result)) == spacing(_path(expected)))


# -- slides ------------------------------------------------------------------------------------


from deskpilot.eval.osworld_chrome import GETTERS as CHROME_GETTERS  # noqa: E402
from deskpilot.eval.osworld_chrome import (  # noqa: E402
    check_enabled_experiments,
    check_font_size,
    is_expected_active_tab,
    is_expected_bookmarks,
    is_expected_tabs,
    is_expected_url_pattern_match,
)
from deskpilot.eval.osworld_images import METRICS as IMAGE_METRICS  # noqa: E402
from deskpilot.eval.osworld_slides import compare_pptx_files  # noqa: E402

# -- images and archives -----------------------------------------------------------------------


def compare_images(result: Any, expected: Any) -> float:
    from PIL import Image, ImageChops

    with Image.open(_path(result)) as a, Image.open(_path(expected)) as b:
        if a.size != b.size:
            return 0.0
        return _score(ImageChops.difference(a.convert("RGBA"), b.convert("RGBA")).getbbox() is None)


def check_image_size(result: Any, expected: Any) -> float:
    from PIL import Image

    rules = _rules(expected)
    with Image.open(_path(result)) as img:
        width, height = img.size
    return _score(rules.get("width", width) == width and rules.get("height", height) == height)


def compare_zip_files(result: Any, expected: Any) -> float:
    def content(path: Path) -> dict[str, bytes]:
        try:
            with zipfile.ZipFile(path) as z:
                return {n: z.read(n) for n in z.namelist() if not n.endswith("/")}
        except zipfile.BadZipFile:
            return {}

    got = content(_path(result))
    return _score(bool(got) and got == content(_path(expected)))


# -- app settings (GIMP's and VLC's configuration files) ---------------------------------------


def check_config_status(result: Any, expected: Any) -> float:
    """A GIMP settings file holds ``(key … value)``: rules ``key`` (a word, or two) and
    ``value``."""
    rules = _rules(expected)
    keys = rules.get("key")
    keys = [keys] if isinstance(keys, str) else list(keys or [])
    for line in _text(result).splitlines():
        if line.startswith("#") or not line.strip():
            continue
        items = line.strip().lstrip("(").rstrip(")").split()
        if items[: len(keys)] == keys and items[-1] == str(rules.get("value")):
            return 1.0
    return 0.0


def _vlcrc(path: Any, key: str, default: str) -> str:
    """The last value of ``key=`` in VLC's vlcrc (its commented default counts, as in
    OSWorld), else ``default``."""
    value = default
    for line in _text(path).splitlines():
        if f"{key}=" in line:
            value = line.split("=")[-1].strip()
    return value


def _vlc_metric(key: str, rule_key: str, default: str) -> Metric:
    def metric(result: Any, expected: Any) -> float:
        want = _rules(expected).get(rule_key)
        return _score(_vlcrc(result, key, default) == str(want))

    return metric


def is_vlc_recordings_folder(result: Any, expected: Any) -> float:
    want = str(_rules(expected).get("recording_file_path", ""))
    for line in _text(result).splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if "input-record-path" in line:
            return _score(line.split("=")[-1].strip() == want)
    return 0.0


VLC_METRICS: dict[str, Metric] = {
    "check_qt_bgcone": _vlc_metric("qt-bgcone", "expected_qt_bgcone", "1"),
    "check_qt_max_volume": _vlc_metric("qt-max-volume", "expected_qt_max_volume", "125"),
    "check_qt_minimal_view": _vlc_metric("qt-minimal-view", "expected_qt_minimal_view", "0"),
    "check_one_instance_when_started_from_file": _vlc_metric(
        "one-instance-when-started-from-file",
        "expected_one_instance_when_started_from_file",
        "1",
    ),
    "check_global_key_play_pause": _vlc_metric(
        "global-key-play-pause", "expected_global_key_play_pause", "0"
    ),
}


#: every metric deskpilot has, by OSWorld's name
METRICS: dict[str, Metric] = (
    {
        f.__name__: f
        for f in (
            exact_match,
            literal_match,
            check_include_exclude,
            match_in_list,
            is_in_list,
            fuzzy_match,
            file_contains,
            check_line_number,
            compare_text_file,
            diff_text_file,
            check_direct_json_object,
            check_json,
            check_list,
            compare_csv,
            check_csv,
            compare_table,
            compare_docx_files,
            compare_docx_files_and_ignore_new_lines,
            compare_docx_tables,
            compare_line_spacing,
            compare_pptx_files,
            compare_images,
            check_image_size,
            compare_zip_files,
            check_config_status,
            is_vlc_recordings_folder,
            is_expected_active_tab,
            is_expected_url_pattern_match,
            is_expected_tabs,
            is_expected_bookmarks,
            check_enabled_experiments,
            check_font_size,
        )
    }
    | VLC_METRICS
    | IMAGE_METRICS
)
#: metrics whose expected value is a rule (the others compare two files or values)
RULE_METRICS = frozenset(
    {
        "exact_match",
        "literal_match",
        "check_include_exclude",
        "match_in_list",
        "is_in_list",
        "fuzzy_match",
        "file_contains",
        "check_line_number",
        "check_direct_json_object",
        "check_json",
        "check_list",
        "check_csv",
        "check_image_size",
        "check_config_status",
        "is_vlc_recordings_folder",
        *VLC_METRICS,
        "is_expected_active_tab",
        "is_expected_url_pattern_match",
        "is_expected_tabs",
        "is_expected_bookmarks",
        "check_enabled_experiments",
        "check_font_size",
    }
)
#: getters deskpilot reads (see :mod:`deskpilot.eval.check_live`)
GETTERS = (
    "vm_file",
    "cloud_file",
    "cache_file",
    "vm_command_line",
    "vm_command_error",
    "rule",
    "vlc_config",
    "gimp_config_file",
    *CHROME_GETTERS,
)


def options_of(func: str) -> list[str]:
    """The options a metric accepts (its keyword parameters after result and expected)."""
    params = list(inspect.signature(METRICS[func]).parameters)
    return [p for p in params[2:] if p not in ("args", "kwargs")]


def osworld_problems(check: Any) -> Iterator[str]:
    """What is wrong with an ``osworld`` check, found at load."""
    if check.func not in METRICS:
        yield (
            f"OSWorld metric {check.func!r} is not supported (supported: "
            f"{', '.join(sorted(METRICS))})"
        )
        return
    allowed = options_of(check.func)
    for key in check.options:
        if key not in allowed:
            yield (
                f"{check.func} has no option {key!r} (its options: {', '.join(allowed) or 'none'})"
            )
    if check.func == "compare_table":
        yield from _table_rule_problems(check.options.get("rules"))
    if check.func == "check_json" and check.options.get("is_yaml"):
        yield "check_json with is_yaml (YAML files) is not supported"
    for role, spec in (("result", check.result), ("expected", check.expected)):
        if spec is None:
            if role == "expected" and check.func in RULE_METRICS:
                yield f"{check.func} needs an expected 'rule'"
            continue
        if spec.get("type") not in GETTERS:
            yield (
                f"{role}: OSWorld getter {spec.get('type')!r} is not supported (supported: "
                f"{', '.join(GETTERS)})"
            )
    if check.func in RULE_METRICS and check.expected and check.expected.get("type") != "rule":
        yield f"{check.func} compares with a 'rule', not a {check.expected.get('type')!r}"


def _table_rule_problems(rules: Any) -> Iterator[str]:
    if not isinstance(rules, list) or not rules:
        yield "compare_table needs options.rules (a list)"
        return
    for i, rule in enumerate(rules):
        kind = rule.get("type") if isinstance(rule, dict) else None
        if kind not in TABLE_RULES:
            yield (
                f"compare_table rule {i}: {kind!r} is not supported (supported: "
                f"{', '.join(TABLE_RULES)})"
            )
            continue
        unknown = set(rule) - {"type"} - set(TABLE_RULES[kind])
        if unknown:
            yield f"compare_table rule {i} ({kind}) has no key {sorted(unknown)[0]!r}"
        for key, known in (("chart_props", CHART_PROPS), ("pivot_props", PIVOT_PROPS)):
            bad = [p for p in rule.get(key, []) if p not in known]
            if bad:
                yield (
                    f"compare_table rule {i} ({kind}): {key} {bad[0]!r} is not supported "
                    f"(supported: {', '.join(known)})"
                )
        if kind in ("row_props", "col_props"):
            bad = [p for p in rule.get("props", []) if p not in DIMENSION_PROPS]
            if bad:
                yield f"compare_table rule {i} ({kind}): property {bad[0]!r} is not supported"
        if kind == "data_validation":
            bad = [a for props in rule.get("dv_props", []) for a in props if a not in DV_PROPS]
            if bad:
                yield f"compare_table rule {i} (data_validation): {bad[0]!r} is not supported"
        if kind in ("check_cell", "style"):
            props = rule.get("props", {})
            names = props if isinstance(props, list) else list(props)
            bad = [p for p in names if p != "value" and p not in STYLE_PROPS]
            if bad:
                yield (
                    f"compare_table rule {i} ({kind}): property {bad[0]!r} is not "
                    f"supported (supported: value, {', '.join(STYLE_PROPS)})"
                )


def score(func: str, result: Any, expected: Any, options: dict[str, Any]) -> float:
    value = float(METRICS[func](result, expected, **options))
    return 0.0 if math.isnan(value) else value
