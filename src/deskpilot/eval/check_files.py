"""Checks of the files a trial leaves: text files, spreadsheet cells, document paragraphs, a
document's whole text (read from the file alone, with :mod:`deskpilot.eval.office`)."""

from __future__ import annotations

import math
import re
from pathlib import Path

from deskpilot.errors import CheckBroken, CheckFailed
from deskpilot.eval import office
from deskpilot.eval.check_env import CheckEnv, parse_number, require_strings, sha256_file, show
from deskpilot.eval.task import CellCheck, DocumentCheck, FileCheck, ParagraphCheck


def _text(path: Path) -> str:
    if not path.is_file():
        raise CheckFailed(f"{path} does not exist")
    return path.read_text(encoding="utf-8", errors="replace")


def check_file(c: FileCheck, env: CheckEnv) -> str:
    path = env.path(c.path)
    if not c.exists:
        if path.exists():
            raise CheckFailed(f"{path} exists")
        return f"{path} does not exist"
    raw = _text(path)
    text = raw if c.exact else raw.rstrip()
    if c.unchanged:
        before = env.written.get(str(path))
        if before is None:
            raise CheckBroken(f"{c.path}: 'unchanged' needs a file the setup wrote")
        if sha256_file(path) != before:
            raise CheckFailed(f"{path} was changed")
    if c.equals is not None:
        want = c.equals if c.exact else c.equals.rstrip()
        if text != want:
            raise CheckFailed(f"{path} holds {show(text)}, not {show(want)}")
    if c.lines is not None:
        got = [ln.rstrip() for ln in text.splitlines()]
        if got != [ln.rstrip() for ln in c.lines]:
            raise CheckFailed(f"{path} has lines {got[:12]!r}, not {c.lines!r}")
    if c.regex is not None and not re.search(c.regex, text, re.M):
        raise CheckFailed(f"{path} does not match /{c.regex}/")
    require_strings(text, c.contains, c.excludes, str(path))
    return f"{path} as expected ({len(raw)} characters)"


def check_cell(c: CellCheck, env: CheckEnv) -> str:
    path = env.path(c.path)
    cell = office.read_cell(path, c.cell, c.sheet)
    where = f"{path.name} {c.cell}"
    if c.value is not None:
        if isinstance(c.value, float | int) and not isinstance(c.value, bool):
            got = cell.value if isinstance(cell.value, float) else parse_number(cell.text)
            if got is None or math.isnan(got) or abs(got - float(c.value)) > c.tolerance:
                raise CheckFailed(f"{where} is {show(cell.text)}, not {c.value:g}")
        elif cell.text != c.value:
            raise CheckFailed(f"{where} is {show(cell.text)}, not {show(str(c.value))}")
    if c.formula is not None and c.formula.upper() not in cell.formula.upper():
        raise CheckFailed(f"{where}'s formula is {show(cell.formula)}, lacking {c.formula!r}")
    if c.bold is not None and cell.bold != c.bold:
        raise CheckFailed(f"{where} is {'' if cell.bold else 'not '}bold")
    return f"{where} = {show(cell.text)}" + (f" ({cell.formula})" if cell.formula else "")


def _norm(text: str) -> str:
    return " ".join(text.split())


def check_paragraph(c: ParagraphCheck, env: CheckEnv) -> str:
    path = env.path(c.path)
    paragraphs = office.read_paragraphs(path)
    # every selector given narrows the choice: index, then the whole text, then a part of it
    chosen = list(paragraphs)
    if c.index is not None:
        chosen = [paragraphs[c.index]] if -len(paragraphs) <= c.index < len(paragraphs) else []
    if c.text is not None:
        chosen = [p for p in chosen if _norm(p.text) == _norm(c.text)]
    if c.contains is not None:
        chosen = [p for p in chosen if c.contains in p.text]
    if c.index is None and c.text is None and c.contains is None:
        raise CheckBroken("a paragraph check names its paragraph: text, contains or index")
    if not chosen:
        shown = [_norm(p.text)[:40] for p in paragraphs if p.text.strip()][:8]
        which = ", ".join(
            f"{k} {v!r}"
            for k, v in (("index", c.index), ("text", c.text), ("contains", c.contains))
            if v is not None
        )
        raise CheckFailed(f"{path.name} has no paragraph with {which} (it has {shown!r})")
    para = chosen[0]
    if c.style is not None and para.style.casefold() != c.style.casefold():
        raise CheckFailed(f"the paragraph {show(para.text, 40)} has style {para.style!r}")
    for word, want in ((c.bold, True), (c.not_bold, False)):
        if word is None:
            continue
        bold = para.is_bold(word)
        if bold is None:
            raise CheckFailed(f"the paragraph {show(para.text, 40)} lacks {word!r}")
        if bold != want:
            raise CheckFailed(f"{word!r} is {'' if bold else 'not '}bold")
    return f"{path.name}: {show(para.text, 40)} ({para.style or 'no style'})"


def check_document(c: DocumentCheck, env: CheckEnv) -> str:
    path = env.path(c.path)
    require_strings(office.document_text(path), c.contains, c.excludes, path.name)
    return f"{path.name} has the text asked for"
