"""A suite is a directory of task files (TOML, JSON, or OSWorld task JSON).

``load_suite("starter")`` loads a suite shipped with deskpilot; any other reference is a
directory (searched recursively, except ``fixtures/`` and hidden directories) or one task
file. ``suite.select("mousepad.*,web.*")`` picks tasks by id globs.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from deskpilot.errors import TaskError
from deskpilot.eval import osworld
from deskpilot.eval.task import Task, task_from_data

SKIP_DIRS = {"fixtures", "__pycache__"}


def packaged_suites() -> dict[str, Path]:
    """Suites shipped with deskpilot, by name."""
    root = Path(str(resources.files("deskpilot"))) / "data" / "evals"
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if p.is_dir()}


@dataclass(frozen=True)
class Suite:
    name: str
    root: Path
    tasks: tuple[Task, ...]
    digest: str  # sha256 over every file of the suite (tasks and fixtures)

    def select(self, patterns: str | None) -> list[Task]:
        """Tasks whose id matches one of the comma-separated globs (all when None)."""
        if not patterns:
            return list(self.tasks)
        globs = [p.strip() for p in patterns.split(",") if p.strip()]
        chosen = [t for t in self.tasks if any(fnmatch.fnmatchcase(t.id, g) for g in globs)]
        unmatched = [g for g in globs if not any(fnmatch.fnmatchcase(t.id, g) for t in self.tasks)]
        if unmatched:
            ids = ", ".join(t.id for t in self.tasks[:30])
            raise TaskError(
                f"--tasks {', '.join(unmatched)}: no task of suite {self.name!r} matches "
                f"(its tasks: {ids}{', …' if len(self.tasks) > 30 else ''})"
            )
        return chosen

    def get(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise TaskError(f"suite {self.name!r} has no task {task_id!r}")


def _read(path: Path) -> dict[str, Any]:
    try:
        if path.suffix == ".toml":
            with path.open("rb") as fh:
                return tomllib.load(fh)
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskError(f"{path}: cannot read it ({exc.strerror})") from exc
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise TaskError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from exc
    if not isinstance(data, dict):
        raise TaskError(
            f"{path}: a task file holds one object (a table), not {type(data).__name__}"
        )
    return data


def load_task(path: Path) -> Task:
    data = _read(path)
    if osworld.is_osworld(data):
        return task_from_data(osworld.convert(data, path), path)
    return task_from_data(data, path)


def _task_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if any(p in SKIP_DIRS or p.startswith((".", "_")) for p in rel[:-1]):
            continue
        if path.is_file() and path.suffix in (".toml", ".json") and not path.name.startswith("."):
            found.append(path)
    return found


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        if "__pycache__" in path.parts:
            continue
        h.update(str(path.relative_to(root if root.is_dir() else root.parent)).encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def load_suite(ref: str | Path) -> Suite:
    """A packaged suite by name, a directory of task files, or one task file."""
    text = str(ref)
    shipped = packaged_suites()
    path = Path(text).expanduser()
    if not path.exists() and text in shipped:
        path = shipped[text]
    if not path.exists():
        names = ", ".join(shipped) or "none"
        raise TaskError(
            f"no suite {text!r}: give a directory of task files, a task file, or the name of a "
            f"suite shipped with deskpilot ({names})"
        )
    path = path.resolve()
    files = [path] if path.is_file() else _task_files(path)
    if not files:
        raise TaskError(f"{path}: no task files (*.toml, *.json) in it")
    tasks: dict[str, Task] = {}
    for file in files:
        task = load_task(file)
        if task.id in tasks:
            raise TaskError(f"{file}: task id {task.id!r} is also used by {tasks[task.id].source}")
        tasks[task.id] = task
    name = path.stem if path.is_file() else path.name
    return Suite(name, path, tuple(sorted(tasks.values(), key=lambda t: t.id)), _digest(path))
