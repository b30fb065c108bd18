"""The X11 input port: XTest keys, text, pointer and wheel on one display.

Key names are mapped to keysyms (:mod:`.keysyms`), a character no keycode types gets a spare
keycode remapped for it; every pointer event is followed until the server shows it done
(:class:`~deskpilot.desktop.x11.display.X11`), so a press can never land where a later
motion put the pointer.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from deskpilot.desktop.base import MouseButton
from deskpilot.desktop.ports.input import WheelDirection
from deskpilot.desktop.x11.display import X11
from deskpilot.desktop.x11.keysyms import keysym


class X11Input:
    """XTest input on an X display."""

    def __init__(self, x11: X11) -> None:
        self.x = x11

    async def key_event(self, names: Sequence[str], down: bool) -> None:
        self.x.key_event([keysym(k) for k in names], down)

    async def press_combo(self, names: Sequence[str]) -> None:
        self.x.press_combo([keysym(k) for k in names])

    async def type_text(self, text: str) -> None:
        self.x.type_text(text)

    @contextlib.asynccontextmanager
    async def held(self, names: Sequence[str]) -> AsyncIterator[None]:
        with self.x.held([keysym(k) for k in names]):
            yield

    async def move(self, x: int, y: int) -> None:
        self.x.move(x, y)

    async def button(self, button: MouseButton, down: bool) -> None:
        self.x.button(button, down)

    async def wheel(self, direction: WheelDirection, notches: int) -> None:
        self.x.wheel(direction, notches)

    async def pointer(self) -> tuple[int, int]:
        return self.x.pointer()

    async def close(self) -> None:
        pass  # the display is the window system's to close
