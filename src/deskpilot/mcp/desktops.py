"""Where the MCP server's desktop comes from: the configured (or discovered) one, or a sandbox.

Both are openers for :class:`~deskpilot.desktop.live.LiveDesktop`, called on the first tool
call that needs the desktop and again after it was lost; both get it from the one place
helper (:mod:`deskpilot.desktop.place`). Nothing runs at server start, so the server answers
``initialize`` and ``tools/list`` at once and anywhere, and a client's probe (the TypeScript
SDK probes stdio servers on a throwaway sibling process) never starts one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import anyio.to_thread

from deskpilot.config import Settings
from deskpilot.desktop.base import Desktop
from deskpilot.desktop.place import open_here, open_sandbox, start_sandbox
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.kept import is_alive

Say = Callable[[str], None]


def configured_desktop(settings: Settings, say: Say) -> Callable[[], Awaitable[Desktop]]:
    """Open the desktop the settings name, discovering it when they name none."""

    async def opener() -> Desktop:
        resolved, desktop = await open_here(settings)  # at every (re)open: it may have moved
        found = resolved.desktop_source
        source = f" (found through {found})" if found and found != "DISPLAY" else ""
        say(f"working on display {resolved.display}{source}")
        return desktop

    return opener


class SandboxDesktop:
    """Start a private sandbox desktop on first use (a new one if it died); stop it at exit.

    The desktop gets ``base`` (the user's config, state, data and the server's flags) pointed
    at the sandbox."""

    def __init__(self, base: Settings, say: Say) -> None:
        self.base = base
        self.say = say
        self.box: Sandbox | None = None

    async def __call__(self) -> Desktop:
        box = self.box
        if box is None or box.info is None or not is_alive(box.info):
            if box is not None:
                self.say("the sandbox desktop died; starting a new one (its apps are gone)")
                await anyio.to_thread.run_sync(box.stop)
            self.box = None
            box = await start_sandbox(self.base)
            self.box = box
            assert box.info is not None
            info = box.info
            self.say(f"sandbox desktop {info.display} is up ({info.width}x{info.height})")
        _settings, desktop = await open_sandbox(box, self.base)
        return desktop

    def stop(self) -> None:
        if self.box is not None:
            with contextlib.suppress(Exception):
                self.box.stop()
        self.box = None
