"""What a checker may look at (:class:`CheckEnv`) and the helpers every kind of check shares."""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from deskpilot.errors import CheckBroken, CheckFailed
from deskpilot.eval.server import RequestLog

#: the home of OSWorld's VM user: inside a trial it is the sandbox's home
VM_HOME = "/home/user"


@dataclass
class Captured:
    """A process started by setup with ``capture``: its Popen and where its stdout goes."""

    proc: subprocess.Popen[bytes]
    stdout: Path


@dataclass
class CheckEnv:
    """What checkers may look at; none of it is the agent's tools or words."""

    home: Path
    app_env: Mapping[str, str]
    display: str
    variables: dict[str, str] = field(default_factory=dict)
    #: the desktop's backend: window titles are read by it, on a connection of its own (on a
    #: Wayland session, Xwayland's X11 titles are only its X11 apps')
    backend: str = "auto"
    http: RequestLog | None = None
    captured: dict[str, Captured] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # path → sha256 written by setup
    #: the agent's final answer (set once the agent is done)
    answer: str | None = None
    #: descriptors of the hidden task folder and file store ({task_dir}, {store}): passed
    #: to the harness's own commands (setup ``run``, checks), never to the apps
    private_fds: tuple[int, ...] = ()

    def expand(self, text: str) -> str:
        for name, value in self.variables.items():
            text = text.replace("{" + name + "}", value)
        return text

    def path(self, text: str) -> Path:
        text = self.expand(text)
        if text == "~" or text.startswith("~/"):
            return self.home / text[2:]
        if text == VM_HOME or text.startswith(VM_HOME + "/"):  # OSWorld's home, mapped
            return self.home / text[len(VM_HOME) + 1 :]
        path = Path(text)
        return path if path.is_absolute() else self.home / path


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def show(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def require_strings(text: str, contains: list[str], excludes: list[str], what: str) -> None:
    missing = [s for s in contains if s not in text]
    if missing:
        raise CheckFailed(f"{what} lacks {', '.join(map(show, missing))}")
    present = [s for s in excludes if s in text]
    if present:
        raise CheckFailed(f"{what} contains {', '.join(map(show, present))}")


def parse_number(text: str) -> float | None:
    cleaned = re.sub(r"[\s\u2009\u202f\xa0,]", "", text).replace("−", "-")
    try:
        return float(cleaned)
    except ValueError:
        return None


def run_command(argv: list[str], env: CheckEnv) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [env.expand(a) for a in argv],
            env=dict(env.app_env),
            cwd=env.home,
            pass_fds=env.private_fds,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except FileNotFoundError as exc:
        raise CheckBroken(f"cannot run {argv[0]!r}: not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise CheckBroken(f"{argv[0]} did not finish within 30 s") from exc
