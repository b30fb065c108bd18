"""What userscripts keep beside their code in the rule library: their values (``GM_setValue``)
and the cache of the files their ``@require`` and ``@resource`` lines name.

Values: the browser extension holds the live copy (pages write it with no deskpilot
running); the library holds the one deskpilot exports and imports. Each script has an
*epoch*, raised whenever deskpilot sets its values (an import, ``rules values``): the browser
takes the library's values only when their epoch is newer than its own copy's, and the
library takes the browser's only when both are at the same epoch (the page wrote since) — so
neither side overwrites newer values with older ones.

The cache: files by URL (without its ``#hash``), filled by ``deskpilot rules cache`` or while
adding and importing (from local files, or the network when asked); the machine may be
offline, so nothing is fetched at run time.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from deskpilot.pages.schema import transaction
from deskpilot.pages.tree import now

MAX_VALUES_BYTES = 10_000_000


@dataclass(frozen=True)
class ScriptState:
    epoch: int = 0
    base_url: str = ""


def state(db: sqlite3.Connection, rule_id: str) -> ScriptState:
    row = db.execute("SELECT epoch, base_url FROM scripts WHERE rule_id = ?", (rule_id,)).fetchone()
    return ScriptState(int(row[0]), str(row[1])) if row else ScriptState()


def states(db: sqlite3.Connection) -> dict[str, ScriptState]:
    return {
        str(r[0]): ScriptState(int(r[1]), str(r[2]))
        for r in db.execute("SELECT rule_id, epoch, base_url FROM scripts")
    }


def set_base(db: sqlite3.Connection, rule_id: str, base_url: str) -> None:
    """(Inside a transaction.)"""
    db.execute(
        "INSERT INTO scripts (rule_id, base_url) VALUES (?, ?) "
        "ON CONFLICT (rule_id) DO UPDATE SET base_url = excluded.base_url",
        (rule_id, base_url),
    )


def read_values(db: sqlite3.Connection, rule_id: str) -> dict[str, Any]:
    return {
        str(k): json.loads(v)
        for k, v in db.execute(
            "SELECT key, value FROM script_values WHERE rule_id = ? ORDER BY key", (rule_id,)
        )
    }


def all_values(db: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rid, k, v in db.execute("SELECT rule_id, key, value FROM script_values ORDER BY key"):
        out.setdefault(str(rid), {})[str(k)] = json.loads(v)
    return out


def dump_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write_values(
    db: sqlite3.Connection, rule_id: str, values: dict[str, Any], *, bump: bool
) -> int:
    """Replace a script's values (inside a transaction); with ``bump`` its epoch goes up (the
    browser is to take them). The epoch now."""
    size = sum(len(k) + len(dump_value(v)) for k, v in values.items())
    if size > MAX_VALUES_BYTES:
        raise ValueError(f"the values are {size} bytes, more than {MAX_VALUES_BYTES}")
    db.execute("DELETE FROM script_values WHERE rule_id = ?", (rule_id,))
    db.executemany(
        "INSERT INTO script_values (rule_id, key, value) VALUES (?, ?, ?)",
        [(rule_id, k, dump_value(v)) for k, v in values.items()],
    )
    db.execute(
        "INSERT INTO scripts (rule_id, epoch) VALUES (?, ?) ON CONFLICT (rule_id) DO UPDATE "
        "SET epoch = epoch + ?",
        (rule_id, 1 if bump else 0, 1 if bump else 0),
    )
    return state(db, rule_id).epoch


def take_browser_values(db: sqlite3.Connection, found: dict[str, dict[str, Any]]) -> list[str]:
    """Keep the values the browser holds (``{rule_id: {"epoch", "data"}}``) where they are at
    the library's epoch; the ids whose values changed."""
    changed = []
    with transaction(db):
        known = {str(r[0]) for r in db.execute("SELECT id FROM rules WHERE js IS NOT NULL")}
        for rule_id, entry in found.items():
            if rule_id not in known or not isinstance(entry, dict):
                continue
            data = entry.get("data")
            epoch = entry.get("epoch", 0)
            if not isinstance(data, dict) or not isinstance(epoch, int):
                continue
            if epoch != state(db, rule_id).epoch or data == read_values(db, rule_id):
                continue
            write_values(db, rule_id, data, bump=False)
            changed.append(rule_id)
    return changed


# -- the @require / @resource cache ---------------------------------------------------------


@dataclass(frozen=True)
class Resource:
    url: str
    body: bytes
    mime: str = ""
    source: str = ""  # where it came from: a file path, "network", "import"
    added_at: str = ""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def cache_key(url: str) -> str:
    """A URL without its ``#fragment`` (where Subresource Integrity hashes go)."""
    return url.split("#", 1)[0]


def get_resource(db: sqlite3.Connection, url: str) -> Resource | None:
    row = db.execute(
        "SELECT url, body, mime, source, added_at FROM resources WHERE url = ?", (cache_key(url),)
    ).fetchone()
    return Resource(row[0], bytes(row[1]), row[2], row[3], row[4]) if row else None


def put_resource(db: sqlite3.Connection, res: Resource) -> None:
    """(Inside a transaction.)"""
    db.execute(
        "INSERT INTO resources (url, body, mime, source, added_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (url) DO UPDATE SET body = excluded.body, mime = excluded.mime, "
        "source = excluded.source, added_at = excluded.added_at",
        (cache_key(res.url), res.body, res.mime, res.source, res.added_at or now()),
    )


def list_resources(db: sqlite3.Connection) -> list[Resource]:
    return [
        Resource(r[0], bytes(r[1]), r[2], r[3], r[4])
        for r in db.execute("SELECT url, body, mime, source, added_at FROM resources ORDER BY url")
    ]


def remove_resource(db: sqlite3.Connection, url: str) -> bool:
    with transaction(db):
        cur = db.execute("DELETE FROM resources WHERE url = ?", (cache_key(url),))
    return cur.rowcount > 0
