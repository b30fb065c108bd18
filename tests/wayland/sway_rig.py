"""One headless sway sandbox per test module, driven in-process through the real ToolSet: the
Wayland tier's rig for the toolkit and surface modules (``test_sway_toolkits.py``,
``test_sway_surfaces.py``). The CLI's own round trip is ``test_tools_sway.py``'s.

``sway_rig`` (a module-scoped async fixture, on the session loop) gives a :class:`SwayRig`: the
sandbox, its settings, an opened desktop (the registry picks ``wlroots``), ``call`` through
``computer_use_tools()``, ``spawn`` for apps started on the sandbox, and the compositor's own
view of the windows (sway's IPC: a channel the tools' window port also uses, so effects are
checked through the apps' own output instead).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.base import OpenedDesktop, WindowInfo
from deskpilot.desktop.ports.identity import is_new
from deskpilot.desktop.registry import open_resolved
from deskpilot.desktop.wayland.sway import SwayIpc, SwayWindow
from deskpilot.events import discard
from deskpilot.policy import AllowAll
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from tests.wayland.conftest import require

FIXTURES = Path(__file__).parents[1] / "fixtures" / "apps"


@dataclass
class SwayRig:
    sandbox: Sandbox
    settings: Settings
    desktop: OpenedDesktop
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    session: Session = field(default_factory=Session)  # the IDs reads gave, for later calls

    @property
    def runtime_dir(self) -> str:
        assert self.sandbox.info is not None
        return self.sandbox.info.runtime_dir

    @property
    def home(self) -> Path:
        assert self.sandbox.info is not None
        return Path(self.sandbox.info.home)

    def ctx(self) -> ToolContext:
        return ToolContext(
            desktop=self.desktop,
            settings=self.settings,
            audit=discard,
            session=self.session,
            approver=AllowAll(),
        )

    async def call(
        self, name: str, args: dict[str, Any] | None = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        return await computer_use_tools().call(name, args or {}, ctx or self.ctx())

    def give(self, path: Path) -> Path:
        """A file the test made, handed to the sandbox's user (the apps run as that user)."""
        if self.sandbox.user is not None:
            self.sandbox.user.own(str(path))
        return path

    async def spawn(
        self,
        argv: list[str],
        *,
        match: Callable[[WindowInfo], bool],
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> WindowInfo:
        """Start ``argv`` on the sandbox; wait for its window and for its tree."""
        before = await self.desktop.window_handles()
        proc = self.sandbox.spawn(argv, env=env, log=f"{Path(argv[0]).name}.log")
        self.procs.append(proc)

        async def window() -> WindowInfo | None:
            for w in await self.desktop.list_windows():
                if is_new(before, w.handle, w.pid) and w.title and match(w):
                    return w
            return None

        found = await async_wait_for(window, timeout=timeout, what=f"a window of {argv[0]}")
        await self.desktop.wait_tree_ready(found, timeout)
        return found

    async def views(self) -> list[SwayWindow]:
        """The windows as sway's own tree has them."""
        assert self.sandbox.info is not None
        ipc = await SwayIpc.connect(self.sandbox.info.extra_env["SWAYSOCK"])
        try:
            return await ipc.windows()
        finally:
            await ipc.close()

    async def close(self, window: WindowInfo) -> None:
        """Kill a window's app and wait until sway no longer lists it."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(window.pid, signal.SIGKILL)

        async def gone() -> bool:
            return not any(v.pid == window.pid for v in await self.views())

        await async_wait_for(gone, timeout=15, what=f"{window.title!r} to close")

    def log(self, name: str) -> list[str]:
        path = Path(self.runtime_dir, name)
        return path.read_text().splitlines() if path.exists() else []


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def sway_rig(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SwayRig]:
    require("sway")
    with Sandbox(kind="sway", width=1280, height=800) as sb:
        assert sb.info is not None
        env = sb.app_env()
        env["DESKPILOT_SANDBOX"] = sb.info.runtime_dir
        env["DESKPILOT_HOME"] = str(tmp_path_factory.mktemp("dphome"))
        settings = load_settings(env=env).with_overrides(confirm="none")
        desktop = await open_resolved(settings)
        rig = SwayRig(sb, settings, desktop)
        try:
            assert desktop.backend == "wlroots"
            yield rig
        finally:
            for proc in rig.procs:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            await desktop.close()
