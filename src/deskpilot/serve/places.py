"""Where a console session runs: a new sandbox desktop of its own, or this desktop.

:func:`open_place` gives a session its settings and its desktop (both from the one place
helper, :mod:`deskpilot.desktop.place`), and takes everything down again when the session ends
or is stopped:

* ``sandbox``: a fresh :class:`~deskpilot.sandbox.Sandbox` (Xvfb, buses, window manager);
  at the end it is stopped, which kills every process on it (its process group, its runtime
  directory's users, the apps recorded as spawned on it, and their descendants).
* ``desktop``: the desktop deskpilot works on (the configured or discovered display), through a
  connection of the session's own; raw input goes through the display's lock
  (:mod:`deskpilot.serve.shared_input`). At the end the apps this session launched are killed
  with their process groups and descendants; the user's other windows are left alone.

:attr:`Place.pids` lists the processes the session started (shown for tests and the card).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop import place as places
from deskpilot.desktop.base import Desktop, OpenedDesktop
from deskpilot.desktop.place import TARGETS, Target
from deskpilot.errors import SandboxError
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.processes import processes_of
from deskpilot.serve.shared_input import InputLocks, shared

__all__ = ["TARGETS", "Place", "Target", "kill_all", "open_place"]


@dataclass
class Place:
    target: Target
    settings: Settings
    #: the session's desktop (input serialised when shared)
    desktop: Desktop
    #: the real desktop underneath
    raw: OpenedDesktop
    sandbox: Sandbox | None = None
    launched: set[int] = field(default_factory=set)

    @property
    def display(self) -> str:
        return self.settings.display or ""

    def pids(self) -> list[int]:
        """Processes this session started that are still alive."""
        if self.sandbox is not None and self.sandbox.info is not None:
            return processes_of(self.sandbox.info.runtime_dir, self.sandbox.info.pgid)
        self.launched |= set(self.raw.launched_pids())
        alive = {p for p in _procfs.descendants(self.launched) if not _procfs.is_zombie(p)}
        return sorted(alive - {os.getpid()})


@contextlib.asynccontextmanager
async def open_place(
    settings: Settings, target: Target, locks: InputLocks, *, size: tuple[int, int] = (1280, 800)
) -> AsyncIterator[Place]:
    launched: set[int] = set()
    try:
        async with places.open_place(settings, target, size=size) as base:
            raw = base.desktop
            if base.sandbox is None:  # this desktop: raw input goes through the display's lock
                place = Place(target, base.settings, shared(raw, locks.of(base.display)), raw)
            else:
                place = Place(target, base.settings, raw, raw, sandbox=base.sandbox)
            place.launched = launched
            try:
                yield place
            finally:
                if base.sandbox is None:
                    launched |= set(raw.launched_pids())
    finally:
        if target == "desktop":
            await asyncio.shield(kill_all(launched))


async def kill_all(roots: set[int], grace: float = 2.0) -> None:
    """End ``roots``, their process groups and every descendant; SIGKILL what stays."""
    if not roots:
        return
    family = _procfs.descendants(roots) - {os.getpid()}
    for pid in roots:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGTERM)
    for pid in family:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)

    async def gone() -> bool:
        return all(_procfs.is_zombie(p) for p in family)

    try:
        await async_wait_for(gone, timeout=grace, what="the session's processes to exit")
    except WaitTimeout:
        for pid in family:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            await async_wait_for(gone, timeout=3.0, what="the session's processes to die")
        except WaitTimeout as exc:
            left = [p for p in family if not _procfs.is_zombie(p)]
            raise SandboxError(f"processes of the session survived Stop: {left}") from exc
