"""What an import will do, before it does it: folders → groups → rules to create
(:class:`ImportPlan`, shown by ``deskpilot rules import --dry-run``), and :func:`apply_plan`,
which writes one in a single transaction.

An import is all or nothing: the planners list every problem with the item it is in
(:attr:`ImportPlan.problems`), and a plan with any is refused whole (:func:`refuse`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from deskpilot.errors import InvalidArguments, RulesError
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import Pattern, Scope, every_url
from deskpilot.pages.script_data import Resource, put_resource, set_base, write_values
from deskpilot.pages.tree import (
    Folder,
    check_code,
    check_label,
    check_placement,
    clean_name,
    level_of,
    new_id,
    shown_pattern,
)


@dataclass
class RulePlan:
    name: str
    css: str | None = None
    js: str | None = None
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()
    run_at: str = "document-idle"
    frames: str = "top"
    enabled: bool = True
    origin: str = "user"
    id: str | None = None
    values: dict[str, Any] | None = None  # a userscript's stored values
    base_url: str = ""  # where a userscript's relative @require URLs are read from


@dataclass
class GroupPlan:
    name: str
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()
    enabled: bool = True
    rules: list[RulePlan] = field(default_factory=list)
    id: str | None = None


@dataclass
class FolderPlan:
    name: str
    label: str | None = None
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()
    enabled: bool = True
    groups: list[GroupPlan] = field(default_factory=list)
    id: str | None = None


@dataclass
class ImportPlan:
    source: str
    folders: list[FolderPlan]
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)  # for the @require cache

    @property
    def counts(self) -> tuple[int, int, int]:
        groups = [g for f in self.folders for g in f.groups]
        return len(self.folders), len(groups), sum(len(g.rules) for g in groups)

    def everywhere(self) -> list[str]:
        """Names of the rules that would apply to every URL."""
        out = []
        for f in self.folders:
            for g in f.groups:
                for r in g.rules:
                    scopes = [_scope(f), _scope(g), _scope(r)]
                    if every_url(scopes):
                        out.append(f"{f.name} / {g.name} / {r.name}")
        return out

    def describe(self) -> list[str]:
        lines = []
        for f in self.folders:
            lines.append(f"folder {f.name!r}{_pat(f)}")
            for g in f.groups:
                off = "" if g.enabled else " (disabled)"
                lines.append(f"  group {g.name!r}{off}{_pat(g)}")
                for r in g.rules:
                    code = ", ".join(
                        f"{k} {len(v)} chars" for k, v in (("css", r.css), ("js", r.js)) if v
                    )
                    off = "" if r.enabled else ", disabled"
                    vals = f", {len(r.values)} stored values" if r.values else ""
                    lines.append(f"    rule {r.name!r} ({code}{off}{vals}){_pat(r)}")
        if self.resources:
            n = len(self.resources)
            lines.append(f"{n} @require/@resource file{'s' * (n != 1)} for the cache")
        return lines


def _scope(node: FolderPlan | GroupPlan | RulePlan) -> Scope:
    return Scope(node.include, node.exclude)


def _pat(node: FolderPlan | GroupPlan | RulePlan) -> str:
    parts = []
    if node.include:
        parts.append("include " + ", ".join(shown_pattern(p) for p in node.include))
    if node.exclude:
        parts.append("exclude " + ", ".join(shown_pattern(p) for p in node.exclude))
    return (" — " + "; ".join(parts)) if parts else ""


def apply_plan(library: Library, plan: ImportPlan) -> list[Folder]:
    """Write the plan in one transaction; ids in the plan are kept when they are free. A plan
    that does not hold (:func:`check_plan`) writes nothing."""
    check_plan(plan)
    refuse(plan)
    taken = {x.id for f in library.tree() for x in _walk(f)}
    made: list[str] = []
    with library.change():
        for res in plan.resources:
            put_resource(library.db, res)
        for fp in plan.folders:
            fid = _free(fp.id, "f_", taken)
            library.insert_folder(fid, fp.name, fp.label, fp.enabled)
            library.put_patterns("folder", fid, fp.include, fp.exclude)
            made.append(fid)
            for gp in fp.groups:
                gid = _free(gp.id, "g_", taken)
                library.insert_group(gid, fid, gp.name, gp.enabled)
                library.put_patterns("group", gid, gp.include, gp.exclude)
                for rp in gp.rules:
                    rid = _free(rp.id, "r_", taken)
                    library.insert_rule(
                        rid,
                        gid,
                        rp.name,
                        rp.css,
                        rp.js,
                        rp.run_at,
                        rp.frames,
                        rp.origin,
                        rp.enabled,
                    )
                    library.put_patterns("rule", rid, rp.include, rp.exclude)
                    if rp.base_url:
                        set_base(library.db, rid, rp.base_url)
                    if rp.values:
                        write_values(library.db, rid, rp.values, bump=True)
    by_id = {f.id: f for f in library.tree()}
    return [by_id[i] for i in made]


def _walk(folder: Folder) -> Iterable[Any]:
    yield folder
    for g in folder.groups:
        yield g
        yield from g.rules


def _free(wanted: str | None, prefix: str, taken: set[str]) -> str:
    level = level_of(prefix + "x")
    if wanted and wanted.startswith(prefix) and wanted not in taken and len(wanted) <= 40:
        taken.add(wanted)
        return wanted
    while True:
        fresh = new_id(level)
        if fresh not in taken:
            taken.add(fresh)
            return fresh


def check_plan(plan: ImportPlan) -> None:
    """Every name, label, code and placement in the plan as ``create_*`` would take them
    (names and code normalised in place); each one that does not is added to the plan's
    problems, named by its item."""
    for fn, fp in enumerate(plan.folders, 1):
        where = f"folder {fn} {fp.name!r}"
        with _naming(plan, where):
            fp.name = clean_name(fp.name, "folder")
        with _naming(plan, where):
            fp.label = check_label(fp.label)
        for gn, gp in enumerate(fp.groups, 1):
            where_g = f"{where} / group {gn} {gp.name!r}"
            with _naming(plan, where_g):
                gp.name = clean_name(gp.name, "group")
            for rn, rp in enumerate(gp.rules, 1):
                where_r = f"{where_g} / rule {rn} {rp.name!r}"
                with _naming(plan, where_r):
                    rp.name = clean_name(rp.name, "rule")
                with _naming(plan, where_r):
                    check_placement(rp.run_at, rp.frames)
                with _naming(plan, where_r):
                    rp.css, rp.js = check_code(rp.css, rp.js)


def refuse(plan: ImportPlan, verb: str = "imported") -> None:
    """A RulesError listing every problem of the plan, if it has any (nothing is saved)."""
    if not plan.problems:
        return
    n = len(plan.problems)
    head = f"nothing {verb}: {n} problem{'s' * (n != 1)}"
    raise RulesError(head + "\n" + "\n".join(f"  - {p}" for p in plan.problems))


@contextmanager
def _naming(plan: ImportPlan, where: str) -> Iterator[None]:
    try:
        yield
    except InvalidArguments as exc:
        plan.problems.append(f"{where}: {exc}")


def items_of(value: Any) -> list[Any]:
    """A list read from an import file, or none (a file of another shape gives nothing)."""
    return value if isinstance(value, list) else []


def object_of(value: Any) -> dict[str, Any]:
    """An object read from an import file, or an empty one."""
    return value if isinstance(value, dict) else {}
