"""What a backend hands over: its five ports, with the settings they were opened with.

:func:`deskpilot.desktop.registry.open_desktop` asks the chosen backend for a :class:`Ports`
and composes the desktop from it (:class:`~deskpilot.desktop.facade.DesktopFacade`); a test
builds one from the in-memory fakes (:mod:`.fake`).
"""

from __future__ import annotations

from dataclasses import dataclass

from deskpilot.config import Settings
from deskpilot.desktop.ports.accessibility import Accessibility
from deskpilot.desktop.ports.capture import Capture
from deskpilot.desktop.ports.input import Input
from deskpilot.desktop.ports.launching import Launcher
from deskpilot.desktop.ports.windows import WindowSystem


@dataclass
class Ports:
    """A backend: one implementation of each port."""

    backend: str  # its name in the registry ("x11", "toy", …)
    settings: Settings
    windows: WindowSystem
    input: Input
    capture: Capture
    a11y: Accessibility
    launcher: Launcher
    #: whether a window an action opens may reach the screen only after its app went quiet
    #: (:attr:`deskpilot.desktop.base.Desktop.late_windows`): on every real window system; not
    #: in the fakes' world, where it is there when the action returns
    late_windows: bool = True

    def lost(self) -> str | None:
        """Why the desktop can no longer be used (the display or the accessibility bus is
        gone), without a round trip; None while it can."""
        return self.windows.lost() or self.a11y.lost()

    async def close(self) -> None:
        """Close every port, each even when another fails: pixels first (a grab may hold a
        connection of its own), the display last; the launcher forgets exited apps."""
        try:
            try:
                await self.capture.close()
                await self.a11y.close()
            finally:
                try:
                    await self.input.close()
                finally:
                    await self.windows.close()
        finally:
            await self.launcher.close()
