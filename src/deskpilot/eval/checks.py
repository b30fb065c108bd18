"""Checkers: read a trial's end state through channels the agent's tools do not use.

===========  ===================================================================================
kind         reads
===========  ===================================================================================
file         a file's text: ``equals``, ``contains``, ``excludes``, ``lines``, ``regex``,
             ``exists = false``, ``unchanged`` (as setup wrote it)
cell         a spreadsheet cell (ODS, XLSX, CSV): ``value`` (number within ``tolerance``, or
             text), ``formula`` (a part of it), ``bold``
paragraph    a text document's paragraph (ODT, DOCX), chosen by ``text``, ``contains`` or
             ``index``: its ``style`` ("Heading 1"), ``bold``/``not_bold`` words
document     a document's whole text: ``contains``, ``excludes``
window       window titles over a separate X11 connection: ``title`` regex, ``absent``
atspi        a running app's nodes, read by a separate pyatspi reader (not deskpilot's snapshot
             engine): ``app``, ``role``, ``name``/``name_re``, then ``text``/``text_re``/
             ``number``/``value``/``states``, ``count``
output       a launched process's exit code and stdout (setup ``capture``)
http         the loopback server's request log: ``method``, ``path``/``path_re``, ``form``,
             ``query``, ``count``
command      a command's stdout and exit code at check time
osworld      an OSWorld getter + metric (:mod:`deskpilot.eval.osworld`)
all/any/not  compose checks (``of``)
===========  ===================================================================================

A check that does not hold raises :class:`CheckFailed` (the trial fails); one that cannot read
the state raises :class:`CheckBroken` or any other error (the trial is a *checker error*, never
counted as the agent's failure).
"""

from __future__ import annotations

import hashlib
import math
import re
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deskpilot._wait import WaitTimeout, wait_for
from deskpilot.errors import CheckBroken, CheckFailed
from deskpilot.eval import office, osworld
from deskpilot.eval.atspi_check import probe_nodes
from deskpilot.eval.server import RequestLog
from deskpilot.eval.task import (
    AllCheck,
    AnyCheck,
    AtspiCheck,
    CellCheck,
    Check,
    CommandCheck,
    DocumentCheck,
    FileCheck,
    HttpCheck,
    NotCheck,
    OsworldCheck,
    OutputCheck,
    ParagraphCheck,
    WindowCheck,
)
from deskpilot.eval.xwindows import window_titles


@dataclass
class Captured:
    """A process started by setup with ``capture``: its Popen and where its stdout goes."""

    proc: subprocess.Popen[bytes]
    stdout: Path


@dataclass
class CheckEnv:
    """What checkers may look at; none of it is the agent's tools or words."""

    home: Path
    app_env: Mapping[str, str]
    display: str
    variables: dict[str, str] = field(default_factory=dict)
    http: RequestLog | None = None
    captured: dict[str, Captured] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # path → sha256 written by setup

    def expand(self, text: str) -> str:
        for name, value in self.variables.items():
            text = text.replace("{" + name + "}", value)
        return text

    def path(self, text: str) -> Path:
        text = self.expand(text)
        if text == "~" or text.startswith("~/"):
            return self.home / text[2:]
        path = Path(text)
        return path if path.is_absolute() else self.home / path


@dataclass
class CheckResult:
    kind: str
    ok: bool
    detail: str
    of: list[CheckResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "ok": self.ok, "detail": self.detail}
        if self.of:
            out["of"] = [c.to_dict() for c in self.of]
        return out


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _show(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _text(path: Path) -> str:
    if not path.is_file():
        raise CheckFailed(f"{path} does not exist")
    return path.read_text(encoding="utf-8", errors="replace")


def _strings(text: str, contains: list[str], excludes: list[str], what: str) -> None:
    missing = [s for s in contains if s not in text]
    if missing:
        raise CheckFailed(f"{what} lacks {', '.join(map(_show, missing))}")
    present = [s for s in excludes if s in text]
    if present:
        raise CheckFailed(f"{what} contains {', '.join(map(_show, present))}")


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
            raise CheckFailed(f"{path} holds {_show(text)}, not {_show(want)}")
    if c.lines is not None:
        got = [ln.rstrip() for ln in text.splitlines()]
        if got != [ln.rstrip() for ln in c.lines]:
            raise CheckFailed(f"{path} has lines {got[:12]!r}, not {c.lines!r}")
    if c.regex is not None and not re.search(c.regex, text, re.M):
        raise CheckFailed(f"{path} does not match /{c.regex}/")
    _strings(text, c.contains, c.excludes, str(path))
    return f"{path} as expected ({len(raw)} characters)"


def _number(text: str) -> float | None:
    cleaned = re.sub(r"[\s\u2009\u202f\xa0,]", "", text).replace("−", "-")
    try:
        return float(cleaned)
    except ValueError:
        return None


def check_cell(c: CellCheck, env: CheckEnv) -> str:
    path = env.path(c.path)
    cell = office.read_cell(path, c.cell, c.sheet)
    where = f"{path.name} {c.cell}"
    if c.value is not None:
        if isinstance(c.value, float | int) and not isinstance(c.value, bool):
            got = cell.value if isinstance(cell.value, float) else _number(cell.text)
            if got is None or math.isnan(got) or abs(got - float(c.value)) > c.tolerance:
                raise CheckFailed(f"{where} is {_show(cell.text)}, not {c.value:g}")
        elif cell.text != c.value:
            raise CheckFailed(f"{where} is {_show(cell.text)}, not {_show(str(c.value))}")
    if c.formula is not None and c.formula.upper() not in cell.formula.upper():
        raise CheckFailed(f"{where}'s formula is {_show(cell.formula)}, lacking {c.formula!r}")
    if c.bold is not None and cell.bold != c.bold:
        raise CheckFailed(f"{where} is {'' if cell.bold else 'not '}bold")
    return f"{where} = {_show(cell.text)}" + (f" ({cell.formula})" if cell.formula else "")


def _norm(text: str) -> str:
    return " ".join(text.split())


def check_paragraph(c: ParagraphCheck, env: CheckEnv) -> str:
    path = env.path(c.path)
    paragraphs = office.read_paragraphs(path)
    if c.index is not None:
        chosen = [paragraphs[c.index]] if c.index < len(paragraphs) else []
    elif c.text is not None:
        chosen = [p for p in paragraphs if _norm(p.text) == _norm(c.text)]
    elif c.contains is not None:
        chosen = [p for p in paragraphs if c.contains in p.text]
    else:
        raise CheckBroken("a paragraph check names its paragraph: text, contains or index")
    if not chosen:
        shown = [_norm(p.text)[:40] for p in paragraphs if p.text.strip()][:8]
        raise CheckFailed(f"{path.name} has no such paragraph (it has {shown!r})")
    para = chosen[0]
    if c.style is not None and para.style.casefold() != c.style.casefold():
        raise CheckFailed(f"the paragraph {_show(para.text, 40)} has style {para.style!r}")
    for word, want in ((c.bold, True), (c.not_bold, False)):
        if word is None:
            continue
        bold = para.is_bold(word)
        if bold is None:
            raise CheckFailed(f"the paragraph {_show(para.text, 40)} lacks {word!r}")
        if bold != want:
            raise CheckFailed(f"{word!r} is {'' if bold else 'not '}bold")
    return f"{path.name}: {_show(para.text, 40)} ({para.style or 'no style'})"


def check_document(c: DocumentCheck, env: CheckEnv) -> str:
    path = env.path(c.path)
    _strings(office.document_text(path), c.contains, c.excludes, path.name)
    return f"{path.name} has the text asked for"


def check_window(c: WindowCheck, env: CheckEnv) -> str:
    titles = window_titles(env.display)
    pattern = re.compile(env.expand(c.title))
    found = [t for t in titles if pattern.search(t)]
    if c.absent and found:
        raise CheckFailed(f"a window is titled {found[0]!r}")
    if not c.absent and not found:
        raise CheckFailed(f"no window title matches /{c.title}/ (titles: {titles[:8]!r})")
    return f"window titles: {titles[:8]!r}"


def check_atspi(c: AtspiCheck, env: CheckEnv) -> str:
    nodes = probe_nodes(c.app, env.app_env)

    def matches(n: Mapping[str, Any]) -> bool:
        role = str(n.get("role", "")).replace(" ", "-")
        if c.role is not None and role != c.role.replace(" ", "-"):
            return False
        if c.name is not None and n.get("name") != c.name:
            return False
        return c.name_re is None or re.search(c.name_re, str(n.get("name", ""))) is not None

    def holds(n: Mapping[str, Any]) -> bool:
        text = str(n.get("text") or "")
        if c.text is not None and text.strip() != c.text:
            return False
        if c.text_re is not None and not re.search(c.text_re, text):
            return False
        if c.number is not None:
            got = _number(text)
            if got is None or abs(got - c.number) > 1e-9 * max(1.0, abs(c.number)):
                return False
        if c.value is not None and n.get("value") != c.value:
            return False
        return set(c.states) <= set(n.get("states", []))

    candidates = [n for n in nodes if matches(n)]
    good = [n for n in candidates if holds(n)]
    if c.count is not None:
        if len(good) != c.count:
            raise CheckFailed(f"{len(good)} node(s) match in {c.app!r}, not {c.count}")
        return f"{len(good)} node(s) match"
    if not good:
        seen = [(n.get("name"), str(n.get("text") or "")[:30]) for n in candidates[:5]]
        raise CheckFailed(f"no node of {c.app!r} matches; candidates: {seen!r}")
    return f"{len(good)} node(s) match; first text {_show(str(good[0].get('text') or ''))}"


OUTPUT_GRACE_S = 0.5


def check_output(c: OutputCheck, env: CheckEnv) -> str:
    if c.of not in env.captured:
        raise CheckBroken(f"no launched process is captured as {c.of!r}")
    cap = env.captured[c.of]
    try:  # a dialog closed by the agent's last click exits a moment later
        wait_for(lambda: cap.proc.poll() is not None, timeout=OUTPUT_GRACE_S, what="exit")
    except WaitTimeout:
        raise CheckFailed(f"{c.of} is still running (it was not closed)") from None
    code = cap.proc.returncode
    out = cap.stdout.read_text(encoding="utf-8", errors="replace").strip()
    if c.exit_code is not None and code != c.exit_code:
        raise CheckFailed(f"{c.of} exited with {code}, not {c.exit_code} (stdout {_show(out)})")
    if c.stdout is not None and out != env.expand(c.stdout):
        raise CheckFailed(f"{c.of} printed {_show(out)}, not {_show(env.expand(c.stdout))}")
    if c.stdout_re is not None and not re.search(c.stdout_re, out):
        raise CheckFailed(f"{c.of} printed {_show(out)}, not matching /{c.stdout_re}/")
    return f"{c.of} exited with {code} and printed {_show(out)}"


def _fields(want: Mapping[str, str | list[str]], got: Mapping[str, list[str]]) -> bool:
    for key, value in want.items():
        if got.get(key) != (value if isinstance(value, list) else [value]):
            return False
    return True


def check_http(c: HttpCheck, env: CheckEnv) -> str:
    if env.http is None:
        raise CheckBroken("an http check needs a 'serve' setup step")
    entries = env.http.snapshot()

    def matches(e: Mapping[str, Any]) -> bool:
        if c.method is not None and e["method"] != c.method.upper():
            return False
        if c.path is not None and e["path"] != env.expand(c.path):
            return False
        if c.path_re is not None and not re.search(c.path_re, e["path"]):
            return False
        if any(name in e["form"] for name in c.without):
            return False
        return _fields(c.form, e["form"]) and _fields(c.query, e["query"])

    found = [e for e in entries if matches(e)]
    if c.count is not None and len(found) != c.count:
        raise CheckFailed(f"{len(found)} matching request(s), not {c.count}")
    if c.count is None and not found:
        seen = [f"{e['method']} {e['path']} {e['form'] or ''}" for e in entries[-5:]]
        raise CheckFailed(f"no matching request; the last ones: {seen!r}")
    return f"{len(found)} matching request(s) of {len(entries)}"


def run_command(argv: list[str], env: CheckEnv) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [env.expand(a) for a in argv],
            env=dict(env.app_env),
            cwd=env.home,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except FileNotFoundError as exc:
        raise CheckBroken(f"cannot run {argv[0]!r}: not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise CheckBroken(f"{argv[0]} did not finish within 30 s") from exc


def check_command(c: CommandCheck, env: CheckEnv) -> str:
    done = run_command(c.run, env)
    out = done.stdout.strip()
    if c.exit_code is not None and done.returncode != c.exit_code:
        raise CheckFailed(f"{c.run[0]} exited with {done.returncode}, not {c.exit_code}")
    if c.stdout is not None and out != env.expand(c.stdout):
        raise CheckFailed(f"{c.run[0]} printed {_show(out)}, not {_show(env.expand(c.stdout))}")
    if c.stdout_re is not None and not re.search(c.stdout_re, out):
        raise CheckFailed(f"{c.run[0]} printed {_show(out)}, not matching /{c.stdout_re}/")
    _strings(out, c.contains, c.excludes, f"the output of {c.run[0]}")
    return f"{c.run[0]} printed {_show(out)}"


def _osworld_get(spec: Mapping[str, Any], env: CheckEnv) -> Any:
    kind = spec["type"]
    if kind in ("vm_file", "cloud_file"):
        return env.path(str(spec.get("path", "")))
    if kind == "rule":
        return spec.get("rules", {})
    command = spec.get("command")
    argv = ["sh", "-c", command] if isinstance(command, str) else list(command or [])
    if not argv:
        raise CheckBroken(f"{kind} needs a command")
    done = run_command([str(a) for a in argv], env)
    return done.stdout if kind == "vm_command_line" else done.stderr


def check_osworld(c: OsworldCheck, env: CheckEnv) -> str:
    result = _osworld_get(c.result, env)
    expected = _osworld_get(c.expected, env) if c.expected else None
    try:
        ok = osworld.METRICS[c.func](result, expected, **c.options)
    except FileNotFoundError as exc:  # OSWorld scores a missing file 0
        raise CheckFailed(f"{c.func}: {exc.filename} does not exist") from None
    if not ok:
        raise CheckFailed(f"{c.func} scored 0 on {_show(str(result), 60)}")
    return f"{c.func} scored 1"


Checker = Callable[[Any, CheckEnv], str]
CHECKERS: dict[type, Checker] = {
    FileCheck: check_file,
    CellCheck: check_cell,
    ParagraphCheck: check_paragraph,
    DocumentCheck: check_document,
    WindowCheck: check_window,
    AtspiCheck: check_atspi,
    OutputCheck: check_output,
    HttpCheck: check_http,
    CommandCheck: check_command,
    OsworldCheck: check_osworld,
}


def evaluate(check: Check, env: CheckEnv) -> CheckResult:
    """One check's result; CheckBroken (or any bug) propagates: that is a checker error."""
    if isinstance(check, AllCheck | AnyCheck):
        parts = [evaluate(c, env) for c in check.of]
        ok = all(p.ok for p in parts) if isinstance(check, AllCheck) else any(p.ok for p in parts)
        held = sum(p.ok for p in parts)
        return CheckResult(check.kind, ok, f"{held} of {len(parts)} hold", parts)
    if isinstance(check, NotCheck):
        inner = evaluate(check.of, env)
        return CheckResult("not", not inner.ok, f"not: {inner.detail}", [inner])
    try:
        return CheckResult(check.kind, True, CHECKERS[type(check)](check, env))
    except CheckFailed as exc:
        return CheckResult(check.kind, False, str(exc))


def evaluate_all(checks: list[Check], env: CheckEnv) -> tuple[bool, list[CheckResult], float]:
    start = time.perf_counter()
    results = [evaluate(c, env) for c in checks]
    return all(r.ok for r in results), results, time.perf_counter() - start
