"""The X11 window system: EWMH windows of one display, as the windows port.

Windows are the window manager's clients (``_NET_CLIENT_LIST``), named by their X window id
(the handle), identified against the app catalogue (desktop id, ``WM_CLASS``, executable);
the active window is the client holding the keyboard (:mod:`.focus`); activation is a
``_NET_ACTIVE_WINDOW`` request, over once the window manager names the window and the focus is
in it, asked again once if the window manager ignored the first (it occasionally does right
after another activation). Popups are the client's override-redirect windows above it
(:mod:`.popups`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop import apps as appcat
from deskpilot.desktop.base import AppEntry, AppIdentity, Rect, WindowInfo
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.desktop.x11.display import X11, XWindow
from deskpilot.desktop.x11.focus import active_client, settled_on
from deskpilot.desktop.x11.popups import popups_over

Catalogue = Callable[[], Awaitable[list[AppEntry]]]


class X11Windows:
    """Windows and the screen of an X display (see the module docstring)."""

    def __init__(self, x11: X11, catalogue: Catalogue) -> None:
        self.x = x11
        self._catalogue = catalogue
        #: each window's app, by (pid, WM_CLASS) and the catalogue matched against
        self._apps: dict[tuple[int, tuple[str, ...], int], AppIdentity] = {}

    def _info(self, w: XWindow, active: int | None, catalogue: list[AppEntry]) -> WindowInfo:
        known = (w.pid, w.wm_class, id(catalogue))
        app = self._apps.get(known) if w.pid else None
        if app is None:
            exe = _procfs.exe_name(w.pid) if w.pid else ""
            app = appcat.identify(w.pid, w.wm_class, exe, catalogue)
            if len(self._apps) > 1024:
                self._apps.clear()
            self._apps[known] = app
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
        catalogue = await self._catalogue()
        windows = self.x.windows()
        active = active_client(self.x, {w.xid for w in windows})
        return [self._info(w, active, catalogue) for w in windows]

    async def handles(self) -> dict[WindowHandle, int]:
        return self.x.client_pids()

    def _active(self) -> int | None:
        return active_client(self.x, set(self.x.client_ids()))

    async def active_handle(self) -> WindowHandle | None:
        return self._active()

    async def active_window(self) -> WindowInfo | None:
        active = self._active()
        if active is None:
            return None
        w = self.x.window(active, synced=True)  # finding it made the round trip
        return None if w is None else self._info(w, active, await self._catalogue())

    async def window(self, handle: WindowHandle) -> WindowInfo | None:
        w = self.x.window(handle)
        return None if w is None else self._info(w, self._active(), await self._catalogue())

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        stacking = self.x.client_ids(stacking=True)
        active = active_client(self.x, set(stacking))
        catalogue = await self._catalogue()
        for xid in reversed(stacking):
            w = self.x.window(xid, synced=True)  # as of the stacking list's round trip
            if w is not None and not w.hidden and w.geometry.contains(x, y):
                return self._info(w, active, catalogue)
        return None

    async def request_activate(self, handle: WindowHandle) -> None:
        self.x.request_activate(handle)

    async def activate(self, window: WindowInfo) -> bool:
        """Active with the keyboard in it; no request when it already is (a request nobody
        waits for could move the focus after this returns). A window the window manager
        names but never gives the focus to (it takes none) counts as active after the wait."""

        async def settled() -> bool:
            return settled_on(self.x, window.handle)

        if await settled():
            return True
        for _ in range(2):  # the WM occasionally ignores an activation right after another
            self.x.request_activate(window.handle)
            try:
                await async_wait_for(settled, timeout=1.0, what="the window to become active")
                return True
            except WaitTimeout:
                continue
        return self.x.active_xid() == window.handle

    async def minimize(self, window: WindowInfo) -> None:
        self.x.request_minimize(window.handle)

        async def hidden() -> bool:
            w = self.x.window(window.handle)
            return w is not None and w.hidden

        await async_wait_for(hidden, timeout=2.0, what="the window to minimize")

    async def close_window(self, window: WindowInfo) -> None:
        self.x.request_close(window.handle)

    async def popups(self, window: WindowInfo) -> list[Rect]:
        return [rect for _xid, rect in popups_over(self.x.d, self.x.root, window.handle)]

    async def screen_size(self) -> tuple[int, int]:
        return self.x.screen_size()

    def lost(self) -> str | None:
        return self.x.lost()

    async def close(self) -> None:
        self.x.close()
