"""LinuxDesktop: the :class:`~deskpilot.desktop.base.Desktop` of an X11 session with AT-SPI.

Composes :mod:`x11` (windows, input, capture), :mod:`atspi` (trees and element actions) and
:mod:`apps` (catalogue, launching). Element actions prefer AT-SPI (no focus needed); raw input
activates the target window first and re-activates the previously active window afterwards.

Built in layers, each adding one capability to the one below: :mod:`linux_windows` (windows
and apps), :mod:`linux_pixels` (captures, pixel checks), :mod:`linux_read` (snapshots),
:mod:`linux_launch` (starting apps), :mod:`linux_input` (raw input), :mod:`linux_pointer`
(pointer actions aimed at a window), :mod:`linux_scroll` (scrolling), :mod:`linux_cells`
(table cells as targets), :mod:`linux_fill` (filling fields), :mod:`linux_elements` (element
actions), :mod:`linux_documents` (opening documents); this module opens and closes the whole.
"""

from __future__ import annotations

import contextlib

from deskpilot.config import Settings
from deskpilot.desktop.atspi import Accessibility
from deskpilot.desktop.atspi_bus import AtspiBus
from deskpilot.desktop.linux_documents import LinuxDocuments
from deskpilot.desktop.x11 import X11
from deskpilot.errors import AccessibilityUnavailable


async def _connect_a11y(settings: Settings) -> AtspiBus:
    """The accessibility bus, found as libatspi finds it: the address named in the settings
    (AT_SPI_BUS_ADDRESS, or the root window's AT_SPI_BUS found by discovery), else through
    org.a11y.Bus on the session bus."""
    if settings.a11y_bus:
        try:
            return await AtspiBus.connect(settings.session_bus, a11y_address=settings.a11y_bus)
        except AccessibilityUnavailable:
            if not settings.session_bus:
                raise  # a stale AT_SPI_BUS and nothing else to ask
    return await AtspiBus.connect(settings.session_bus)


#: How long the first registry call may take (it may start the registry).
REGISTRY_START_S = 20.0


class LinuxDesktop(LinuxDocuments):
    """The real desktop: an X display plus its accessibility bus."""

    @classmethod
    async def open(cls, settings: Settings) -> LinuxDesktop:
        x11 = X11(settings.display)
        bus: AtspiBus | None = None
        try:
            bus = await _connect_a11y(settings)
            # the first call starts the registry (D-Bus activation): on a new sandbox on a
            # loaded machine (six sessions starting at once) that took longer than a call's 2 s
            await bus.register_events(timeout=REGISTRY_START_S)
            await bus.listen()
        except BaseException:
            if bus is not None:
                await bus.close()
            x11.close()
            raise
        return cls(settings, x11, Accessibility(bus))

    def lost(self) -> str | None:
        """Why this desktop can no longer be used (X server or accessibility bus gone)."""
        reason = self.x.lost()
        if reason is None and not self.a11y.bus.bus.connected:
            reason = "the accessibility bus closed its connection"
        return reason

    async def close(self) -> None:
        for pending in self._baselines.values():
            if pending is not None:
                with contextlib.suppress(Exception):
                    await pending  # a grab in a thread: let it finish before the grabber closes
        try:
            if self._grabber is not None:
                self._grabber.close()
            await self.a11y.bus.close()
        finally:
            self.x.close()
            self._reap()
