"""Composition over inheritance: no class in src/deskpilot sits on a chain of more than two
project classes (itself and one project base), nor inherits from two project classes.

Read from the source (nothing is imported): each class's bases are resolved through its
module's imports to the project class they name. The exception tree (:mod:`deskpilot.errors`
and the exceptions built on it) is a taxonomy callers catch by level, not a tower of
behaviour, and is left out.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from tests import sources

MAX_CHAIN = 2


@dataclass
class ClassInfo:
    module: str
    name: str
    bases: list[tuple[str, str] | None] = field(default_factory=list)  # project (module, name)
    exception: bool = False


@functools.cache
def project_classes() -> dict[tuple[str, str], ClassInfo]:
    """Every class of the project, its project bases resolved (None: a foreign base).

    The source is read once per run (tests/sources.py), and so is this (callers only read it).
    """
    found: dict[tuple[str, str], ClassInfo] = {}
    trees = sources.by_name()
    for module, source in trees.items():
        names: dict[str, tuple[str, str]] = {}  # local name → (module, name) it imports
        modules: dict[str, str] = {}  # local name → the module it is
        for node in source.imports:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    local = alias.asname or alias.name
                    sub = f"{node.module}.{alias.name}"
                    if sub in trees:
                        modules[local] = sub
                    else:
                        names[local] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        modules[alias.asname] = alias.name
        for cls in source.classes:
            info = ClassInfo(module, cls.name)
            for base in cls.bases:
                target: tuple[str, str] | None = None
                if isinstance(base, ast.Name):
                    target = names.get(base.id, (module, base.id))
                elif (
                    isinstance(base, ast.Attribute)
                    and isinstance(base.value, ast.Name)
                    and base.value.id in modules
                ):
                    target = (modules[base.value.id], base.attr)
                info.bases.append(target)
                if isinstance(base, ast.Name) and base.id in {"Exception", "BaseException"}:
                    info.exception = True
            found[(module, cls.name)] = info
    return found


def chain(cls: tuple[str, str], classes: dict[tuple[str, str], ClassInfo]) -> list[str]:
    """The longest line of project classes from ``cls`` up through its project bases."""
    info = classes.get(cls)
    if info is None:
        return []
    best: list[str] = []
    for base in info.bases:
        if base is not None and base in classes and base != cls:
            up = chain(base, classes)
            if len(up) > len(best):
                best = up
    return [f"{info.module}.{info.name}", *best]


def is_exception(cls: tuple[str, str], classes: dict[tuple[str, str], ClassInfo]) -> bool:
    info = classes.get(cls)
    if info is None:
        return False
    return info.exception or any(
        b is not None and b in classes and is_exception(b, classes) for b in info.bases
    )


def offenders() -> list[str]:
    classes = project_classes()
    out = []
    for key, info in sorted(classes.items()):
        if is_exception(key, classes):
            continue
        line = chain(key, classes)
        project_bases = [b for b in info.bases if b is not None and b in classes]
        if len(line) > MAX_CHAIN or len(project_bases) > 1:
            out.append(" → ".join(line) + (f" (bases: {project_bases})" if project_bases else ""))
    return out


def test_the_walk_sees_the_classes_and_their_project_bases() -> None:
    classes = project_classes()
    assert ("deskpilot.desktop.facade", "DesktopFacade") in classes
    atspi_bus = classes[("deskpilot.desktop.atspi.bus", "AtspiBus")]
    assert atspi_bus.bases == [("deskpilot.desktop.atspi.calls", "CallQueue")]
    assert is_exception(("deskpilot.errors", "ActionFailed"), classes)
    fake = {
        ("m", "A"): ClassInfo("m", "A"),
        ("m", "B"): ClassInfo("m", "B", [("m", "A")]),
        ("m", "C"): ClassInfo("m", "C", [("m", "B")]),
    }
    assert chain(("m", "C"), fake) == ["m.C", "m.B", "m.A"]  # a chain of three is caught


def test_no_class_chain_is_longer_than_two_project_classes() -> None:
    found = offenders()
    assert not found, "class chains of more than two project classes:\n" + "\n".join(found)
