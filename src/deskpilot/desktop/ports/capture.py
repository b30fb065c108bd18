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
