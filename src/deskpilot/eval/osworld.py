"""OSWorld task JSON, converted to deskpilot's task format.

OSWorld (xlang-ai/OSWorld) keeps one JSON file per task: ``instruction``, ``config`` (setup
steps), ``evaluator`` (``postconfig`` steps, getters that read state, metrics that compare
it). deskpilot runs such a file as OSWorld's VM would, inside the trial's own isolation:

==========================  ===================================================================
OSWorld                      deskpilot
==========================  ===================================================================
``launch``                   ``launch`` (GUI apps: waits for their window; others: started)
``execute``, ``command``     ``run`` (``stdout`` saved to the trial's cache for
                             ``cache_file``); ``python -c "import pyautogui…"`` runs with
                             pyautogui on the trial's display, ``sudo`` as root inside the
                             trial's namespace, ``google-chrome`` is Chromium; software
                             installs are judged at load (:mod:`.osworld_installs`)
``open``                     LibreOffice for office files, else ``xdg-open``
``download``                 ``write`` from the local file store (``{store}``; see
                             :mod:`deskpilot.eval.osworld_store`) or a file beside the task
``activate_window``          ``activate`` (wait for the window, give it the focus)
``close_window``             ``close_window``
``chrome_open_tabs``         ``open_url`` per URL
``sleep``                    dropped: deskpilot waits for readiness, and checks settle
``postconfig``               the same steps, run by the harness after the agent (not by it)
getters                      ``vm_file``, ``cloud_file``/``cache_file`` (the store / the
                             trial's cache), ``vm_command_line``, ``vm_command_error``, ``rule``
metrics                      :mod:`deskpilot.eval.osworld_metrics`
``infeasible``               an ``answer`` check: the agent's answer says it cannot be done
``conj``                     ``and`` → all checks, ``or`` → any
==========================  ===================================================================

``/home/user`` (OSWorld's VM home) is the trial's home (mapped in the trial's namespace, and
rewritten in commands and paths). A step, getter or metric deskpilot lacks is refused when the
file loads, naming what is missing. An optional ``"deskpilot"`` object adds ``oracle``,
``timeout``, ``max_steps``, ``apps``, ``family`` and ``tags`` (OSWorld ignores it).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Any

from deskpilot.errors import TaskError
from deskpilot.eval import osworld_installs
from deskpilot.eval.osworld_chrome import GETTERS as CHROME_GETTERS
from deskpilot.eval.osworld_store import store_path

VM_HOME = "/home/user"
EXTENSION_KEYS = ("oracle", "timeout", "max_steps", "apps", "family", "tags")
#: apps whose start is complete when their window shows (others are started and left)
GUI_APPS = frozenset(
    [
        "libreoffice",
        "soffice",
        "localc",
        "lowriter",
        "loimpress",
        "gimp",
        "vlc",
        "thunderbird",
        "chromium",
        "google-chrome",
        "google-chrome-stable",
        "code",
        "nautilus",
        "gedit",
        "mousepad",
        "eog",
        "evince",
        "firefox",
        "gnome-terminal",
        "xterm",
    ]
)
OFFICE = {
    ".xlsx": "--calc",
    ".xls": "--calc",
    ".ods": "--calc",
    ".csv": "--calc",
    ".docx": "--writer",
    ".doc": "--writer",
    ".odt": "--writer",
    ".rtf": "--writer",
    ".pptx": "--impress",
    ".ppt": "--impress",
    ".odp": "--impress",
}
SETUP_TYPES = (
    "launch",
    "execute",
    "command",
    "open",
    "download",
    "activate_window",
    "close_window",
    "chrome_open_tabs",
    "sleep",
)


def is_osworld(data: dict[str, Any]) -> bool:
    return "instruction" in data and "evaluator" in data


def _home(value: Any) -> Any:
    if isinstance(value, str):
        if value == VM_HOME or value.startswith(VM_HOME + "/"):
            return "~" + value[len(VM_HOME) :]
        return value
    if isinstance(value, list):
        return [_home(v) for v in value]
    return value


def _shell(text: str) -> str:
    return text.replace(VM_HOME, "$HOME")


def _argv(params: dict[str, Any], where: str) -> list[str]:
    command = params.get("command")
    if isinstance(command, str):
        if params.get("shell") or any(c in command for c in "|&;<>$`\n"):
            return ["sh", "-c", _shell(command)]
        try:
            return [str(_home(p)) for p in shlex.split(command)]
        except ValueError:
            return ["sh", "-c", _shell(command)]
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        if params.get("shell"):
            return ["sh", "-c", _shell(" ".join(command))]
        return [str(_home(c)) for c in command]
    raise TaskError(f"{where}: 'command' must be a string or a list of strings")


def _without_installs(params: dict[str, Any], at: str) -> dict[str, Any]:
    """``params`` with the command's software installs judged here (see
    :mod:`deskpilot.eval.osworld_installs`): ``command`` None when nothing is left to run."""
    command = params.get("command")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        text: Any = " ".join(command) if params.get("shell") else shlex.join(command)
    else:
        text = command
    if not isinstance(text, str):
        return params
    judged = osworld_installs.judge(text)
    if judged is None:
        return params
    if judged.missing:
        names = ", ".join(i.package for i in judged.missing)
        advice = "; ".join(i.advice() for i in judged.missing)
        raise TaskError(
            f"{at}: the task installs {names}, which this machine lacks (a trial is offline "
            f"and cannot install it: {advice} here first)"
        )
    return {**params, "command": judged.rest, "shell": True}


class Converter:
    """One task file's conversion; ``downloads`` collects the URLs it needs from the store."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.downloads: list[str] = []

    def source(self, url: str, where: str) -> str:
        """Where a downloaded file comes from: the store for a web URL, else a local file."""
        if url.startswith("file://"):
            return url[len("file://") :]
        if re.match(r"^[a-z][a-z0-9+.-]*://", url, re.I):
            try:
                rel = store_path(url)
            except TaskError as exc:
                raise TaskError(f"{where}: {exc}") from None
            self.downloads.append(url)
            return "{store}/" + rel
        if not url:
            raise TaskError(f"{where}: no url")
        return str((self.base / url).resolve())

    def steps(self, config: list[Any], where: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i, step in enumerate(config):
            at = f"{where}.{i}"
            if not isinstance(step, dict) or not isinstance(step.get("parameters", {}), dict):
                raise TaskError(f"{at}: a step is an object with 'type' and 'parameters'")
            out += self.step(str(step.get("type")), step.get("parameters") or {}, at)
        return out

    def step(self, kind: str, params: dict[str, Any], at: str) -> list[dict[str, Any]]:
        if kind == "launch":
            argv = _argv(params, at)
            if PurePosixPath(argv[0]).name == "socat" and any("9222" in a for a in argv):
                return []  # it exposes the browser's DevTools port: the trial reads its own
            if PurePosixPath(argv[0]).name in ("pkill", "killall", "kill"):
                # done before the next step starts (a browser started next is not killed);
                # nothing to end is no error
                return [{"run": ["sh", "-c", shlex.join(argv) + "; true"], "timeout": 30}]
            argv = [
                re.sub(r"^--remote-debugging-port=\d+$", "--remote-debugging-port={cdp_port}", a)
                for a in argv
            ]
            gui = PurePosixPath(argv[0]).name in GUI_APPS
            return [{"launch": argv, "ready": "window" if gui else "none", "timeout": 90}]
        if kind in ("execute", "command"):
            params = _without_installs(params, at)
            if params.get("command") is None:
                return []  # only installs of software this machine has
            argv = _argv(params, at)
            if PurePosixPath(argv[0]).name in ("libreoffice", "soffice") and any(
                a.startswith("--convert-to") for a in argv
            ):  # beside the running LibreOffice, which would take the job and not answer
                argv = [
                    argv[0],
                    "--headless",
                    "-env:UserInstallation=file://{cache}/lo-convert",
                    *argv[1:],
                ]
            step: dict[str, Any] = {"run": argv, "timeout": 120}
            if params.get("stdout"):
                step["stdout"] = str(params["stdout"])
            if params.get("stderr"):
                raise TaskError(f"{at}: 'stderr' of a command is not supported")
            return [step]
        if kind == "open":
            path = str(_home(str(params.get("path", ""))))
            flag = OFFICE.get(PurePosixPath(path).suffix.lower())
            if flag:  # ready when the document's window shows (not LibreOffice's splash)
                name = re.escape(PurePosixPath(path).name)
                return [
                    {
                        "launch": ["libreoffice", flag, path],
                        "ready": "window",
                        "window": name,
                        "timeout": 90,
                    }
                ]
            return [{"launch": ["xdg-open", path], "ready": "none"}]
        if kind == "download":
            files = params.get("files") or []
            if not isinstance(files, list) or not files:
                raise TaskError(f"{at}: a download lists its files")
            return [
                {
                    "write": _home(str(f.get("path", ""))),
                    "from": self.source(str(f.get("url", "")), f"{at}.files.{j}"),
                }
                for j, f in enumerate(files)
            ]
        if kind in ("activate_window", "close_window"):
            name = str(params.get("window_name", ""))
            if params.get("by_class"):
                raise TaskError(f"{at}: a window named by its class is not supported")
            pattern = f"^{re.escape(name)}$" if params.get("strict") else re.escape(name)
            # Google Chrome is Chromium in a trial, and so are its windows' titles
            pattern = pattern.replace(re.escape("Google Chrome"), "(?:Google Chrome|Chromium)")
            if kind == "close_window":
                return [{"close_window": pattern, "timeout": 30}]
            # OSWorld goes on when the window is not there (a document the agent never saved)
            post = at.startswith("evaluator.postconfig")
            return [{"activate": pattern, "timeout": 10 if post else 60, "required": False}]
        if kind == "chrome_open_tabs":  # in the task's browser (its DevTools port)
            return [{"open_tab": str(u)} for u in params.get("urls_to_open") or []]
        if kind == "sleep":
            return []
        raise TaskError(
            f"{at}: OSWorld step {kind!r} is not supported (supported: {', '.join(SETUP_TYPES)})"
        )

    def getter(self, spec: Any, where: str) -> dict[str, Any]:
        from deskpilot.eval.osworld_metrics import GETTERS

        if not isinstance(spec, dict) or spec.get("type") not in GETTERS:
            got = spec.get("type") if isinstance(spec, dict) else spec
            raise TaskError(
                f"{where}: OSWorld getter {got!r} is not supported (supported: "
                f"{', '.join(GETTERS)})"
            )
        kind = spec["type"]
        out: dict[str, Any] = {"type": kind}
        if kind == "rule":
            out["rules"] = spec.get("rules", {})
            return out
        if kind in CHROME_GETTERS:
            return {k: v for k, v in spec.items() if k not in ("goto_prefix",)}
        if kind == "vlc_config":  # VLC's settings in the VM user's home
            return {"type": "vm_file", "path": "~/.config/vlc/vlcrc"}
        if kind == "gimp_config_file":
            name = str(spec.get("file_name", ""))
            if not name or "/" in name:
                raise TaskError(f"{where}: gimp_config_file needs a file_name")
            return {"type": "vm_file", "path": f"~/.config/GIMP/2.10/{name}"}
        if kind in ("vm_command_line", "vm_command_error"):
            command = spec.get("command")
            if isinstance(command, str):  # run by sh -c: the VM's home is $HOME
                out["command"] = _shell(command)
            elif isinstance(command, list):
                out["command"] = [str(c).replace(VM_HOME, "{home}") for c in command]
            else:
                raise TaskError(f"{where}: {kind} needs a command")
            if spec.get("shell") and isinstance(command, list):
                out["command"] = _shell(" ".join(command))
            return out
        paths = spec.get("path")
        many = bool(spec.get("multi"))
        listed = paths if many and isinstance(paths, list) else [paths]
        gives = spec.get("gives", [0]) if many else [0]
        chosen = [
            str(listed[i])
            for i in gives
            if isinstance(i, int) and i < len(listed) and isinstance(listed[i], str) and listed[i]
        ]
        if not chosen:
            raise TaskError(f"{where}: {kind} needs a path")
        if kind == "vm_file":
            resolved = [str(_home(p)) for p in chosen]
        elif kind == "cache_file":
            resolved = ["{cache}/" + p.lstrip("/") for p in chosen]
        else:
            resolved = [self.source(p, where) for p in chosen]
        out["path"] = resolved if many and len(resolved) > 1 else resolved[0]
        return out

    def checks(self, evaluator: dict[str, Any]) -> list[dict[str, Any]]:
        funcs = evaluator.get("func")
        if funcs == "infeasible" or funcs == ["infeasible"]:
            return [{"kind": "answer", "infeasible": True}]
        many = isinstance(funcs, list)
        names = funcs if isinstance(funcs, list) else [funcs]
        if not names or not all(isinstance(n, str) and n for n in names):
            raise TaskError("evaluator.func names the metric(s)")

        def nth(key: str, i: int) -> Any:
            value = evaluator.get(key)
            return value[i] if many and isinstance(value, list) and i < len(value) else value

        checks: list[dict[str, Any]] = []
        for i, func in enumerate(names):
            where = f"evaluator.func.{i}" if many else "evaluator.func"
            if func == "infeasible":
                checks.append({"kind": "answer", "infeasible": True})
                continue
            expected = nth("expected", i)
            options = nth("options", i) or {}
            if not isinstance(options, dict):
                raise TaskError(f"{where}: options must be an object")
            checks.append(
                {
                    "kind": "osworld",
                    "func": func,
                    "result": self.getter(nth("result", i), f"{where} result"),
                    "expected": self.getter(expected, f"{where} expected") if expected else None,
                    "options": options,
                }
            )
        conj = evaluator.get("conj", "and")
        if conj not in ("and", "or"):
            raise TaskError(f"evaluator.conj: 'and' or 'or', not {conj!r}")
        if len(checks) > 1:
            return [{"kind": "all" if conj == "and" else "any", "of": checks}]
        return checks


def _check_problems(checks: list[dict[str, Any]]) -> list[str]:
    from deskpilot.eval.osworld_metrics import osworld_problems
    from deskpilot.eval.task import OsworldCheck

    found: list[str] = []
    flat: list[dict[str, Any]] = []
    for chk in checks:
        flat += list(chk.get("of") or []) if chk.get("kind") in ("all", "any") else [chk]
    for i, check in enumerate(flat):
        if check.get("kind") != "osworld":
            continue
        try:
            model = OsworldCheck.model_validate(check)
        except ValueError:
            continue
        found += [f"evaluator.func.{i}: {p}" for p in osworld_problems(model)]
    return found


def convert(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """OSWorld task JSON → deskpilot task data (validated by the caller). Every problem
    found is listed in the error."""
    evaluator = data.get("evaluator")
    if not isinstance(evaluator, dict):
        raise TaskError(f"{path}: 'evaluator' must be an object")
    config = data.get("config") or []
    if not isinstance(config, list):
        raise TaskError(f"{path}: 'config' must be a list of setup steps")
    conv = Converter(path.parent)
    found: list[str] = []
    setup: list[dict[str, Any]] = []
    post: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    for i, raw in enumerate(config):
        try:
            setup += conv.steps([raw], "config")
        except TaskError as exc:
            found.append(str(exc).replace("config.0", f"config.{i}", 1))
    for i, raw in enumerate(evaluator.get("postconfig") or []):
        try:
            post += conv.steps([raw], "evaluator.postconfig")
        except TaskError as exc:
            found.append(str(exc).replace("postconfig.0", f"postconfig.{i}", 1))
    try:
        checks = conv.checks(evaluator)
    except TaskError as exc:
        found.append(str(exc))
    extra = data.get("deskpilot") or {}
    if not isinstance(extra, dict) or set(extra) - set(EXTENSION_KEYS):
        found.append(f"'deskpilot' may hold {', '.join(EXTENSION_KEYS)}")
    if found:  # the file fails: name what its checks get wrong too
        found += _check_problems(checks)
        raise TaskError(f"{path}: {'; '.join(found)}")
    apps = sorted({s["launch"][0] for s in setup if "launch" in s and s["launch"][0] != "sh"})
    task: dict[str, Any] = {
        "id": str(data.get("id") or path.stem),
        "goal": str(data["instruction"]),
        "setup": setup,
        "postconfig": post,
        "check": checks,
        "apps": apps,
        "tags": ["osworld"],
        "downloads": list(dict.fromkeys(conv.downloads)),
        "settle": 10.0,  # OSWorld waits after its postconfig; deskpilot reads until stable
    }
    snapshot = data.get("snapshot")
    if isinstance(snapshot, str) and snapshot:
        task["family"] = f"osworld-{snapshot}"
    task.update({k: v for k, v in extra.items()})
    return task
