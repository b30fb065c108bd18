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
from deskpilot.eval.validate import raw_problems, task_problems

SKIP_DIRS = {"fixtures", "__pycache__"}


def packaged_suites() -> dict[str, Path]:
    """Suites shipped with deskpilot, by name."""
    root = Path(str(resources.files("deskpilot"))) / "data" / "evals"
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if p.is_dir()}


@dataclass(frozen=True)
class Broken:
    """A task file that does not load, with every problem found in it."""

    path: Path
    problems: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.path}:\n" + "\n".join(f"  - {p}" for p in self.problems)


@dataclass(frozen=True)
class Suite:
    name: str
    root: Path
    tasks: tuple[Task, ...]
    digest: str  # sha256 over every file of the suite (tasks and fixtures)
    broken: tuple[Broken, ...] = ()

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
    """One task file, validated: raises TaskError naming the file with every problem."""
    data = _read(path)
    if osworld.is_osworld(data):
        data = osworld.convert(data, path)
    try:
        task = task_from_data(data, path)
    except TaskError as exc:  # and what the parts that do validate get wrong
        more = raw_problems({**data, "base_dir": str(path.parent)})
        raise TaskError("; ".join([str(exc), *more])) from None
    found = task_problems(task)
    if found:
        raise TaskError(f"{path}: {'; '.join(found)}")
    return task


def _problems(error: TaskError, path: Path) -> tuple[str, ...]:
    text = str(error)
    text = text[len(str(path)) + 2 :] if text.startswith(f"{path}: ") else text
    return tuple(p.strip() for p in text.split("; ") if p.strip())


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


def load_suite(ref: str | Path, *, skip_broken: bool = False) -> Suite:
    """A packaged suite by name, a directory of task files, or one task file.

    Every file is loaded and every problem of every broken file is listed in one error;
    with ``skip_broken`` the good tasks load and the broken files are in ``Suite.broken``.
    """
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
    broken: list[Broken] = []
    for file in files:
        try:
            task = load_task(file)
        except TaskError as exc:
            broken.append(Broken(file, _problems(exc, file)))
            continue
        if task.id in tasks:
            problem = f"task id {task.id!r} is also used by {tasks[task.id].source}"
            broken.append(Broken(file, (problem,)))
            continue
        tasks[task.id] = task
    if broken and (not skip_broken or not tasks):
        raise TaskError(broken_message(broken, len(files), skip_broken))
    name = path.stem if path.is_file() else path.name
    ordered = tuple(sorted(tasks.values(), key=lambda t: t.id))
    return Suite(name, path, ordered, _digest(path), tuple(broken))


def broken_message(broken: list[Broken], total: int, skipped: bool = False) -> str:
    head = (
        f"{len(broken)} of {total} task file(s) do not load"
        if total > 1
        else "the task file does not load"
    )
    hint = (
        ""
        if skipped or total == len(broken)
        else "\n(fix them, or run the others with --skip-broken)"
    )
    return head + ":\n" + "\n".join(b.describe() for b in broken) + hint
