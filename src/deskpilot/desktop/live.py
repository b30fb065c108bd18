"""LiveDesktop: a desktop opened on first use, and opened again after it was lost.

Long-lived surfaces (the MCP server) must not die with the display, nor need one to start:

* nothing is opened until a tool needs the desktop, so a server starts (and lists its tools)
  anywhere, and a client's probe never starts a desktop;
* opening fails → that call fails with the opener's typed error (DisplayUnavailable saying
  what to set); the next call tries again;
* a call fails while the display or its bus has gone away (the desktop's ``lost()`` says
  so) → :class:`~deskpilot.errors.DesktopLost` instead of whatever the dead connection
  raised, the dead desktop is dropped, and the next call opens it again.

It stands in for a :class:`~deskpilot.desktop.base.Desktop` (every coroutine method is
forwarded); :func:`as_desktop` types it as one.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio

from deskpilot.desktop.base import Desktop
from deskpilot.errors import DeskpilotError, DesktopLost

log = logging.getLogger(__name__)

Opener = Callable[[], Awaitable[Desktop]]
Say = Callable[[str], None]

LOST_HINT = (
    "Nothing more can be done on this desktop until it is back; deskpilot reconnects by "
    "itself on a later call. Tell the user (they may need to restart their desktop session "
    "or the sandbox)."
)


def lost_reason(desktop: object) -> str | None:
    """Why ``desktop`` is no longer usable (its ``lost()``), or None while it is fine."""
    probe = getattr(desktop, "lost", None)
    if probe is None:
        return None
    try:
        reason = probe()
    except Exception as exc:  # a probe that fails says enough
        return f"its connection failed ({type(exc).__name__})"
    return str(reason) if reason else None


class LiveDesktop:
    """Forwards every Desktop call to a desktop it opens (and reopens) on demand."""

    def __init__(self, opener: Opener, *, say: Say = lambda message: None) -> None:
        self._opener = opener
        self._say = say
        self._desktop: Desktop | None = None
        self._lock = anyio.Lock()
        self._lost: str | None = None  # why the last desktop was dropped, until one opens
        self.opened = 0  # how many times a desktop was opened
        self.losses = 0  # how many times one was lost

    @property
    def current(self) -> Desktop | None:
        """The open desktop, if any (None before first use and after a loss)."""
        return self._desktop

    async def get(self) -> Desktop:
        """The open desktop; opens it (raising the opener's error) when there is none."""
        async with self._lock:
            if self._desktop is not None and (reason := lost_reason(self._desktop)):
                await self._drop(self._desktop, reason)
            if self._desktop is None:
                try:
                    self._desktop = await self._opener()
                except DeskpilotError as exc:
                    if self._lost is None:
                        raise
                    raise DesktopLost(
                        f"The desktop went away ({self._lost}) and is not back yet: {exc} "
                        f"{LOST_HINT}"
                    ) from exc
                self.opened += 1
                if self._lost is not None:
                    self._say("the desktop is back: reconnected")
                self._lost = None
            return self._desktop

    async def _drop(self, desktop: Desktop, reason: str) -> None:
        if self._desktop is desktop:
            self._desktop = None
            self._lost = reason
            self.losses += 1
            self._say(f"lost the desktop ({reason}); reconnecting on the next call")
        with contextlib.suppress(Exception):
            with anyio.move_on_after(5):
                await desktop.close()

    async def forward(self, name: str, *args: Any, **kwargs: Any) -> Any:
        desktop = await self.get()
        try:
            return await getattr(desktop, name)(*args, **kwargs)
        except DesktopLost:
            raise
        except Exception as exc:
            reason = lost_reason(desktop)
            if reason is None:
                raise
            async with self._lock:
                await self._drop(desktop, reason)
            raise DesktopLost(f"The desktop went away: {reason}. {LOST_HINT}") from exc

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        member = getattr(Desktop, name, None)
        if member is None or not inspect.iscoroutinefunction(member):
            desktop = self._desktop
            if desktop is None:
                raise AttributeError(f"{name}: the desktop is not open")
            return getattr(desktop, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self.forward(name, *args, **kwargs)

        call.__name__ = name
        return call

    async def close(self) -> None:
        async with self._lock:
            desktop, self._desktop = self._desktop, None
        if desktop is not None:
            await desktop.close()


def as_desktop(live: LiveDesktop) -> Desktop:
    """``live`` typed as the Desktop it stands in for."""
    return cast(Desktop, live)
