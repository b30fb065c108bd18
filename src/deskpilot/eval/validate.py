"""Everything about a task that can be known before a desktop starts, checked at load.

:func:`task_problems` lists *every* problem of a task (not the first): oracle steps whose tool
does not exist or whose arguments do not fit the tool's JSON schema, ``find`` placeholders
with unknown keys or bad regexes, regexes of setup steps and ``until`` conditions, fixtures
and served directories that are not there, ``output`` checks of a process nothing captures,
``http`` checks without a ``serve`` step, ``unchanged`` files setup does not write.
:func:`needed_apps` is what a task runs: its ``apps``, what setup launches and runs, and the
programs a shell command of a setup step starts, so that a run can refuse before it starts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

from deskpilot.errors import TaskError
from deskpilot.eval.task import (
    Check,
    Find,
    LaunchStep,
    OracleStep,
    RunStep,
    ServeStep,
    Task,
    Until,
    WaitWindowStep,
    WriteStep,
    parse_setup_step,
    problems,
)

CHECK: TypeAdapter[Any] = TypeAdapter(Check)
#: what an element or window placeholder stands for when arguments meet the schema
PLACEHOLDER_ID = "1"
#: shell words that are not programs (a command's first word is checked when it is none)
SHELL_WORDS = frozenset(
    [
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "in",
        "function",
        "select",
        "time",
        "!",
        "{",
        "}",
        "[[",
        "]]",
        "export",
        "cd",
        "echo",
        "printf",
        "true",
        "false",
        "test",
        "[",
        "exit",
        "set",
        "unset",
        "read",
        "source",
        ".",
        "eval",
        "exec",
        "history",
        "alias",
        "shift",
        "return",
        "local",
        "declare",
        "trap",
        "wait",
        "kill",
        "command",
        "type",
        "umask",
        "ulimit",
        "pushd",
        "popd",
        "dirs",
        "let",
    ]
)
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "!"})


@cache
def tool_schemas() -> dict[str, dict[str, Any]]:
    """The input schemas of the tools an oracle may call (the nine computer-use tools; from
    the tools themselves: the agent's package, with every provider, is not needed to load a
    suite)."""
    from deskpilot.tools.builtin import computer_use_tools

    return {spec.name: spec.input_schema for spec in computer_use_tools().list()}


def _regex(value: str | None, where: str) -> Iterator[str]:
    if value is None or ("{" in value and "}" in value and re.search(r"\{(home|server)\}", value)):
        return
    try:
        re.compile(value)
    except re.error as exc:
        yield f"{where}: {value!r} is not a valid regex ({exc})"


def _placeholders(value: Any, where: str) -> tuple[Any, list[str]]:
    """``value`` with ``{find}``/``{window}`` placeholders replaced by an ID, and their
    problems."""
    found: list[str] = []
    if isinstance(value, list):
        items = [_placeholders(v, f"{where}.{i}") for i, v in enumerate(value)]
        return [v for v, _ in items], [p for _, ps in items for p in ps]
    if not isinstance(value, dict):
        return value, found
    if set(value) == {"find"}:
        try:
            find = Find.model_validate(value["find"])
        except ValidationError as exc:
            return PLACEHOLDER_ID, [f"{where}.find: {problems(exc)}"]
        found += list(_regex(find.name_re, f"{where}.find.name_re"))
        found += list(_regex(find.in_row, f"{where}.find.in_row"))
        return PLACEHOLDER_ID, found
    if set(value) == {"window"}:
        if not isinstance(value["window"], str):
            return PLACEHOLDER_ID, [f"{where}.window: a title regex (a string)"]
        return PLACEHOLDER_ID, list(_regex(value["window"], f"{where}.window"))
    out = {}
    for key, inner in value.items():
        out[key], more = _placeholders(inner, f"{where}.{key}")
        found += more
    return out, found


def _until(until: Until | None, where: str) -> Iterator[str]:
    if until is None:
        return
    for name in ("window", "gone"):
        yield from _regex(getattr(until, name), f"{where}.until.{name}")
    if until.find is not None:
        yield from _regex(until.find.name_re, f"{where}.until.find.name_re")
        yield from _regex(until.find.in_row, f"{where}.until.find.in_row")


def oracle_problems(steps: list[OracleStep], first: int = 0) -> Iterator[str]:
    schemas = tool_schemas()
    for i, step in enumerate(steps, start=first):
        where = f"oracle.{i}"
        if step.tool not in schemas:
            yield f"{where}: no tool {step.tool!r} (tools: {', '.join(sorted(schemas))})"
            continue
        args, found = _placeholders(step.args, f"{where}.args")
        yield from found
        for err in sorted(Draft202012Validator(schemas[step.tool]).iter_errors(args), key=str):
            at = ".".join(str(p) for p in err.absolute_path)
            yield f"{where}.args{'.' + at if at else ''} ({step.tool}): {err.message}"
        yield from _until(step.until, where)


def _shell_programs(command: str) -> Iterator[str]:
    """The programs a shell command line starts (the first word of each simple command)."""
    command = command.replace("\n", " ; ")  # a script's lines are commands of their own
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return
    first = True
    for word in words:
        if word in SEPARATORS or set(word) <= set("&|;()"):
            first = True
            continue
        if first and "=" in word and not word.startswith("="):  # VAR=value cmd
            continue
        if first:
            first = False
            if word not in SHELL_WORDS and not word.startswith(("$", "/dev/", "-")):
                yield word


def command_programs(argv: list[str]) -> Iterator[str]:
    """The programs an argv starts: argv[0], and those of ``sh -c``/``bash -c`` scripts."""
    if not argv:
        return
    head = Path(argv[0]).name
    if head in ("sh", "bash", "dash") and "-c" in argv[1:-1]:
        yield from _shell_programs(argv[argv.index("-c") + 1])
        return
    if head in ("env", "nohup", "timeout", "setsid") and len(argv) > 1:
        rest = [a for a in argv[1:] if not a.startswith("-") and "=" not in a]
        if head == "timeout":
            rest = rest[1:]
        yield from command_programs(rest)
        return
    yield argv[0]


def needed_apps(task: Task) -> list[str]:
    """The programs a task needs on the machine that runs it."""
    found: list[str] = list(task.apps)
    for step in task.setup_steps():
        if isinstance(step, LaunchStep):
            found += command_programs(step.launch)
        elif isinstance(step, RunStep):
            found += command_programs(step.run)
    seen: dict[str, None] = {}
    for app in found:
        if "{" not in app and app not in ("sh", "bash"):
            seen.setdefault(app, None)
    return list(seen)


def _setup_problems(task: Task, parsed_only: bool = False) -> Iterator[str]:
    base = Path(task.base_dir)
    for i, raw in enumerate(task.setup):
        try:
            step = parse_setup_step(raw, i)
        except TaskError as exc:
            if not parsed_only:
                yield str(exc)
            continue
        where = f"setup.{i}"
        if isinstance(step, LaunchStep):
            yield from _regex(step.window, f"{where}.window")
            hidden = [v for v in ("{task_dir}", "{store}") if any(v in a for a in step.launch)]
            if hidden:
                yield (
                    f"{where}.launch: an app cannot read {' or '.join(hidden)} (the task's "
                    "folder and the file store are hidden from the trial's apps: they hold "
                    "the answers); copy the file into the home first with a write … from step"
                )
        elif isinstance(step, WaitWindowStep):
            yield from _regex(step.wait_window, f"{where}.wait_window")
        elif isinstance(step, WriteStep) and step.from_ is not None and "{" not in step.from_:
            src = Path(step.from_) if Path(step.from_).is_absolute() else base / step.from_
            if not src.is_file():
                yield f"{where}.from: the fixture {src} does not exist"
        elif isinstance(step, ServeStep) and not (base / step.serve).is_dir():
            yield f"{where}.serve: {base / step.serve} is not a directory"


def _walk_checks(checks: list[Any]) -> Iterator[tuple[str, Any]]:
    for i, check in enumerate(checks):
        yield f"check.{i}", check
        inner = getattr(check, "of", None)
        if isinstance(inner, list):
            yield from ((f"check.{i}.{w}", c) for w, c in _walk_checks(inner))
        elif inner is not None and not isinstance(inner, str):
            yield from ((f"check.{i}.{w}", c) for w, c in _walk_checks([inner]))


def _check_problems(task: Task) -> Iterator[str]:
    steps = []
    for i, raw in enumerate(task.setup):
        try:
            steps.append(parse_setup_step(raw, i))
        except TaskError:
            continue
    captured = {s.capture for s in steps if isinstance(s, LaunchStep) and s.capture}
    serves = any(isinstance(s, ServeStep) for s in steps)
    written = {s.write for s in steps if isinstance(s, WriteStep)}
    for where, check in _walk_checks(task.check):
        kind = getattr(check, "kind", "")
        if kind == "output" and check.of not in captured:
            have = ", ".join(sorted(captured)) or "none"
            yield f"{where}.of: no launch step captures {check.of!r} (captured: {have})"
        elif kind == "http" and not serves:
            yield f"{where}: an http check needs a 'serve' setup step"
        elif kind == "file" and check.unchanged and check.path not in written:
            yield f"{where}.unchanged: setup does not write {check.path}"
        elif kind == "osworld":
            from deskpilot.eval.osworld_metrics import osworld_problems

            yield from (f"{where}: {p}" for p in osworld_problems(check))


def raw_problems(data: dict[str, Any]) -> list[str]:
    """The problems :func:`task_problems` would find in the parts of a task that validate on
    their own, when the task as a whole does not (so that one error lists them all)."""
    found: list[str] = []
    steps = data.get("oracle")
    for i, raw in enumerate(steps if isinstance(steps, list) else []):
        try:
            step = OracleStep.model_validate(raw)
        except ValidationError:
            continue  # the task's own validation names it
        found += oracle_problems([step], first=i)
    setup = data.get("setup")
    if isinstance(setup, list):
        shell = Task.model_construct(
            id="_",
            goal="_",
            family="_",
            setup=[s for s in setup if isinstance(s, dict)],
            base_dir=str(data.get("base_dir", "")),
        )
        found += _setup_problems(shell, parsed_only=True)
    checks = data.get("check")
    for i, raw in enumerate(checks if isinstance(checks, list) else []):
        try:
            check = CHECK.validate_python(raw)
        except ValidationError:
            continue
        shell = Task.model_construct(
            id="_",
            goal="_",
            family="_",
            check=[check],
            setup=[s for s in setup if isinstance(s, dict)] if isinstance(setup, list) else [],
        )
        found += [p.replace("check.0", f"check.{i}", 1) for p in _check_problems(shell)]
    return found


def task_problems(task: Task) -> list[str]:
    """Every problem of a validated task that would only show once a desktop ran it."""
    return [
        *_setup_problems(task),
        *oracle_problems(task.oracle),
        *_check_problems(task),
    ]
