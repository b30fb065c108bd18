"""The audit database's schema: ordered migrations, each applied once, recorded in _migrations.

Tables: ``events`` (one row per Event), ``blobs`` (image bytes keyed by SHA-256), ``runs`` (a
run's id and its first event), ``chain_head`` (last seq and hash) and ``_migrations``.
Triggers refuse UPDATE and DELETE on the log's rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from deskpilot.audit.chain import GENESIS

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []
migration = MIGRATIONS.append


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.execute("""CREATE TABLE events (seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL,
        kind TEXT NOT NULL, ts REAL NOT NULL, payload TEXT NOT NULL, images TEXT NOT NULL,
        prev_hash TEXT NOT NULL, hash TEXT NOT NULL)""")
    db.execute("CREATE INDEX events_run ON events (run_id, seq)")
    db.execute("CREATE INDEX events_kind ON events (kind)")
    db.execute("""CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL,
        data BLOB NOT NULL)""")
    db.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, first_seq INTEGER NOT NULL UNIQUE)")
    db.execute("""CREATE TABLE chain_head (id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL, hash TEXT NOT NULL)""")
    db.execute("INSERT INTO chain_head VALUES (1, 0, ?)", (GENESIS,))
    for table in ("events", "blobs", "runs"):
        for op in ("UPDATE", "DELETE"):
            db.execute(f"""CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table}
                BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""")
    db.execute("""CREATE TRIGGER chain_head_no_delete BEFORE DELETE ON chain_head
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""")


def migrate(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    for fn in MIGRATIONS:
        if fn.__name__ not in done:
            fn(db)
            db.execute(
                "INSERT INTO _migrations VALUES (?, ?)",
                (fn.__name__, datetime.now(UTC).isoformat()),
            )
