"""Software installs in OSWorld setup commands (``sudo apt-get install zsh -y``, ``pip install
cssselect``), done the only way a trial can do them.

OSWorld's VM is online and writable; a trial is neither (the host is mounted read-only and the
trial has no network), so an install run inside it fails and the task ends in a setup error.
What the step wants is the software, so the step is judged when the task loads: a package that
is installed here makes its install clause a no-op (dropped); one that is not makes the task
refused at load, naming what to install. Package-list refreshes (``apt-get update``) are
dropped. The command's other clauses (``… && xsel -bc``) run as before.

Only commands made of ``&&``/``;`` clauses are taken apart; anything else (pipes into an
install, loops) is left to run as written.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

#: "echo password | sudo -S …", "echo 'password' | sudo -S …", "sudo …" before a clause
SUDO = re.compile(r"^(?:echo\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s*\|\s*)?sudo(?:\s+-\S+)*\s+")
APT = re.compile(r"^(?:apt|apt-get|aptget)$")
PIP = re.compile(r"^(?:pip3?|python3?\s+-m\s+pip)$")


@dataclass(frozen=True)
class Install:
    """One package a setup command installs."""

    manager: str  # "apt" or "pip"
    package: str

    def advice(self) -> str:
        return (
            f"apt install {self.package}"
            if self.manager == "apt"
            else f"pip install {self.package}"
        )


def _words(clause: str) -> list[str] | None:
    try:
        return shlex.split(clause)
    except ValueError:
        return None


def parse_clause(clause: str) -> list[Install] | None:
    """The installs one clause makes ([] for a package-list refresh), or None when the clause
    is no install at all."""
    words = _words(SUDO.sub("", clause.strip()))
    if not words:
        return None
    if APT.match(words[0]):
        verb = [w for w in words[1:] if not w.startswith("-")]
        if verb[:1] == ["update"]:
            return []
        if verb[:1] == ["install"]:
            return [Install("apt", p) for p in verb[1:]]
        return None
    head = " ".join(words[:3]) if words[0].startswith("python") else words[0]
    if PIP.match(head):
        rest = words[3:] if words[0].startswith("python") else words[1:]
        verb = [w for w in rest if not w.startswith("-")]
        if verb[:1] == ["install"]:
            return [Install("pip", re.split(r"[<>=!~\[]", p, maxsplit=1)[0]) for p in verb[1:]]
    return None


def split_clauses(command: str) -> list[tuple[str, str]] | None:
    """``command``'s clauses, each with the separator before it (``""`` for the first,
    ``"&&"`` or ``";"``); None when it has other shell structure."""
    if any(c in command for c in "`$\n(){}") or "||" in command:
        return None
    parts = re.split(r"(&&|;)", command)
    clauses = [("", parts[0].strip())]
    clauses += [(parts[i], parts[i + 1].strip()) for i in range(1, len(parts), 2)]
    return clauses if all(c for _s, c in clauses) else None


def apt_installed(package: str) -> bool:
    """The Debian package is installed, or a program of that name is on PATH (``md5sum`` is a
    program in coreutils, not a package)."""
    try:
        status = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        status = ""
    return status.endswith("install ok installed") or shutil.which(package) is not None


def pip_installed(package: str) -> bool:
    """A Python on PATH (``python3`` or ``python``, as the task's commands would run) has the
    distribution."""
    probe = "import importlib.metadata as m, sys; m.distribution(sys.argv[1])"
    for python in ("python3", "python"):
        exe = shutil.which(python)
        if exe is None:
            continue
        try:
            done = subprocess.run(
                [exe, "-c", probe, package], capture_output=True, timeout=20, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return True
    return False


CHECKS: dict[str, Callable[[str], bool]] = {"apt": apt_installed, "pip": pip_installed}


@dataclass(frozen=True)
class Judged:
    """A setup command after its installs were judged: what is left to run (None: nothing),
    and the packages that are missing here."""

    rest: str | None
    missing: tuple[Install, ...]


def judge(command: str, checks: dict[str, Callable[[str], bool]] | None = None) -> Judged | None:
    """None when ``command`` installs nothing (run it as written)."""
    clauses = split_clauses(command)
    if clauses is None:
        return None
    parsed = [(sep, c, parse_clause(c)) for sep, c in clauses]
    if all(p is None for _s, _c, p in parsed):
        return None
    known = checks or CHECKS
    missing = tuple(i for _s, _c, p in parsed for i in (p or []) if not known[i.manager](i.package))
    rest = ""
    for sep, clause, installs in parsed:
        if installs is None:  # kept, joined to what is kept before it as it was
            rest = f"{rest} {sep} {clause}" if rest else clause
    return Judged(rest or None, missing)
