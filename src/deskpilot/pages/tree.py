"""The rule library's items: folders → groups → rules (plain dataclasses), their ids, the
cascade that decides whether a rule applies to a URL, and the structure a model is shown.

A rule applies to a URL when it and its group and folder are all enabled (a disabled level
switches off everything below it without touching the children's own flags) and the folder's,
group's and rule's patterns all match (AND across levels; exclude wins within a level).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from deskpilot.errors import InvalidArguments
from deskpilot.pages.patterns import Pattern, Scope

Level = Literal["folder", "group", "rule"]
RunAt = Literal["document-start", "document-body", "document-end", "document-idle"]
RUN_AT: tuple[RunAt, ...] = ("document-start", "document-body", "document-end", "document-idle")
Frames = Literal["top", "all"]
PREFIX: dict[str, Level] = {"f_": "folder", "g_": "group", "r_": "rule"}
MAX_CODE = 5_000_000


def now() -> str:
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
            "include": [shown_pattern(p) for p in self.include],
            "exclude": [shown_pattern(p) for p in self.exclude],
        }


def shown_pattern(p: Pattern) -> str:
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
class Verdict:
    """Whether one rule applies to a URL, and if not, why."""

    rule: Rule
    group: Group
    folder: Folder
    applies: bool
    reason: str = ""


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


def clean_name(name: str, what: str) -> str:
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


def check_label(label: str | None) -> str | None:
    """A folder's label: 1 to 3 characters, or None."""
    if label is None:
        return None
    if not 1 <= len(label.strip()) <= 3:
        raise InvalidArguments(f"folder label {label!r} must be 1 to 3 characters")
    return label.strip()


def check_placement(run_at: str, frames: str) -> None:
    """A rule's ``run_at`` and ``frames`` must be among the known values."""
    if run_at not in RUN_AT:
        raise InvalidArguments(f"run_at must be one of {', '.join(RUN_AT)}, not {run_at!r}")
    if frames not in ("top", "all"):
        raise InvalidArguments(f"frames must be 'top' or 'all', not {frames!r}")


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
