"""OSWorld's ``compare_pptx_files``: two presentations compared slide by slide with
python-pptx — the number of slides, each shape's place and size, its text paragraph by
paragraph, and each run's font (name, size, bold, italic, underline, colour). Each part can
be switched off with its ``examine_*`` option, as in OSWorld."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    if a == b:
        return True
    if a is None or b is None or a == 0 or b == 0:
        return False
    return abs(a - b) / max(abs(a), abs(b)) <= tolerance


def _color(font: Any) -> Any:
    try:
        return font.color.rgb if font.color is not None and font.color.type is not None else None
    except AttributeError:
        return None


def compare_pptx_files(
    result: Any,
    expected: Any,
    examine_number_of_slides: bool = True,
    examine_shape: bool = True,
    examine_text: bool = True,
    examine_indent: bool = True,
    examine_font_name: bool = True,
    examine_font_size: bool = True,
    examine_font_bold: bool = True,
    examine_font_italic: bool = True,
    examine_color_rgb: bool = True,
    examine_font_underline: bool = True,
    examine_alignment: bool = True,
    examine_bullets: bool = True,
    approximately_tolerance: float = 0.005,
    enable_debug: bool = False,
) -> float:
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    del enable_debug  # OSWorld's logging switch
    for value in (result, expected):
        if value is None or not Path(str(value)).exists():
            raise FileNotFoundError(2, "no such file", str(value))
    try:
        got = Presentation(str(result))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError):
        return 0.0
    want = Presentation(str(expected))
    if examine_number_of_slides and len(got.slides) != len(want.slides):
        return 0.0
    tol = approximately_tolerance
    for s1, s2 in zip(got.slides, want.slides, strict=False):
        shapes1, shapes2 = list(s1.shapes), list(s2.shapes)
        if examine_shape and len(shapes1) != len(shapes2):
            return 0.0
        for a, b in zip(shapes1, shapes2, strict=False):
            if examine_shape and not all(
                _close(getattr(a, k), getattr(b, k), tol)
                for k in ("left", "top", "width", "height")
            ):
                return 0.0
            if a.has_text_frame != b.has_text_frame:
                return 0.0
            if not a.has_text_frame:
                continue
            if examine_text and a.text_frame.text.strip() != b.text_frame.text.strip():
                return 0.0
            paras1, paras2 = a.text_frame.paragraphs, b.text_frame.paragraphs
            for p1, p2 in zip(paras1, paras2, strict=False):
                if examine_text and p1.text != p2.text:
                    return 0.0
                if examine_indent and p1.level != p2.level:
                    return 0.0
                if examine_alignment and p1.alignment != p2.alignment:
                    return 0.0
                runs1 = [r for r in p1.runs if r.text.strip()]
                runs2 = [r for r in p2.runs if r.text.strip()]
                if examine_bullets and len(runs1) != len(runs2):
                    return 0.0
                for r1, r2 in zip(runs1, runs2, strict=False):
                    f1, f2 = r1.font, r2.font
                    checks = (
                        (examine_font_name, f1.name, f2.name),
                        (examine_font_size, f1.size, f2.size),
                        (examine_font_bold, f1.bold, f2.bold),
                        (examine_font_italic, f1.italic, f2.italic),
                        (examine_font_underline, f1.underline, f2.underline),
                        (examine_color_rgb, _color(f1), _color(f2)),
                    )
                    if any(on and x != y for on, x, y in checks):
                        return 0.0
    return 1.0
