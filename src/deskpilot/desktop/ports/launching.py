"""The launching port: the installed apps, and starting processes in the desktop's environment.

``apps`` is the catalogue (desktop files on Linux, bundles on macOS); ``argv_for`` is how to
start an app so that its accessibility is on (Chromium and Electron apps need flags, office
suites no splash window); ``spawn`` starts a command in its own session with the environment
apps get on this desktop (a sandbox's private home, accessibility switched on), its output to
a log under ``logs``; ``launched_pids`` are the spawned processes still running and ``family``
a set of processes with all their descendants. Waiting for
the window that a launch opens is a skill (:mod:`deskpilot.desktop.skills.launching`), not the
launcher's business. ``agent_browser`` is the Chromium deskpilot drives pages in (None when it
is not installed) and ``browser_flags`` the flags it needs here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from deskpilot.desktop.base import AppEntry


@runtime_checkable
class Spawned(Protocol):
    """A started process (``subprocess.Popen`` is one)."""

    @property
    def pid(self) -> int: ...

    @property
    def args(self) -> Any: ...

    def poll(self) -> int | None: ...


@runtime_checkable
class Launcher(Protocol):
    @property
    def logs(self) -> Path:
        """Where spawned apps' output goes (named in errors)."""
        ...

    async def apps(self) -> list[AppEntry]: ...

    def argv_for(self, app: AppEntry) -> list[str]: ...

    def spawn(self, argv: Sequence[str]) -> Spawned: ...

    def spawn_unprivileged(self, argv: Sequence[str]) -> Spawned | None:
        """Start ``argv`` again as the desktop's unprivileged user, for an app that refused
        to run as root; None when there is no such user (not root, not a sandbox)."""
        ...

    def launched_pids(self) -> list[int]: ...

    def reap(self) -> None:
        """Forget (and collect) the started processes that exited."""
        ...

    def family(self, pids: Iterable[int]) -> set[int]:
        """The processes and all their descendants (to tell whose a new window is)."""
        ...

    def agent_browser(self) -> str | None: ...

    def browser_flags(self) -> list[str]: ...

    async def close(self) -> None: ...
