"""The rule library's SQLite schema, versioned by ``PRAGMA user_version``: :data:`MIGRATIONS`
upgrade an older file in order (the schema version is their count)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from deskpilot.errors import RulesError

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []


def _v1(db: sqlite3.Connection) -> None:
    _run_script(
        db,
        """
    CREATE TABLE folders (id TEXT PRIMARY KEY, name TEXT NOT NULL,
        label TEXT CHECK (label IS NULL OR length(label) <= 3),
        enabled INTEGER NOT NULL DEFAULT 1, position INTEGER NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
    CREATE TABLE groups (id TEXT PRIMARY KEY,
        folder_id TEXT NOT NULL REFERENCES folders (id) ON DELETE CASCADE,
        name TEXT NOT NULL, enabled INTEGER NOT NULL DEFAULT 1, position INTEGER NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
    CREATE TABLE rules (id TEXT PRIMARY KEY,
        group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
        name TEXT NOT NULL, enabled INTEGER NOT NULL DEFAULT 1, position INTEGER NOT NULL,
        css TEXT, js TEXT,
        run_at TEXT NOT NULL DEFAULT 'document-idle'
            CHECK (run_at IN ('document-start', 'document-end', 'document-idle')),
        frames TEXT NOT NULL DEFAULT 'top' CHECK (frames IN ('top', 'all')),
        origin TEXT NOT NULL DEFAULT 'user', revision INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        CHECK (css IS NOT NULL OR js IS NOT NULL));
    CREATE TABLE patterns (id INTEGER PRIMARY KEY,
        owner_type TEXT NOT NULL CHECK (owner_type IN ('folder', 'group', 'rule')),
        owner_id TEXT NOT NULL, mode TEXT NOT NULL CHECK (mode IN ('include', 'exclude')),
        kind TEXT NOT NULL DEFAULT 'glob', value TEXT NOT NULL, position INTEGER NOT NULL);
    CREATE INDEX patterns_owner ON patterns (owner_id, mode, position);
    CREATE TABLE rule_errors (id INTEGER PRIMARY KEY,
        rule_id TEXT NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
        url TEXT NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1, first_at TEXT NOT NULL, last_at TEXT NOT NULL,
        UNIQUE (rule_id, url, kind, message));
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('revision', '0');
    """,
    )


def _run_script(db: sqlite3.Connection, script: str) -> None:
    """Each statement inside the caller's transaction (``executescript`` would commit)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _v2(db: sqlite3.Connection) -> None:
    """Userscripts: ``document-body``, per-script values, per-script state (the epoch at which
    deskpilot last set its values, the URL relative ``@require``s are read from), the cache of
    ``@require``/``@resource`` files; ``match`` patterns that Chrome's
    grammar refuses become Violentmonkey's ``vm-match`` (or a glob)."""
    _run_script(
        db,
        """
    CREATE TABLE rules_v2 (id TEXT PRIMARY KEY,
        group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
        name TEXT NOT NULL, enabled INTEGER NOT NULL DEFAULT 1, position INTEGER NOT NULL,
        css TEXT, js TEXT,
        run_at TEXT NOT NULL DEFAULT 'document-idle'
            CHECK (run_at IN ('document-start', 'document-body', 'document-end',
                              'document-idle')),
        frames TEXT NOT NULL DEFAULT 'top' CHECK (frames IN ('top', 'all')),
        origin TEXT NOT NULL DEFAULT 'user', revision INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        CHECK (css IS NOT NULL OR js IS NOT NULL));
    INSERT INTO rules_v2 SELECT id, group_id, name, enabled, position, css, js, run_at, frames,
        origin, revision, created_at, updated_at FROM rules;
    DROP TABLE rules;
    ALTER TABLE rules_v2 RENAME TO rules;
    CREATE TABLE script_values (
        rule_id TEXT NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
        key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (rule_id, key));
    CREATE TABLE scripts (
        rule_id TEXT PRIMARY KEY REFERENCES rules (id) ON DELETE CASCADE,
        epoch INTEGER NOT NULL DEFAULT 0, base_url TEXT NOT NULL DEFAULT '');
    CREATE TABLE resources (url TEXT PRIMARY KEY, body BLOB NOT NULL,
        mime TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '',
        added_at TEXT NOT NULL)
    """,
    )
    from deskpilot.errors import InvalidArguments
    from deskpilot.pages.match_grammar import compile_match, compile_vm_match

    for pid, value in db.execute("SELECT id, value FROM patterns WHERE kind = 'match'").fetchall():
        try:
            compile_match(value)
            continue
        except InvalidArguments:
            pass
        try:
            compile_vm_match(value)
            kind = "vm-match"
        except InvalidArguments:
            kind = "glob"
        db.execute("UPDATE patterns SET kind = ? WHERE id = ?", (kind, pid))


MIGRATIONS.append(_v1)
MIGRATIONS.append(_v2)
SCHEMA_VERSION = len(MIGRATIONS)


def open_database(path: Path) -> sqlite3.Connection:
    """The library file at ``path`` (created with its directory), migrated to this schema."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30, isolation_level=None)
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA journal_mode=WAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            db.close()
            raise RulesError(
                f"the rule library {path} has schema version {version}, newer than "
                f"this deskpilot understands ({SCHEMA_VERSION}): upgrade deskpilot"
            )
        if version < SCHEMA_VERSION:
            # a step may rebuild a table others refer to: keys are checked once it is done
            db.execute("PRAGMA foreign_keys=OFF")
            with transaction(db):
                for step in MIGRATIONS[version:]:
                    step(db)
                if db.execute("PRAGMA foreign_key_check").fetchone() is not None:
                    raise sqlite3.IntegrityError("foreign keys broken by the upgrade")
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("PRAGMA foreign_keys=ON")
    except sqlite3.Error as exc:
        raise RulesError(f"cannot open the rule library {path}: {exc}") from exc
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; rolled back if the block raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
