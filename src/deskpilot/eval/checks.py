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
osworld      an OSWorld getter + metric (:mod:`deskpilot.eval.osworld_metrics`)
answer       the agent's final answer: ``infeasible`` (it said the task cannot be done),
             ``contains``, ``regex``
all/any/not  compose checks (``of``)
===========  ===================================================================================

Checkers live in :mod:`~deskpilot.eval.check_files` (saved files) and
:mod:`~deskpilot.eval.check_live` (the live session); what they may look at is
:class:`~deskpilot.eval.check_env.CheckEnv`. A check that does not hold raises
:class:`CheckFailed` (the trial fails); one that cannot read the state raises
:class:`CheckBroken` or any other error (the trial is a *checker error*, never counted as the
agent's failure).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deskpilot.errors import CheckFailed
from deskpilot.eval.check_env import CheckEnv
from deskpilot.eval.check_files import check_cell, check_document, check_file, check_paragraph
from deskpilot.eval.check_live import (
    check_answer,
    check_atspi,
    check_command,
    check_http,
    check_osworld,
    check_output,
    check_window,
)
from deskpilot.eval.task import (
    AllCheck,
    AnswerCheck,
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
    AnswerCheck: check_answer,
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


#: how often settling checks are read again
SETTLE_POLL_S = 0.5


def _signature(results: list[CheckResult]) -> list[Any]:
    return [r.to_dict() for r in results]


def evaluate_all(
    checks: list[Check], env: CheckEnv, *, settle: float = 0.0
) -> tuple[bool, list[CheckResult], float]:
    """Every check's result. With ``settle`` > 0 the checks are read again (every
    SETTLE_POLL_S) until two reads in a row agree, for at most ``settle`` seconds: the state
    an app is still writing (a save, a post) is judged once it has settled."""
    start = time.perf_counter()
    results = [evaluate(c, env) for c in checks]
    deadline = time.monotonic() + settle
    while settle > 0 and time.monotonic() < deadline:
        time.sleep(SETTLE_POLL_S)  # the state changes in another process: poll its files
        again = [evaluate(c, env) for c in checks]
        if _signature(again) == _signature(results):
            break
        results = again
    return all(r.ok for r in results), results, time.perf_counter() - start
