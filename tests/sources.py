"""deskpilot's own source, read once per test run: each module's text and what the tests of the
source's shape look at (tests/unit/test_rooms.py, test_import_cycles.py, test_class_chains.py).

Parsing every file of src/deskpilot and walking its syntax tree costs one to two seconds;
those tests used to do it once per test, several times over. Here it is done once, on first
use, and kept (the trees themselves are not: only the import statements and the classes'
bases). What a file yields is also kept between runs in .pytest_cache/ (keyed by the file's
text and the Python version: an edited file is parsed again), so a run parses only the files
changed since the last one. Nothing is imported from the project but the package itself, to
find it.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import os
import pickle
import sys
import tempfile
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


#: what the files yielded in earlier runs (text's hash → imports, classes), per Python version
CACHE = (
    Path(__file__).parent.parent
    / ".pytest_cache"
    / "deskpilot-sources-py{}{}.pickle".format(*sys.version_info[:2])
)

Parts = tuple[tuple[ast.Import | ast.ImportFrom, ...], tuple[ClassDef, ...]]


def _parts(text: str, path: Path) -> Parts:
    imports: list[ast.Import | ast.ImportFrom] = []
    classes: list[ClassDef] = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(node)
        elif isinstance(node, ast.ClassDef):
            classes.append(ClassDef(node.name, tuple(node.bases)))
    return tuple(imports), tuple(classes)


def _load_cache() -> dict[str, Parts]:
    try:
        with CACHE.open("rb") as f:
            found = pickle.load(f)
    except Exception:  # none yet, or unreadable: parse everything
        return {}
    return found if isinstance(found, dict) else {}


def _save_cache(parts: dict[str, Parts]) -> None:
    """Write atomically (another run may read it meanwhile); a cache that cannot be written
    only costs the next run its parse."""
    with contextlib.suppress(OSError):
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=CACHE.parent, prefix=".deskpilot-sources-")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(parts, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, CACHE)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


@functools.cache
def modules() -> tuple[Module, ...]:
    """Every module of src/deskpilot, sorted by path, read once per run."""
    cached = _load_cache()
    used: dict[str, Parts] = {}
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        key = hashlib.sha256(text.encode()).hexdigest()
        found = cached.get(key)
        if found is None:
            found = _parts(text, path)
        used[key] = found
        out.append(Module(module_name(path), path, text, *found))
    if used.keys() != cached.keys():  # files changed, came or went: keep what this run saw
        _save_cache(used)
    return tuple(out)


@functools.cache
def by_name() -> dict[str, Module]:
    return {m.name: m for m in modules()}


@functools.cache
def by_path() -> dict[Path, Module]:
    return {m.path: m for m in modules()}
