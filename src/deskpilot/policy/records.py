"""The policy's events in words: what ``deskpilot log show``, the chips and the console say.

* ``policy.decided`` — one per judged call: "allowed: activates "Submit": send, post or
  publish — granted by the goal (“submit it”)", "asked: activates "OK" in a dialog that says
  "cannot be undone": delete — approved by TerminalApprover (a person)", "declined: …
  — nobody could be asked (no terminal)", "blocked: KeePassXC is blocked";
* ``policy.grants`` — what a task's goal grants, before it runs;
* ``grant.added`` / ``grant.revoked`` — a person's yes for the task, and its end.

Pure: event data in, one line out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def decided_sentence(data: Mapping[str, Any]) -> str:
    """One line for a ``policy.decided`` event's data."""
    outcome = str(data.get("outcome", ""))
    found = data.get("evidence")
    evidence: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    what = str(evidence.get("why") or data.get("tool") or "")
    if outcome == "blocked":
        return f"blocked: {data.get('refused') or what}"
    if not data.get("effect") and outcome == "allowed":
        return f"allowed: {data.get('tool')} ({data.get('risk')}, nothing consequential)"
    where = evidence.get("window")
    line = f"{outcome}: {what}" + (f" (in “{where}”)" if where else "")
    grant = data.get("grant") if isinstance(data.get("grant"), Mapping) else None
    answer = data.get("answer") if isinstance(data.get("answer"), Mapping) else None
    if outcome == "allowed" and grant is not None:
        source = "the goal" if grant.get("source") == "goal" else "your yes for this task"
        return f"{line} — granted by {source} (“{grant.get('words', '')}”)"
    if outcome == "asked" and answer is not None:
        who = "a person" if answer.get("person") else "automatic"
        scope = ", for the rest of the task" if answer.get("scope") == "task" else ""
        return f"{line} — approved by {answer.get('by')} ({who}){scope}"
    if outcome == "declined":
        refused = str(data.get("refused") or "")
        because = _because(refused)
        by = f" by {answer.get('by')}" if answer is not None else ""
        return f"{line} — declined{by}" + (f": {because}" if because else "")
    return line


def _because(refused: str) -> str:
    """The reason inside a decline's text, when it gives one."""
    for marker, said in BECAUSE:
        if marker in refused:
            return said
    return ""


#: What a decline's text says, and how a record says it.
BECAUSE = (
    ("and there is no terminal to ask", "nobody could be asked (no terminal)"),
    ("no console page is open to ask", "nobody could be asked (no console page open)"),
    ("nobody can be asked here", "nobody could be asked (no approver)"),
    ("the approver is automatic", "only a person may answer it"),
    ("cannot ask the user", "the MCP client cannot ask its user"),
    ("did not approve", "the person said no"),
    ("refused", "the person said no"),
    ("nobody answered", "nobody answered in time"),
)


def grants_sentence(data: Mapping[str, Any]) -> str:
    """One line for a ``policy.grants`` event: what the task's goal allows without asking."""
    grants = [g for g in data.get("grants") or [] if isinstance(g, Mapping)]
    withheld = data.get("withheld") or []
    said = "; ".join(str(g.get("text", "")) for g in grants)
    line = (
        f"the goal allows without asking: {said}"
        if said
        else ("the goal allows nothing consequential without asking")
    )
    if withheld:
        line += f" (never: {', '.join(map(str, withheld))})"
    return line


def grant_sentence(kind: str, data: Mapping[str, Any]) -> str:
    """One line for ``grant.added`` / ``grant.revoked``."""
    if kind == "grant.revoked":
        return f"revoked by {data.get('by', '?')}: {data.get('text', '')}"
    return f"granted for this task by {data.get('by', '?')}: {data.get('text', '')}"


def sentence(kind: str, data: Mapping[str, Any]) -> str | None:
    """The line for any of the policy's events; None for other kinds."""
    if kind == "policy.decided":
        return str(data.get("sentence") or decided_sentence(data))
    if kind == "policy.grants":
        return grants_sentence(data)
    if kind in ("grant.added", "grant.revoked"):
        return grant_sentence(kind, data)
    return None
