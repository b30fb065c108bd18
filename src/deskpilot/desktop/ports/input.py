"""The input port: keyboard, pointer and wheel, sent as a person's input would be.

Input goes to whatever has the focus (the caller activates the window first:
:mod:`deskpilot.desktop.skills.raw_input`). Keys are named in the vocabulary of
:mod:`.keys`; ``press_combo`` presses them in order and releases them in reverse, ``held``
keeps modifiers down around other input. Pointer events are synchronous with the display: when
``move`` or ``button`` returns, the display has seen it (the next event cannot overtake it).
``wheel`` turns notches at the pointer. Coordinates are screen pixels.

A backend whose input cannot reach other apps (a sandboxed Wayland client without a portal
grant) raises :class:`~deskpilot.errors.DesktopError` saying what to allow.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Literal, Protocol, runtime_checkable

from deskpilot.desktop.base import MouseButton

WheelDirection = Literal["up", "down", "left", "right"]


@runtime_checkable
class Input(Protocol):
    async def key_event(self, names: Sequence[str], down: bool) -> None:
        """Press (or release, in reverse order) the keys named."""
        ...

    async def press_combo(self, names: Sequence[str]) -> None: ...

    async def type_text(self, text: str) -> None:
        """Type the text character by character (newline = Return, tab = Tab)."""
        ...

    def held(self, names: Sequence[str]) -> AbstractAsyncContextManager[None]:
        """Keys (modifiers) held down for the duration of the block."""
        ...

    async def move(self, x: int, y: int) -> None: ...

    async def button(self, button: MouseButton, down: bool) -> None: ...

    async def wheel(self, direction: WheelDirection, notches: int) -> None: ...

    async def pointer(self) -> tuple[int, int]: ...

    async def close(self) -> None: ...


@contextlib.asynccontextmanager
async def held_by_key_events(port: Input, names: Sequence[str]) -> AsyncIterator[None]:
    """``held`` for a port whose keys go down and up by :meth:`Input.key_event`: down for the
    block, released even when it fails."""
    await port.key_event(names, True)
    try:
        yield
    finally:
        await port.key_event(names, False)
