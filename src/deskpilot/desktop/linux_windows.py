"""The desktop's windows and apps: listing, identifying, activating, minimizing, closing.

The base layer of :class:`~deskpilot.desktop.linux.LinuxDesktop`: it holds the X display, the
accessibility side and the settings, knows the app catalogue (read with the environment apps
get: a sandbox's private home, accessibility on) and which of the apps it started still run.
Each layer above adds one capability: pixels, reading, launching, raw input, element actions.
"""

from __future__ import annotations

import subprocess

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop import apps as appcat
from deskpilot.desktop.a11yenv import accessible_env
from deskpilot.desktop.atspi import Accessibility
from deskpilot.desktop.base import AppEntry, WindowInfo
from deskpilot.desktop.x11 import X11, XWindow, exe_name

#: Apps launched by this process that may still run (see LinuxDesktop._reap).
_LAUNCHED: list[subprocess.Popen[bytes]] = []


class LinuxWindows:
    """Windows and apps of an X display with its accessibility bus."""

    def __init__(self, settings: Settings, x11: X11, a11y: Accessibility) -> None:
        self.settings = settings
        self.x = x11
        self.a11y = a11y
        self._catalogue: list[AppEntry] | None = None
        self._children: list[subprocess.Popen[bytes]] = []

    def _reap(self) -> None:
        self._children = [p for p in self._children if p.poll() is None]
        # apps outlive this object: keep their Popen objects referenced (no "still running"
        # warning from Popen.__del__) until they exit
        _LAUNCHED.extend(p for p in self._children if p not in _LAUNCHED)
        _LAUNCHED[:] = [p for p in _LAUNCHED if p.poll() is None]

    def launched_pids(self) -> list[int]:
        """PIDs of the apps this desktop started that still run (each leads its own group)."""
        return [p.pid for p in self._children if p.poll() is None]

    # -- windows and apps ------------------------------------------------------------------

    async def apps(self) -> list[AppEntry]:
        if self._catalogue is None:
            self._catalogue = appcat.load_catalogue(self._app_env())
        return self._catalogue

    def _info(self, w: XWindow, active: int | None, catalogue: list[AppEntry]) -> WindowInfo:
        exe = exe_name(w.pid) if w.pid else ""
        app = appcat.identify(w.pid, w.wm_class, exe, catalogue)
        return WindowInfo(
            handle=w.xid,
            pid=w.pid,
            title=w.title,
            app=app,
            geometry=w.geometry,
            active=w.xid == active,
            hidden=w.hidden,
            desktop=w.desktop,
        )

    async def list_windows(self) -> list[WindowInfo]:
        self._reap()
        catalogue = await self.apps()
        active = self.x.active_xid()
        return [self._info(w, active, catalogue) for w in self.x.windows()]

    async def active_window(self) -> WindowInfo | None:
        active = self.x.active_xid()
        if active is None:
            return None
        w = self.x.window(active)
        return None if w is None else self._info(w, active, await self.apps())

    async def activate(self, window: WindowInfo) -> bool:
        async def active() -> bool:
            return self.x.active_xid() == window.xid

        for _ in range(2):  # the WM occasionally ignores an activation right after another
            self.x.request_activate(window.xid)
            try:
                await async_wait_for(active, timeout=1.0, what="the window to become active")
                return True
            except WaitTimeout:
                continue
        return False

    def _app_env(self) -> dict[str, str]:
        env = dict(self.settings.environ)
        if self.settings.display:
            env["DISPLAY"] = self.settings.display
        if self.settings.sandbox_dir:
            from deskpilot.sandbox.info import SandboxInfo, sandbox_app_env

            info = SandboxInfo(
                display=self.settings.display or "",
                pgid=0,
                width=0,
                height=0,
                runtime_dir=self.settings.sandbox_dir,
                session_bus=self.settings.session_bus or "",
            )
            return sandbox_app_env(env, info)
        return accessible_env(env)

    async def _refresh(self, window: WindowInfo) -> WindowInfo | None:
        w = self.x.window(window.xid)
        return None if w is None else self._info(w, self.x.active_xid(), await self.apps())

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        active = self.x.active_xid()
        catalogue = await self.apps()
        for xid in reversed(self.x.client_ids(stacking=True)):
            w = self.x.window(xid)
            if w is not None and not w.hidden and w.geometry.contains(x, y):
                return self._info(w, active, catalogue)
        return None

    async def minimize(self, window: WindowInfo) -> None:
        self.x.request_minimize(window.xid)

        async def hidden() -> bool:
            w = self.x.window(window.xid)
            return w is not None and w.hidden

        await async_wait_for(hidden, timeout=2.0, what="the window to minimize")

    async def close_window(self, window: WindowInfo) -> None:
        self.x.request_close(window.xid)
