"""Where a console session runs: a new sandbox desktop of its own, or this desktop.

:func:`open_place` gives a session its settings and its desktop, and takes everything down
again when the session ends or is stopped:

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
import dataclasses
import os
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings, resolve_desktop
from deskpilot.desktop.base import Desktop
from deskpilot.desktop.linux import LinuxDesktop
from deskpilot.errors import SandboxError
from deskpilot.sandbox import Sandbox, SandboxInfo
from deskpilot.sandbox.info import sandbox_command_env
from deskpilot.sandbox.processes import processes_of
from deskpilot.serve.shared_input import InputLocks, shared

Target = Literal["sandbox", "desktop"]
TARGETS: tuple[Target, ...] = ("sandbox", "desktop")


@dataclass
class Place:
    target: Target
    settings: Settings
    #: the session's desktop (input serialised when shared)
    desktop: Desktop
    #: the real desktop underneath
    raw: LinuxDesktop
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


def sandbox_settings(base: Settings, info: SandboxInfo) -> Settings:
    """``base`` (the user's config, state and data) pointed at the sandbox's display."""
    return dataclasses.replace(
        base,
        environ=sandbox_command_env(base.environ, info),
        display=info.display,
        session_bus=info.session_bus,
        a11y_bus=None,
        xauthority=None,
        sandbox_dir=info.runtime_dir,
        desktop_source="sandbox",
    )


@contextlib.asynccontextmanager
async def open_place(
    settings: Settings, target: Target, locks: InputLocks, *, size: tuple[int, int] = (1280, 800)
) -> AsyncIterator[Place]:
    if target == "sandbox":
        box = Sandbox(width=size[0], height=size[1], base_env=settings.environ)
        starting = asyncio.ensure_future(asyncio.to_thread(box.start))
        try:
            info = await asyncio.shield(starting)
        except BaseException:
            # stopped while the desktop starts (in a thread): let it finish, then take it down
            with contextlib.suppress(BaseException):
                await starting
            await asyncio.shield(asyncio.to_thread(box.stop))
            raise
        try:
            here = sandbox_settings(settings, info)
            raw = await LinuxDesktop.open(here)
        except BaseException:
            await asyncio.shield(asyncio.to_thread(box.stop))
            raise
        place = Place("sandbox", here, raw, raw, sandbox=box)
    else:
        here = resolve_desktop(settings)
        raw = await LinuxDesktop.open(here)
        place = Place("desktop", here, shared(raw, locks.of(here.display or "")), raw)
    try:
        yield place
    finally:
        await asyncio.shield(_close(place))


async def _close(place: Place) -> None:
    if place.sandbox is None:
        place.launched |= set(place.raw.launched_pids())
    with contextlib.suppress(Exception):
        await asyncio.wait_for(place.raw.close(), 10)
    if place.sandbox is not None:
        await asyncio.to_thread(place.sandbox.stop)
        return
    await kill_all(place.launched)


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
