"""deskpilot's own source, read once per test run: each module's text and what the tests of the
source's shape look at (tests/unit/test_rooms.py, test_import_cycles.py, test_class_chains.py).

Parsing every file of src/deskpilot and walking its syntax tree costs about a second; those
tests used to do it once per test, several times over. Here it is done once, on first use, and
kept (the trees themselves are not: only the import statements and the classes' bases).
Nothing is imported from the project but the package itself, to find it.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import deskpilot

#: the package's folder (src/deskpilot) and the folder it sits in (src)
ROOT = Path(deskpilot.__file__).parent
SRC = ROOT.parent


@dataclass(frozen=True)
class ClassDef:
    name: str
    bases: tuple[ast.expr, ...]


@dataclass(frozen=True)
class Module:
    #: dotted name (``deskpilot.desktop.atspi``; a package's ``__init__.py`` is the package)
    name: str
    path: Path
    text: str
    #: every import statement, at any level (functions and ``TYPE_CHECKING`` included)
    imports: tuple[ast.Import | ast.ImportFrom, ...]
    #: every class statement, at any level, in the order of the file
    classes: tuple[ClassDef, ...]

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _read(path: Path) -> Module:
    text = path.read_text(encoding="utf-8")
    imports: list[ast.Import | ast.ImportFrom] = []
    classes: list[ClassDef] = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(node)
        elif isinstance(node, ast.ClassDef):
            classes.append(ClassDef(node.name, tuple(node.bases)))
    return Module(module_name(path), path, text, tuple(imports), tuple(classes))


@functools.cache
def modules() -> tuple[Module, ...]:
    """Every module of src/deskpilot, sorted by path, read once per run."""
    return tuple(_read(path) for path in sorted(ROOT.rglob("*.py")))


@functools.cache
def by_name() -> dict[str, Module]:
    return {m.name: m for m in modules()}


@functools.cache
def by_path() -> dict[Path, Module]:
    return {m.path: m for m in modules()}
