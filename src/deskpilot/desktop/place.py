"""Where deskpilot runs: a new sandbox desktop of its own, or this desktop — in one place.

Every surface that needs a desktop gets it here (the CLI and the Python API through
:func:`deskpilot.runtime.open_session`, the MCP server, the console's sessions and window
picker, eval trials, the demo), instead of each rebuilding sandbox → settings → desktop:

* :func:`sandbox_settings` — the user's settings (config, state, data, keys) pointed at a
  sandbox's display and buses;
* :func:`start_sandbox` — a sandbox started in a worker thread, taken down again if the caller
  is cancelled meanwhile; :func:`running_sandbox` — one for the duration of a block, with the
  settings pointed at it (surfaces that open their desktops through sessions: the demo);
* :func:`open_place` — a context manager giving a :class:`Place`: the settings, the opened
  desktop and the sandbox (if any), and closing all of it at the end (the sandbox stopped:
  every process on it ends);
* :func:`open_here` — the desktop these settings name (discovered where they name none).

The desktop itself comes from the backend registry (:mod:`deskpilot.desktop.registry`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from deskpilot.config import Settings
from deskpilot.desktop import registry
from deskpilot.desktop.base import OpenedDesktop
from deskpilot.sandbox import Sandbox, SandboxInfo
from deskpilot.sandbox.info import sandbox_command_env

Target = Literal["sandbox", "desktop"]
TARGETS: tuple[Target, ...] = ("sandbox", "desktop")


@dataclass
class Place:
    """A desktop to work on, and what it runs on."""

    target: Target
    settings: Settings
    desktop: OpenedDesktop
    sandbox: Sandbox | None = None

    @property
    def display(self) -> str:
        return self.settings.display or ""


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


async def start_sandbox(settings: Settings, *, size: tuple[int, int] = (1280, 800)) -> Sandbox:
    """A new sandbox desktop, started in a thread; stopped again when the caller is cancelled
    while it starts."""
    box = Sandbox(
        width=size[0],
        height=size[1],
        base_env=settings.environ,
        kind=registry.sandbox_kind(settings),
    )
    starting = asyncio.ensure_future(asyncio.to_thread(box.start))
    try:
        await asyncio.shield(starting)
    except BaseException:
        # stopped while the desktop starts (in a thread): let it finish, then take it down
        with contextlib.suppress(BaseException):
            await starting
        await asyncio.shield(asyncio.to_thread(box.stop))
        raise
    return box


@contextlib.asynccontextmanager
async def running_sandbox(
    settings: Settings, *, size: tuple[int, int] = (1280, 800)
) -> AsyncIterator[tuple[Sandbox, Settings]]:
    """A new sandbox for the block, and ``settings`` pointed at it; stopped at the end."""
    box = await start_sandbox(settings, size=size)
    try:
        assert box.info is not None
        yield box, sandbox_settings(settings, box.info)
    finally:
        await asyncio.shield(asyncio.to_thread(box.stop))


async def open_here(settings: Settings) -> tuple[Settings, OpenedDesktop]:
    """This desktop: the settings with it filled in (discovery), and it opened."""
    here = registry.resolve(settings)
    return here, await registry.open_resolved(here)


async def open_sandbox(box: Sandbox, settings: Settings) -> tuple[Settings, OpenedDesktop]:
    """The desktop of a started sandbox, for ``settings`` pointed at it."""
    assert box.info is not None
    here = sandbox_settings(settings, box.info)
    return here, await registry.open_resolved(here)


@contextlib.asynccontextmanager
async def open_place(
    settings: Settings, target: Target, *, size: tuple[int, int] = (1280, 800)
) -> AsyncIterator[Place]:
    """A place to work (see the module docstring); closed (and a sandbox stopped) at the end,
    even when the caller is cancelled."""
    if target == "sandbox":
        box = await start_sandbox(settings, size=size)
        try:
            here, desktop = await open_sandbox(box, settings)
        except BaseException:
            await asyncio.shield(asyncio.to_thread(box.stop))
            raise
        place = Place("sandbox", here, desktop, box)
    else:
        here, desktop = await open_here(settings)
        place = Place("desktop", here, desktop)
    try:
        yield place
    finally:
        await asyncio.shield(close_place(place))


async def close_place(place: Place, timeout: float = 10.0) -> None:
    """Close the place's desktop (at most ``timeout`` seconds), then stop its sandbox."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(place.desktop.close(), timeout)
    if place.sandbox is not None:
        await asyncio.to_thread(place.sandbox.stop)
