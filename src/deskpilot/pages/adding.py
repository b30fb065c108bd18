"""``deskpilot rules add``: a rule made from files, without a chat.

From a ``.user.js`` (its metadata block gives the name, patterns, run time, frames; flags
replace them), a ``.user.css`` (a group with a rule per ``@-moz-document`` section), or plain
``--css``/``--js`` files with patterns from flags. The rule goes into a group given by id, or
into the folder named for its kind (``Userscripts``, ``Userstyles``, ``Rules``) — made when
missing, reused when there — in its group of the same name. Checked like an import: every
problem listed, nothing saved on any.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deskpilot.errors import RulesError
from deskpilot.pages.import_plan import (
    FolderPlan,
    GroupPlan,
    ImportPlan,
    RulePlan,
    check_plan,
    refuse,
)
from deskpilot.pages.library import Library
from deskpilot.pages.patterns import Pattern
from deskpilot.pages.script_data import Resource, put_resource, set_base, write_values
from deskpilot.pages.stylus import plan_usercss
from deskpilot.pages.tree import Folder, Group, Rule, new_id
from deskpilot.pages.userscript_plan import ScriptSource, plan_userscript

FOLDERS = {"userscript": "Userscripts", "usercss": "Userstyles", "plain": "Rules"}


@dataclass
class AddRequest:
    """What ``rules add`` was given."""

    file: Path | None = None  # a .user.js or .user.css
    css: str | None = None
    js: str | None = None
    name: str | None = None
    include: tuple[Pattern, ...] | None = None
    exclude: tuple[Pattern, ...] | None = None
    run_at: str | None = None
    frames: str | None = None


def kind_of(req: AddRequest, text: str) -> str:
    if req.file is None:
        return "plain"
    name = req.file.name.lower()
    if name.endswith(".user.css") or ("==UserStyle==" in text and not name.endswith(".js")):
        return "usercss"
    return "userscript"


def plan_add(
    req: AddRequest, cached: Callable[[str], Resource | None], *, fetch: bool = False
) -> ImportPlan:
    """The rules ``req`` makes, checked (every problem listed: a RulesError if any)."""
    text = ""
    if req.file is not None:
        try:
            text = req.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RulesError(f"cannot read {req.file}: {exc}") from exc
    kind = kind_of(req, text)
    folder = FOLDERS[kind]
    if kind == "usercss":
        assert req.file is not None
        plan = plan_usercss(text, folder, req.file.name)
        for g in plan.folders[0].groups if plan.folders else []:
            for r in g.rules:
                if req.include is not None:
                    r.include = req.include
                if req.exclude is not None:
                    r.exclude = req.exclude
                r.origin = "user"
    elif kind == "userscript":
        assert req.file is not None
        plan = ImportPlan("userscript", [])
        src = ScriptSource(text, req.file.name, base_url=req.file.resolve().as_uri(), origin="user")
        out = plan_userscript(
            src, cached, fetch=fetch, include=req.include, exclude=req.exclude, run_at=req.run_at
        )
        plan.problems.extend(f"{req.file.name}: {p}" for p in out.problems)
        plan.warnings.extend(f"{req.file.name}: {w}" for w in out.warnings)
        plan.resources.extend(out.resources)
        if out.rule is not None:
            if req.name:
                out.rule.name = req.name
            if req.frames:
                out.rule.frames = req.frames
        rules = [out.rule] if out.rule is not None else []
        plan.folders.append(FolderPlan(folder, groups=[GroupPlan(folder, rules=rules)]))
    else:
        if not req.name:
            raise RulesError("a rule from --css/--js needs a --name")
        rule = RulePlan(
            name=req.name,
            css=req.css,
            js=req.js,
            include=req.include or (),
            exclude=req.exclude or (),
            run_at=req.run_at or "document-idle",
            frames=req.frames or "top",
        )
        plan = ImportPlan("files", [FolderPlan(folder, groups=[GroupPlan(folder, rules=[rule])])])
    check_plan(plan)
    refuse(plan, "added")
    return plan


def add_plan(library: Library, plan: ImportPlan, group_id: str | None = None) -> list[Rule]:
    """Save the plan's rules into ``group_id`` (a usercss style's group goes into that
    group's folder), or into the folder of the plan's name, reused if it exists. The rules
    made, in order."""
    made: list[str] = []
    with library.change():
        for res in plan.resources:
            put_resource(library.db, res)
        for fp in plan.folders:
            for gp in fp.groups:
                target = _target(library, fp, gp, group_id, plan.source == "usercss")
                for rp in gp.rules:
                    rid = new_id("rule")
                    library.insert_rule(
                        rid,
                        target,
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
                    made.append(rid)
    by_id = {r.id: r for _f, _g, r in library.chains()}
    return [by_id[i] for i in made]


def _target(
    library: Library, fp: FolderPlan, gp: GroupPlan, group_id: str | None, own_group: bool
) -> str:
    """The group a planned group's rules go into (inside :meth:`Library.change`)."""
    tree = library.tree()
    if group_id is not None:
        group = _find_group(tree, group_id)
        if not own_group:
            return group.id
        folder_id = group.folder_id
    else:
        folder = next((f for f in tree if f.name == fp.name), None)
        if folder is None:
            folder_id = new_id("folder")
            library.insert_folder(folder_id, fp.name, None, True)
        else:
            folder_id = folder.id
        existing = next(
            (g for f in tree if f.id == folder_id for g in f.groups if g.name == gp.name), None
        )
        if existing is not None and not own_group:
            return existing.id
    gid = new_id("group")
    library.insert_group(gid, folder_id, gp.name, gp.enabled)
    library.put_patterns("group", gid, gp.include, gp.exclude)
    return gid


def _find_group(tree: list[Folder], group_id: str) -> Group:
    for f in tree:
        for g in f.groups:
            if g.id == group_id:
                return g
    raise RulesError(f"no group has id {group_id!r} (see `deskpilot rules list`)")
