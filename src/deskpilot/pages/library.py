"""The rule library: folders → groups → rules, in order, in one SQLite file.

Each level has its own enabled flag and include/exclude URL patterns. A rule applies to a URL
when it and its group and folder are all enabled (a disabled level switches off everything
below it without touching the children's own flags) and the folder's, group's and rule's
patterns all match (AND across levels; exclude wins within a level). Order is folder position,
then group position, then rule position.

The schema version is ``PRAGMA user_version``; :data:`MIGRATIONS` upgrade older files in order.
Every change bumps the library's ``revision`` (what the browser extension is generated from).
Rule errors reported by pages (a JS exception, a Trusted Types refusal) are kept per rule and
URL, counted, newest last.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from deskpilot.errors import InvalidArguments, RulesError
from deskpilot.pages.patterns import Pattern, Scope, compile_pattern, scope_of

Level = Literal["folder", "group", "rule"]
RunAt = Literal["document-start", "document-end", "document-idle"]
RUN_AT: tuple[RunAt, ...] = ("document-start", "document-end", "document-idle")
Frames = Literal["top", "all"]
PREFIX: dict[str, Level] = {"f_": "folder", "g_": "group", "r_": "rule"}
MAX_CODE = 200_000
MAX_ERRORS_PER_RULE = 50


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_id(level: Level) -> str:
    return level[0] + "_" + secrets.token_hex(4)


def level_of(item_id: str) -> Level:
    level = PREFIX.get(item_id[:2])
    if level is None:
        raise InvalidArguments(
            f"{item_id!r} is not a folder, group or rule id (they start with f_, g_ or r_; "
            "see list_structure or `deskpilot rules list`)"
        )
    return level


@dataclass
class Node:
    id: str
    name: str
    enabled: bool
    position: int
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()

    @property
    def scope(self) -> Scope:
        return Scope(self.include, self.exclude)

    def pattern_dict(self) -> dict[str, list[Any]]:
        return {
            "include": [_shown(p) for p in self.include],
            "exclude": [_shown(p) for p in self.exclude],
        }


def _shown(p: Pattern) -> Any:
    return p.value if p.kind == "glob" else f"{p.kind}:{p.value}"


@dataclass
class Rule(Node):
    group_id: str = ""
    css: str | None = None
    js: str | None = None
    run_at: RunAt = "document-idle"
    frames: Frames = "top"
    origin: str = "user"
    revision: int = 1
    updated_at: str = ""


@dataclass
class Group(Node):
    folder_id: str = ""
    rules: list[Rule] = field(default_factory=list)


@dataclass
class Folder(Node):
    label: str | None = None
    groups: list[Group] = field(default_factory=list)


@dataclass(frozen=True)
class RuleError:
    rule_id: str
    url: str
    kind: str
    message: str
    count: int
    first_at: str
    last_at: str


@dataclass(frozen=True)
class Verdict:
    """Whether one rule applies to a URL, and if not, why."""

    rule: Rule
    group: Group
    folder: Folder
    applies: bool
    reason: str = ""


# -- schema -----------------------------------------------------------------------------------

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


MIGRATIONS.append(_v1)
SCHEMA_VERSION = len(MIGRATIONS)


class Library:
    """The rule library in ``path`` (created with its directory)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA journal_mode=WAL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise RulesError(
                    f"the rule library {self.path} has schema version {version}, newer than "
                    f"this deskpilot understands ({SCHEMA_VERSION}): upgrade deskpilot"
                )
            with self._tx():
                for step in MIGRATIONS[version:]:
                    step(self._db)
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise RulesError(f"cannot open the rule library {self.path}: {exc}") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextmanager
    def change(self) -> Iterator[None]:
        """One transaction that bumps the revision (nothing is written if it raises)."""
        with self._tx():
            yield
            self._db.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'revision'"
            )

    @property
    def revision(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
        return int(row[0])

    # -- reading

    def tree(self) -> list[Folder]:
        patterns = self._patterns()
        folders = [
            Folder(
                id=r[0],
                name=r[1],
                label=r[2],
                enabled=bool(r[3]),
                position=r[4],
                include=patterns.get(r[0], ((), ()))[0],
                exclude=patterns.get(r[0], ((), ()))[1],
            )
            for r in self._db.execute(
                "SELECT id, name, label, enabled, position FROM folders ORDER BY position, rowid"
            )
        ]
        groups: dict[str, Group] = {}
        by_folder = {f.id: f for f in folders}
        for r in self._db.execute(
            "SELECT id, folder_id, name, enabled, position FROM groups ORDER BY position, rowid"
        ):
            g = Group(
                id=r[0],
                folder_id=r[1],
                name=r[2],
                enabled=bool(r[3]),
                position=r[4],
                include=patterns.get(r[0], ((), ()))[0],
                exclude=patterns.get(r[0], ((), ()))[1],
            )
            groups[g.id] = g
            by_folder[g.folder_id].groups.append(g)
        for r in self._db.execute(
            "SELECT id, group_id, name, enabled, position, css, js, run_at, frames, origin, "
            "revision, updated_at FROM rules ORDER BY position, rowid"
        ):
            rule = Rule(
                id=r[0],
                group_id=r[1],
                name=r[2],
                enabled=bool(r[3]),
                position=r[4],
                css=r[5],
                js=r[6],
                run_at=r[7],
                frames=r[8],
                origin=r[9],
                revision=r[10],
                updated_at=r[11],
                include=patterns.get(r[0], ((), ()))[0],
                exclude=patterns.get(r[0], ((), ()))[1],
            )
            groups[rule.group_id].rules.append(rule)
        return folders

    def _patterns(self) -> dict[str, tuple[tuple[Pattern, ...], tuple[Pattern, ...]]]:
        found: dict[str, list[Pattern]] = {}
        for owner, mode, kind, value in self._db.execute(
            "SELECT owner_id, mode, kind, value FROM patterns ORDER BY owner_id, mode, position"
        ):
            found.setdefault(owner, []).append(compile_pattern(value, kind, mode))
        out = {}
        for owner, items in found.items():
            scope = scope_of(items)
            out[owner] = (scope.include, scope.exclude)
        return out

    def chains(self) -> Iterator[tuple[Folder, Group, Rule]]:
        """Every rule with its group and folder, in library order."""
        for folder in self.tree():
            for group in folder.groups:
                for rule in group.rules:
                    yield folder, group, rule

    def find(self, item_id: str) -> Folder | Group | Rule:
        level_of(item_id)
        for folder in self.tree():
            if folder.id == item_id:
                return folder
            for group in folder.groups:
                if group.id == item_id:
                    return group
                for rule in group.rules:
                    if rule.id == item_id:
                        return rule
        raise InvalidArguments(
            f"no {level_of(item_id)} has id {item_id!r} (see list_structure or "
            "`deskpilot rules list`)"
        )

    def verdicts(self, url: str) -> list[Verdict]:
        """For each rule in order: does it apply to ``url``, and if not, why."""
        out = []
        for folder, group, rule in self.chains():
            out.append(Verdict(rule, group, folder, *why_not(folder, group, rule, url)))
        return out

    def applicable(self, url: str) -> list[Rule]:
        return [v.rule for v in self.verdicts(url) if v.applies]

    # -- writing

    def create_folder(
        self,
        name: str,
        *,
        label: str | None = None,
        include: Sequence[Pattern] = (),
        exclude: Sequence[Pattern] = (),
        enabled: bool = True,
    ) -> Folder:
        name = _name(name, "folder")
        if label is not None and not 1 <= len(label.strip()) <= 3:
            raise InvalidArguments(f"folder label {label!r} must be 1 to 3 characters")
        fid = new_id("folder")
        with self.change():
            pos = self._next("folders", None, None)
            now = _now()
            self._db.execute(
                "INSERT INTO folders VALUES (?, ?, ?, ?, ?, ?, ?)",
                (fid, name, label.strip() if label else None, int(enabled), pos, now, now),
            )
            self._put_patterns("folder", fid, include, exclude)
        folder: Folder = self._get(fid, Folder)
        return folder

    def create_group(
        self,
        folder_id: str,
        name: str,
        *,
        include: Sequence[Pattern] = (),
        exclude: Sequence[Pattern] = (),
        enabled: bool = True,
    ) -> Group:
        name = _name(name, "group")
        self._get(folder_id, Folder)
        gid = new_id("group")
        with self.change():
            pos = self._next("groups", "folder_id", folder_id)
            now = _now()
            self._db.execute(
                "INSERT INTO groups VALUES (?, ?, ?, ?, ?, ?, ?)",
                (gid, folder_id, name, int(enabled), pos, now, now),
            )
            self._put_patterns("group", gid, include, exclude)
        group: Group = self._get(gid, Group)
        return group

    def create_rule(
        self,
        group_id: str,
        name: str,
        *,
        css: str | None = None,
        js: str | None = None,
        include: Sequence[Pattern] = (),
        exclude: Sequence[Pattern] = (),
        run_at: str = "document-idle",
        frames: str = "top",
        origin: str = "user",
        enabled: bool = True,
    ) -> Rule:
        name = _name(name, "rule")
        css, js = check_code(css, js)
        if run_at not in RUN_AT:
            raise InvalidArguments(f"run_at must be one of {', '.join(RUN_AT)}, not {run_at!r}")
        if frames not in ("top", "all"):
            raise InvalidArguments(f"frames must be 'top' or 'all', not {frames!r}")
        self._get(group_id, Group)
        rid = new_id("rule")
        with self.change():
            pos = self._next("rules", "group_id", group_id)
            now = _now()
            self._db.execute(
                "INSERT INTO rules (id, group_id, name, enabled, position, css, js, run_at, "
                "frames, origin, revision, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
                (rid, group_id, name, int(enabled), pos, css, js, run_at, frames, origin, now, now),
            )
            self._put_patterns("rule", rid, include, exclude)
        rule: Rule = self._get(rid, Rule)
        return rule

    def update_rule(
        self,
        rule_id: str,
        *,
        name: str | None = None,
        css: str | None = None,
        js: str | None = None,
        run_at: str | None = None,
        frames: str | None = None,
        include: Sequence[Pattern] | None = None,
        exclude: Sequence[Pattern] | None = None,
    ) -> Rule:
        """Change a rule in place (its revision goes up). None keeps a field; an empty
        ``css``/``js`` removes that code (one of them must remain)."""
        old: Rule = self._get(rule_id, Rule)
        new_css, new_js = check_code(old.css if css is None else css, old.js if js is None else js)
        run_at = old.run_at if run_at is None else run_at
        frames = old.frames if frames is None else frames
        if run_at not in RUN_AT:
            raise InvalidArguments(f"run_at must be one of {', '.join(RUN_AT)}, not {run_at!r}")
        if frames not in ("top", "all"):
            raise InvalidArguments(f"frames must be 'top' or 'all', not {frames!r}")
        with self.change():
            self._db.execute(
                "UPDATE rules SET name = ?, css = ?, js = ?, run_at = ?, frames = ?, "
                "revision = revision + 1, updated_at = ? WHERE id = ?",
                (_name(name, "rule") if name is not None else old.name, new_css, new_js,
                 run_at, frames, _now(), rule_id),
            )  # fmt: skip
            if include is not None or exclude is not None:
                self._db.execute("DELETE FROM patterns WHERE owner_id = ?", (rule_id,))
                self._put_patterns(
                    "rule",
                    rule_id,
                    old.include if include is None else include,
                    old.exclude if exclude is None else exclude,
                )
        rule: Rule = self._get(rule_id, Rule)
        return rule

    def set_enabled(self, item_id: str, enabled: bool) -> Folder | Group | Rule:
        level = level_of(item_id)
        self.find(item_id)
        with self.change():
            self._db.execute(
                f"UPDATE {level}s SET enabled = ?, updated_at = ? WHERE id = ?",
                (int(enabled), _now(), item_id),
            )
            if level == "rule":
                self._db.execute(
                    "UPDATE rules SET revision = revision + 1 WHERE id = ?", (item_id,)
                )
        return self.find(item_id)

    def delete(self, item_id: str) -> None:
        level = level_of(item_id)
        self.find(item_id)
        with self.change():
            ids = [item_id]
            if level == "folder":
                groups = [
                    r[0]
                    for r in self._db.execute(
                        "SELECT id FROM groups WHERE folder_id = ?", (item_id,)
                    )
                ]
                ids += groups
                for g in groups:
                    ids += [
                        r[0]
                        for r in self._db.execute("SELECT id FROM rules WHERE group_id = ?", (g,))
                    ]
            elif level == "group":
                ids += [
                    r[0]
                    for r in self._db.execute("SELECT id FROM rules WHERE group_id = ?", (item_id,))
                ]
            self._db.executemany("DELETE FROM patterns WHERE owner_id = ?", [(i,) for i in ids])
            self._db.execute(f"DELETE FROM {level}s WHERE id = ?", (item_id,))

    # -- errors reported by pages

    def record_error(self, rule_id: str, url: str, kind: str, message: str, at: str = "") -> bool:
        """Keep one error (counted if seen before); False if the rule no longer exists."""
        at = at or _now()
        with self._tx():
            if not self._db.execute("SELECT 1 FROM rules WHERE id = ?", (rule_id,)).fetchone():
                return False
            self._db.execute(
                "INSERT INTO rule_errors (rule_id, url, kind, message, first_at, last_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (rule_id, url, kind, message) "
                "DO UPDATE SET count = count + 1, last_at = excluded.last_at",
                (rule_id, url[:2000], kind[:40], message[:2000], at, at),
            )
            self._db.execute(
                "DELETE FROM rule_errors WHERE rule_id = ? AND id NOT IN (SELECT id FROM "
                "rule_errors WHERE rule_id = ? ORDER BY last_at DESC, id DESC LIMIT ?)",
                (rule_id, rule_id, MAX_ERRORS_PER_RULE),
            )
        return True

    def errors(self, rule_id: str | None = None) -> list[RuleError]:
        sql = "SELECT rule_id, url, kind, message, count, first_at, last_at FROM rule_errors"
        args: tuple[str, ...] = ()
        if rule_id is not None:
            sql += " WHERE rule_id = ?"
            args = (rule_id,)
        return [RuleError(*r) for r in self._db.execute(sql + " ORDER BY last_at, id", args)]

    # -- helpers

    def _next(self, table: str, parent_col: str | None, parent: str | None) -> int:
        sql = f"SELECT COALESCE(MAX(position), -1) + 1 FROM {table}"
        if parent_col:
            row = self._db.execute(f"{sql} WHERE {parent_col} = ?", (parent,)).fetchone()
        else:
            row = self._db.execute(sql).fetchone()
        return int(row[0])

    def _put_patterns(
        self, level: Level, owner: str, include: Sequence[Pattern], exclude: Sequence[Pattern]
    ) -> None:
        rows = [
            (level, owner, mode, p.kind, p.value, i)
            for mode, items in (("include", include), ("exclude", exclude))
            for i, p in enumerate(items)
        ]
        self._db.executemany(
            "INSERT INTO patterns (owner_type, owner_id, mode, kind, value, position) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )

    def _get(self, item_id: str, kind: type[Any]) -> Any:
        found = self.find(item_id)
        if not isinstance(found, kind):
            raise InvalidArguments(
                f"{item_id!r} is a {level_of(item_id)}, not a {kind.__name__.lower()}"
            )
        return found


def why_not(folder: Folder, group: Group, rule: Rule, url: str) -> tuple[bool, str]:
    """(applies, reason) for one rule with its group and folder."""
    for level, node in (("folder", folder), ("group", group), ("rule", rule)):
        if not node.enabled:
            return False, f"{level} {node.name!r} is disabled"
    for level, node in (("folder", folder), ("group", group), ("rule", rule)):
        ok, why = node.scope.check(url)
        if not ok:
            return False, f"{level} {node.name!r}: {why}"
    return True, ""


def _name(name: str, what: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise InvalidArguments(f"the {what} needs a name")
    if len(name) > 200:
        raise InvalidArguments(f"the {what} name is longer than 200 characters")
    return name


def check_code(css: str | None, js: str | None) -> tuple[str | None, str | None]:
    css = css if css and css.strip() else None
    js = js if js and js.strip() else None
    if css is None and js is None:
        raise InvalidArguments("a rule needs CSS, JS or both (both were empty)")
    for what, code in (("css", css), ("js", js)):
        if code is not None and len(code) > MAX_CODE:
            raise InvalidArguments(f"the rule's {what} is longer than {MAX_CODE} characters")
    return css, js


def structure(tree: Sequence[Folder]) -> dict[str, Any]:
    """The library for a model: ids, names, flags, patterns and code sizes (never the code)."""

    def level(node: Node) -> dict[str, Any]:
        return {"id": node.id, "name": node.name, "enabled": node.enabled, **node.pattern_dict()}

    return {
        "folders": [
            {
                **level(f),
                "label": f.label,
                "groups": [
                    {
                        **level(g),
                        "rules": [
                            {
                                **level(r),
                                "run_at": r.run_at,
                                "frames": r.frames,
                                "css_chars": len(r.css or ""),
                                "js_chars": len(r.js or ""),
                            }
                            for r in g.rules
                        ],
                    }
                    for g in f.groups
                ],
            }
            for f in tree
        ]
    }
