"""The errors pages report for rules (a JS exception, a Trusted Types or eval refusal): kept
per rule, URL, kind and message, counted, at most :data:`MAX_ERRORS_PER_RULE` per rule (the
newest kept)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from deskpilot.pages.schema import transaction
from deskpilot.pages.tree import now

MAX_ERRORS_PER_RULE = 50


@dataclass(frozen=True)
class RuleError:
    rule_id: str
    url: str
    kind: str
    message: str
    count: int
    first_at: str
    last_at: str


def record_error(
    db: sqlite3.Connection, rule_id: str, url: str, kind: str, message: str, at: str = ""
) -> bool:
    """Keep one error (counted if seen before); False if the rule no longer exists."""
    at = at or now()
    with transaction(db):
        if not db.execute("SELECT 1 FROM rules WHERE id = ?", (rule_id,)).fetchone():
            return False
        db.execute(
            "INSERT INTO rule_errors (rule_id, url, kind, message, first_at, last_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (rule_id, url, kind, message) "
            "DO UPDATE SET count = count + 1, last_at = excluded.last_at",
            (rule_id, url[:2000], kind[:40], message[:2000], at, at),
        )
        db.execute(
            "DELETE FROM rule_errors WHERE rule_id = ? AND id NOT IN (SELECT id FROM "
            "rule_errors WHERE rule_id = ? ORDER BY last_at DESC, id DESC LIMIT ?)",
            (rule_id, rule_id, MAX_ERRORS_PER_RULE),
        )
    return True


def read_errors(db: sqlite3.Connection, rule_id: str | None = None) -> list[RuleError]:
    sql = "SELECT rule_id, url, kind, message, count, first_at, last_at FROM rule_errors"
    args: tuple[str, ...] = ()
    if rule_id is not None:
        sql += " WHERE rule_id = ?"
        args = (rule_id,)
    return [RuleError(*r) for r in db.execute(sql + " ORDER BY last_at, id", args)]
