"""Sessions sharing one desktop take turns for raw input.

Element actions over AT-SPI need no focus and run side by side, but keyboard and pointer
input goes to whatever window is active: two sessions typing at once on one display would mix
their keystrokes. :class:`SharedInput` wraps a session's desktop and holds the display's lock
(one per display, shared by every session and the MCP server on it) for each call that may
send input or move the focus; every other call is passed straight through.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, cast

from deskpilot.desktop.base import Desktop

#: Desktop methods that send keyboard/pointer input or change the active window (launches
#: too: the window manager gives the focus to a new window; they wait for it to map).
INPUT_METHODS: frozenset[str] = frozenset(
    {
        "activate",
        "click_element",
        "fill_element",
        "focus_element",
        "select_text",
        "type_text",
        "type_into",
        "press_keys",
        "scroll",
        "point_at",
        "drag_in",
        "pointer_click",
        "pointer_move",
        "pointer_button",
        "pointer_drag",
        "wheel",
        "key_event",
        "type_raw",
        # a new window takes the focus when it maps: not in the middle of another's typing
        "launch",
        "open_urls",
        "open_document",
    }
)


class InputLocks:
    """One lock per display."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def of(self, display: str) -> asyncio.Lock:
        return self._locks.setdefault(display, asyncio.Lock())


class SharedInput:
    """``desktop`` with its input calls serialised by ``lock`` (see the module docstring)."""

    def __init__(self, desktop: Desktop, lock: asyncio.Lock) -> None:
        self._desktop = desktop
        self._lock = lock

    @property
    def inner(self) -> Desktop:
        return self._desktop

    def __getattr__(self, name: str) -> Any:
        member = getattr(self._desktop, name)
        if name not in INPUT_METHODS or not inspect.iscoroutinefunction(member):
            return member

        async def call(*args: Any, **kwargs: Any) -> Any:
            async with self._lock:
                return await member(*args, **kwargs)

        call.__name__ = name
        return call


def shared(desktop: Desktop, lock: asyncio.Lock) -> Desktop:
    """``desktop`` behind the display's input lock, typed as a Desktop."""
    return cast(Desktop, SharedInput(desktop, lock))
