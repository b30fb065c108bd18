"""The capture port: a window or the whole screen to pixels.

``capture_image`` gives a window's client area as a person sees it — also when other windows
cover it, with the app's own popups (menus, combo lists) painted over it — or, for None, the
whole screen. A closed window is :class:`~deskpilot.errors.DesktopError`; a minimized one is
:class:`~deskpilot.errors.ActionFailed` saying to restore it. ``checksum`` is a cheap
fingerprint of a screen region's pixels (None when it cannot be taken), safe to call from a
worker thread: it tells the readers whether a window changed between two reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from deskpilot.desktop.base import WindowInfo

if TYPE_CHECKING:
    from PIL import Image

#: A screen region: (left, top, width, height).
Region = tuple[int, int, int, int]


@runtime_checkable
class Capture(Protocol):
    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image: ...

    def checksum(self, region: Region | None) -> int | None: ...

    async def close(self) -> None: ...


@runtime_checkable
class PixelWatch(Protocol):
    """A window's (or the screen's) pixels as they change, for a live preview: a connection of
    its own, used from one thread. Boxes are (x, y, width, height); a lost display raises
    :class:`~deskpilot.errors.DesktopLost`.

    ``watch`` starts following a window by handle (0: the whole screen; None: nothing);
    ``geometry`` is where
    a window is and how big (None once it is gone); ``changes`` waits up to ``timeout``
    seconds for drawing and returns the boxes drawn since the last call, in the window's own
    coordinates (``origin``: where the window is on the screen); ``grab`` is a box of the
    window's pixels (None once it is gone); ``title`` and ``app`` name it."""

    def watch(self, handle: int | None) -> None: ...

    def geometry(self, handle: int) -> Region | None: ...

    def changes(self, timeout: float, origin: tuple[int, int]) -> list[Region]: ...

    def grab(self, handle: int, box: Region, origin: tuple[int, int]) -> Image.Image | None: ...

    def title(self, handle: int) -> str: ...

    def app(self, handle: int) -> str: ...

    def close(self) -> None: ...
