"""OSWorld-style task JSON: a documented subset, converted to deskpilot's task format.

OSWorld (xlang-ai/OSWorld) keeps one JSON file per task: ``instruction``, ``config`` (setup
steps) and ``evaluator`` (getters that read state, metrics that compare it). deskpilot reads
files of that shape when they stay on one machine and check state, not the agent's words:

==========================  ===================================================================
OSWorld                      deskpilot
==========================  ===================================================================
``config`` ``launch``        ``launch`` (argv, or ``sh -c`` with ``shell``); waits for a window
``execute``, ``command``     ``run`` (must exit 0)
``open``                     ``launch ["xdg-open", path]``
``download``                 ``write`` ``from`` a local file (relative to the task file or
                             ``file://``); web URLs are refused: suites run offline
``activate_window``          ``wait_window`` (the window's title)
``chrome_open_tabs``         ``open_url`` per URL
``sleep``                    dropped: deskpilot waits for readiness instead
getter ``vm_file``           the file's path in the sandbox (metrics read it)
``vm_command_line``          the command's stdout (``vm_command_error``: its stderr)
``rule``                     ``rules`` as given
``cloud_file``               a local file (relative path or ``file://``) as expected value
metrics                      ``exact_match``, ``check_include_exclude``, ``match_in_list``,
                             ``is_in_list``, ``file_contains``, ``compare_text_file``,
                             ``diff_text_file``
``conj``                     ``and`` → all checks, ``or`` → any
==========================  ===================================================================

``/home/user`` (OSWorld's VM home) means the sandbox's home. ``postconfig`` steps other than
``sleep`` are refused: they act for the agent (OSWorld presses Ctrl+S there) and deskpilot
checks the state the agent left. ``infeasible`` tasks need the agent's FAIL action and are
refused. An optional ``"deskpilot"`` object adds ``oracle``, ``timeout``, ``max_steps``,
``apps`` and ``family`` (OSWorld ignores it).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deskpilot.errors import CheckBroken, TaskError

VM_HOME = "/home/user"
EXTENSION_KEYS = ("oracle", "timeout", "max_steps", "apps", "family", "tags")


def is_osworld(data: dict[str, Any]) -> bool:
    return "instruction" in data and "evaluator" in data


def _home(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(VM_HOME, "~") if value.startswith(VM_HOME) else value
    if isinstance(value, list):
        return [_home(v) for v in value]
    return value


def _argv(params: dict[str, Any], where: str) -> list[str]:
    command = params.get("command")
    if isinstance(command, str):
        if params.get("shell"):
            return ["sh", "-c", command.replace(VM_HOME, "$HOME")]
        return [str(_home(p)) for p in shlex.split(command)]
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        if params.get("shell"):
            return ["sh", "-c", " ".join(command).replace(VM_HOME, "$HOME")]
        return [str(_home(c)) for c in command]
    raise TaskError(f"{where}: 'command' must be a string or a list of strings")


def _local(url: str, base: Path, where: str) -> str:
    if url.startswith("file://"):
        return url[len("file://") :]
    if re.match(r"^[a-z][a-z0-9+.-]*://", url, re.I):
        raise TaskError(
            f"{where}: {url[:80]!r} needs the web; deskpilot suites run offline — put the file "
            "next to the task and name it by a relative path"
        )
    return str((base / url).resolve())


def _setup(config: list[Any], base: Path) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for i, step in enumerate(config):
        where = f"config.{i}"
        if not isinstance(step, dict):
            raise TaskError(f"{where}: a setup step is an object with 'type' and 'parameters'")
        kind, params = step.get("type"), step.get("parameters") or {}
        if kind == "launch":
            steps.append({"launch": _argv(params, where)})
        elif kind in ("execute", "command"):
            steps.append({"run": _argv(params, where)})
        elif kind == "open":
            steps.append({"launch": ["xdg-open", _home(str(params.get("path", "")))]})
        elif kind == "download":
            for j, f in enumerate(params.get("files") or []):
                src = _local(str(f.get("url", "")), base, f"{where}.files.{j}")
                steps.append({"write": _home(str(f.get("path", ""))), "from": src})
        elif kind == "activate_window":
            steps.append({"wait_window": re.escape(str(params.get("window_name", "")))})
        elif kind == "chrome_open_tabs":
            steps += [{"open_url": str(u)} for u in params.get("urls_to_open") or []]
        elif kind == "sleep":
            continue
        else:
            raise TaskError(
                f"{where}: OSWorld setup type {kind!r} is not supported (supported: launch, "
                "execute, command, open, download, activate_window, chrome_open_tabs, sleep)"
            )
    return steps


GETTERS = ("vm_file", "vm_command_line", "vm_command_error", "rule", "cloud_file")


def _getter(spec: Any, base: Path, where: str) -> dict[str, Any]:
    if not isinstance(spec, dict) or spec.get("type") not in GETTERS:
        got = spec.get("type") if isinstance(spec, dict) else spec
        raise TaskError(
            f"{where}: OSWorld getter {got!r} is not supported (supported: {', '.join(GETTERS)})"
        )
    out: dict[str, Any] = {k: _home(v) for k, v in spec.items()}
    command = spec.get("command")
    if isinstance(command, str):  # run by sh -c: the VM's home is $HOME
        out["command"] = command.replace(VM_HOME, "$HOME")
    elif isinstance(command, list):
        out["command"] = [str(c).replace(VM_HOME, "{home}") for c in command]
    if out["type"] == "cloud_file":
        out["path"] = _local(str(out.get("path", "")), base, where)
    return out


def _checks(evaluator: dict[str, Any], base: Path) -> list[dict[str, Any]]:
    if evaluator.get("postconfig"):
        kinds = {s.get("type") for s in evaluator["postconfig"] if isinstance(s, dict)}
        if kinds - {"sleep"}:
            raise TaskError(
                "evaluator.postconfig acts for the agent before checking (e.g. saving for it); "
                "deskpilot checks the state the agent left — remove it and say in the "
                "instruction what must be saved"
            )
    funcs = evaluator.get("func")
    many = isinstance(funcs, list)
    names = funcs if isinstance(funcs, list) else [funcs]

    def nth(key: str, i: int) -> Any:
        value = evaluator.get(key)
        return value[i] if many and isinstance(value, list) else value

    checks: list[dict[str, Any]] = []
    for i, func in enumerate(names):
        where = f"evaluator.func.{i}" if many else "evaluator.func"
        if func not in METRICS:
            raise TaskError(
                f"{where}: OSWorld metric {func!r} is not supported (supported: "
                f"{', '.join(METRICS)})"
            )
        expected = nth("expected", i)
        checks.append(
            {
                "kind": "osworld",
                "func": func,
                "result": _getter(nth("result", i), base, f"{where} result"),
                "expected": _getter(expected, base, f"{where} expected") if expected else None,
                "options": nth("options", i) or {},
            }
        )
    conj = evaluator.get("conj", "and")
    if len(checks) > 1:
        return [{"kind": "all" if conj != "or" else "any", "of": checks}]
    return checks


def convert(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """OSWorld task JSON → deskpilot task data (validated by the caller)."""
    evaluator = data.get("evaluator")
    if not isinstance(evaluator, dict):
        raise TaskError(f"{path}: 'evaluator' must be an object")
    if evaluator.get("func") == "infeasible":
        raise TaskError(f"{path}: 'infeasible' tasks need the agent's FAIL action; not supported")
    config = data.get("config") or []
    if not isinstance(config, list):
        raise TaskError(f"{path}: 'config' must be a list of setup steps")
    try:
        setup = _setup(config, path.parent)
        checks = _checks(evaluator, path.parent)
    except TaskError as exc:
        raise TaskError(f"{path}: {exc}") from None
    extra = data.get("deskpilot") or {}
    if not isinstance(extra, dict) or set(extra) - set(EXTENSION_KEYS):
        raise TaskError(f"{path}: 'deskpilot' may hold {', '.join(EXTENSION_KEYS)}")
    apps = sorted({s["launch"][0] for s in setup if "launch" in s and s["launch"][0] != "sh"})
    task: dict[str, Any] = {
        "id": str(data.get("id") or path.stem),
        "goal": str(data["instruction"]),
        "setup": setup,
        "check": checks,
        "apps": apps,
        "tags": ["osworld"],
    }
    task.update({k: v for k, v in extra.items()})
    return task


# -- evaluation (used by deskpilot.eval.check_live for kind = "osworld") -----------------------

Getter = Callable[[dict[str, Any]], Any]


def _text_of(path: Any) -> str:
    try:
        return Path(str(path)).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CheckBroken(f"cannot read {path}: {exc.strerror}") from exc


def _rules(expected: Any) -> dict[str, Any]:
    if not isinstance(expected, dict):
        raise CheckBroken("this metric needs a 'rule' getter as expected value")
    return expected


def exact_match(result: Any, expected: Any, **_: Any) -> bool:
    return bool(result == _rules(expected).get("expected"))


def check_include_exclude(result: Any, expected: Any, **_: Any) -> bool:
    rules = _rules(expected)
    text = str(result or "")
    return all(s in text for s in rules.get("include", [])) and not any(
        s in text for s in rules.get("exclude", [])
    )


def match_in_list(result: Any, expected: Any, **_: Any) -> bool:
    return result in (_rules(expected).get("expected") or [])


def is_in_list(result: Any, expected: Any, **_: Any) -> bool:
    want = _rules(expected).get("expected")
    return want in (result or [])


def file_contains(result: Any, expected: Any, **_: Any) -> bool:
    text = _text_of(result)
    return all(s in text for s in _rules(expected).get("expected", []))


def compare_text_file(result: Any, expected: Any, **options: Any) -> bool:
    got, want = _text_of(result), _text_of(expected)
    if options.get("ignore_blanks"):
        got, want = re.sub(r"[\t\n ]", "", got), re.sub(r"[\t\n ]", "", want)
    if options.get("ignore_case"):
        got, want = got.lower(), want.lower()
    return got == want


def diff_text_file(result: Any, expected: Any, **_: Any) -> bool:
    return _text_of(result).splitlines() == _text_of(expected).splitlines()


METRICS: dict[str, Callable[..., bool]] = {
    "exact_match": exact_match,
    "check_include_exclude": check_include_exclude,
    "match_in_list": match_in_list,
    "is_in_list": is_in_list,
    "file_contains": file_contains,
    "compare_text_file": compare_text_file,
    "diff_text_file": diff_text_file,
}
