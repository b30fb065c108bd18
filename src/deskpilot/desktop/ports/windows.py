"""The window-system port: top-level windows, the active one, the screen.

What a backend must answer (all coroutines; a window is a
:class:`~deskpilot.desktop.base.WindowInfo`, named by its handle: :mod:`.identity`):

* which windows there are (``list_windows``, in the window manager's order; ``handles`` for
  telling new ones later), which is active, one window as it is now (``window``: None once it
  is gone), the topmost at a screen point;
* activation: ``request_activate`` asks (raise, focus, un-minimize) without waiting;
  ``activate`` asks and waits until the window is active (asking once more if the window
  manager ignored the first request), False when it never became active;
* ``minimize`` (waits until hidden), ``close_window`` (asks the app to close it);
* ``popups``: where the app's own popup surfaces over a window are (menus, combo lists,
  tooltips — X11 override-redirect windows), in screen coordinates; a backend that cannot tell
  returns none;
* ``screen_size``; ``lost`` (why the connection is dead, without a round trip) and ``close``.

Geometry is the client area in screen pixels. A backend whose compositor does not say where
windows are (GNOME on Wayland) gives each window its own coordinates, ``(0, 0, width,
height)``, aims pointer input at the active window's, and answers ``window_at`` with the
active window or None — never a window it cannot tell is there. A backend that cannot see
other apps' windows at all is not a backend: every tool starts from this list.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from deskpilot.desktop.base import Rect, WindowInfo
from deskpilot.desktop.ports.identity import WindowHandle


@runtime_checkable
class WindowSystem(Protocol):
    async def list_windows(self) -> list[WindowInfo]: ...

    async def handles(self) -> dict[WindowHandle, int]:
        """Each window's handle with its process id (0 when unknown)."""
        ...

    async def active_handle(self) -> WindowHandle | None: ...

    async def active_window(self) -> WindowInfo | None: ...

    async def window(self, handle: WindowHandle) -> WindowInfo | None:
        """The window as it is now (title, geometry, state), None once it is gone."""
        ...

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        """The topmost visible window whose client area holds the screen point."""
        ...

    async def request_activate(self, handle: WindowHandle) -> None: ...

    async def activate(self, window: WindowInfo) -> bool: ...

    async def minimize(self, window: WindowInfo) -> None: ...

    async def close_window(self, window: WindowInfo) -> None: ...

    async def popups(self, window: WindowInfo) -> list[Rect]: ...

    async def screen_size(self) -> tuple[int, int]: ...

    def lost(self) -> str | None: ...

    async def close(self) -> None: ...
