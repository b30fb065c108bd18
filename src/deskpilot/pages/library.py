"""The rule library: folders → groups → rules, in order, in one SQLite file.

Each level has its own enabled flag and include/exclude URL patterns. A rule applies to a URL
when it and its group and folder are all enabled (a disabled level switches off everything
below it without touching the children's own flags) and the folder's, group's and rule's
patterns all match (AND across levels; exclude wins within a level). Order is folder position,
then group position, then rule position.

Every change bumps the library's ``revision`` (what the browser extension is generated from).
The items and the cascade are in :mod:`deskpilot.pages.tree`; the file, its schema and its
migrations in :mod:`deskpilot.pages.schema`; the errors pages report in
:mod:`deskpilot.pages.rule_errors`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from deskpilot.errors import InvalidArguments
from deskpilot.pages import script_data
from deskpilot.pages.patterns import Pattern, compile_pattern, scope_of
from deskpilot.pages.rule_errors import RuleError, read_errors, record_error
from deskpilot.pages.schema import open_database, transaction
from deskpilot.pages.tree import (
    Folder,
    Group,
    Level,
    Rule,
    Verdict,
    check_code,
    check_label,
    check_placement,
    clean_name,
    level_of,
    new_id,
    now,
    why_not,
)


class Library:
    """The rule library in ``path`` (created with its directory)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._db = open_database(self.path)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db(self) -> sqlite3.Connection:
        """The open file (for the modules that keep userscript data beside the rules)."""
        return self._db

    @contextmanager
    def change(self) -> Iterator[None]:
        """One transaction that bumps the revision (nothing is written if it raises)."""
        with transaction(self._db):
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
        name = clean_name(name, "folder")
        label = check_label(label)
        fid = new_id("folder")
        with self.change():
            self.insert_folder(fid, name, label, enabled)
            self.put_patterns("folder", fid, include, exclude)
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
        name = clean_name(name, "group")
        self._get(folder_id, Folder)
        gid = new_id("group")
        with self.change():
            self.insert_group(gid, folder_id, name, enabled)
            self.put_patterns("group", gid, include, exclude)
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
        name = clean_name(name, "rule")
        css, js = check_code(css, js)
        check_placement(run_at, frames)
        self._get(group_id, Group)
        rid = new_id("rule")
        with self.change():
            self.insert_rule(rid, group_id, name, css, js, run_at, frames, origin, enabled)
            self.put_patterns("rule", rid, include, exclude)
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
        check_placement(run_at, frames)
        with self.change():
            self._db.execute(
                "UPDATE rules SET name = ?, css = ?, js = ?, run_at = ?, frames = ?, "
                "revision = revision + 1, updated_at = ? WHERE id = ?",
                (
                    clean_name(name, "rule") if name is not None else old.name,
                    new_css,
                    new_js,
                    run_at,
                    frames,
                    now(),
                    rule_id,
                ),
            )
            if include is not None or exclude is not None:
                self._db.execute("DELETE FROM patterns WHERE owner_id = ?", (rule_id,))
                self.put_patterns(
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
                (int(enabled), now(), item_id),
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

    # -- userscript values and the @require/@resource cache

    def values(self, rule_id: str) -> dict[str, Any]:
        """A userscript's stored values (``GM_setValue``) as the library last saw them."""
        return script_data.read_values(self._db, rule_id)

    def set_values(self, rule_id: str, values: dict[str, Any]) -> int:
        """Replace a script's values; the browser takes them (their epoch goes up). The new
        epoch."""
        self._get(rule_id, Rule)
        with self.change():
            return script_data.write_values(self._db, rule_id, values, bump=True)

    def script_state(self, rule_id: str) -> script_data.ScriptState:
        return script_data.state(self._db, rule_id)

    def resource(self, url: str) -> script_data.Resource | None:
        return script_data.get_resource(self._db, url)

    def put_resource(self, res: script_data.Resource) -> None:
        """Add a file to the cache (the extension is rewritten: scripts that wait for it get
        it)."""
        with self.change():
            script_data.put_resource(self._db, res)

    def resources(self) -> list[script_data.Resource]:
        return script_data.list_resources(self._db)

    def remove_resource(self, url: str) -> bool:
        return script_data.remove_resource(self._db, url)

    # -- errors reported by pages

    def record_error(self, rule_id: str, url: str, kind: str, message: str, at: str = "") -> bool:
        """Keep one error (counted if seen before); False if the rule no longer exists."""
        return record_error(self._db, rule_id, url, kind, message, at)

    def errors(self, rule_id: str | None = None) -> list[RuleError]:
        return read_errors(self._db, rule_id)

    # -- rows (for create_* and imports; inside change())

    def insert_folder(self, fid: str, name: str, label: str | None, enabled: bool) -> None:
        """A folder at the end (inside :meth:`change`; the caller has checked its fields)."""
        at = now()
        self._db.execute(
            "INSERT INTO folders VALUES (?, ?, ?, ?, ?, ?, ?)",
            (fid, name, label, int(enabled), self._next("folders", None, None), at, at),
        )

    def insert_group(self, gid: str, folder_id: str, name: str, enabled: bool) -> None:
        """A group at the end of its folder (inside :meth:`change`)."""
        at = now()
        pos = self._next("groups", "folder_id", folder_id)
        self._db.execute(
            "INSERT INTO groups VALUES (?, ?, ?, ?, ?, ?, ?)",
            (gid, folder_id, name, int(enabled), pos, at, at),
        )

    def insert_rule(
        self,
        rid: str,
        group_id: str,
        name: str,
        css: str | None,
        js: str | None,
        run_at: str,
        frames: str,
        origin: str,
        enabled: bool,
    ) -> None:
        """A rule at the end of its group, revision 1 (inside :meth:`change`)."""
        at = now()
        pos = self._next("rules", "group_id", group_id)
        self._db.execute(
            "INSERT INTO rules (id, group_id, name, enabled, position, css, js, run_at, "
            "frames, origin, revision, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            (rid, group_id, name, int(enabled), pos, css, js, run_at, frames, origin, at, at),
        )

    def _next(self, table: str, parent_col: str | None, parent: str | None) -> int:
        sql = f"SELECT COALESCE(MAX(position), -1) + 1 FROM {table}"
        if parent_col:
            row = self._db.execute(f"{sql} WHERE {parent_col} = ?", (parent,)).fetchone()
        else:
            row = self._db.execute(sql).fetchone()
        return int(row[0])

    def put_patterns(
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
