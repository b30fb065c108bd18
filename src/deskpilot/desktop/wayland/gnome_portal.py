"""The GNOME backend on a user's own session: input and the screen's pixels through
xdg-desktop-portal (:mod:`.portal`), with the user's consent.

A session deskpilot did not start gives a third-party program input and pixels only through
the portal, so there the backend asks for them the first time a call needs them (a key, a
click, the screen's pixels or size: reading windows and trees needs no consent), once for the
desktop's life; the grant's restore token is kept in deskpilot's state dir
(:class:`~deskpilot.desktop.wayland.portal.TokenStore`), so a portal that honours it does not
ask again (xdg-desktop-portal-gnome 46 and later; version 43, Debian 12's, asks at every start).
A refused or revoked consent, or a portal without RemoteDesktop, is a
:class:`~deskpilot.desktop.wayland.portal.PortalError` saying what the user must do; it is
remembered, so the user is not asked again and again by one agent run — the next run asks
again.

What the portal cannot give, said plainly instead of guessed: the portal shares a monitor,
not a window, and Mutter tells nobody where a Wayland window lies on it. So a point in a
Wayland window (whose coordinates are its own) has no screen place here: moving there does
not move the pointer, and a press that follows such a move is refused (element actions —
AT-SPI — and keys still reach the window); a Wayland window's own pixels are refused too,
before the user is asked anything for them (the screen's are given). An X11 window on
Xwayland knows its place: its points and pixels are the monitor's, as on the sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import MouseButton, WindowInfo
from deskpilot.desktop.ports.capture import Region
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.desktop.ports.input import WheelDirection, held_by_key_events
from deskpilot.desktop.wayland.gnome_windows import GnomeWindows
from deskpilot.desktop.wayland.mutter import AXIS_HORIZONTAL, AXIS_VERTICAL, keysym_of
from deskpilot.desktop.wayland.portal import (
    WHAT_TO_DO,
    ConsentRevoked,
    PortalError,
    PortalSession,
    TokenStore,
)
from deskpilot.errors import ActionFailed, DesktopError

if TYPE_CHECKING:
    from PIL import Image

    from deskpilot.desktop.wayland.pipewire import FrameReader

#: the restore token's file in deskpilot's state dir
TOKEN_FILE = "gnome-portal-token"
#: how long the user has to answer the desktop's dialog
CONSENT_S = 300.0
#: how long the focus may take to come back from the dialog to the window that had it
REFOCUS_S = 5.0

NO_PLACE = (
    "on a GNOME session driven through the desktop portal, deskpilot cannot know where a "
    "Wayland window lies on the screen (the portal shares the monitor, and GNOME tells no "
    "program where its windows are), so it cannot aim the pointer into window {window}; act "
    "on its elements by ID or with keys instead"
)


class PortalGrant:
    """The desktop's one portal session, opened (and consent asked) when first needed."""

    def __init__(self, state_dir: Path, session_bus: str | None, *, timeout: float = CONSENT_S):
        self.tokens = TokenStore(state_dir / TOKEN_FILE)
        self.session_bus = session_bus
        self.timeout = timeout
        self._session: PortalSession | None = None
        self._refused: PortalError | None = None
        self._lock = asyncio.Lock()
        #: the active window's handle (set by the backend): the focus is awaited back there
        #: after the desktop's dialog
        self.active: Callable[[], Awaitable[WindowHandle | None]] | None = None

    async def session(self) -> PortalSession:
        async with self._lock:
            if self._session is not None:
                return self._session
            if self._refused is not None:
                raise type(self._refused)(str(self._refused))
            before = await self.active() if self.active is not None else None
            try:
                self._session = await PortalSession.open(
                    self.tokens, session_bus=self.session_bus, timeout=self.timeout
                )
            except PortalError as exc:
                self._refused = exc
                raise
            if before is not None and not self._session.restored:
                await self._refocused(before)
            return self._session

    async def _refocused(self, before: WindowHandle) -> None:
        """Wait for the focus to come back from the desktop's dialog to the window that had
        it: the portal answers when the user presses Share, while the dialog is still
        closing, and keys sent before Mutter focuses the window again would go nowhere."""
        active = self.active
        assert active is not None

        async def back() -> bool:
            return await active() == before

        with contextlib.suppress(WaitTimeout):  # focus moved on elsewhere: the skills check
            await async_wait_for(back, timeout=REFOCUS_S, what="the focus back", interval=0.02)

    @property
    def opened(self) -> PortalSession | None:
        return self._session

    async def screen_size(self) -> tuple[int, int]:
        session = await self.session()
        return session.streams[0].size

    async def press(self, names: Sequence[str]) -> None:
        session = await self.session()
        await self.send(lambda: session.press(names))

    async def send(self, call: Callable[[], Awaitable[None]]) -> None:
        """Send input through the open session. A portal call that fails now means the
        desktop ended the session (the user stopped the sharing or revoked the permission):
        that is :class:`ConsentRevoked`, remembered like a refusal."""
        try:
            await call()
        except PortalError as exc:
            ended = ConsentRevoked(
                "the desktop ended deskpilot's remote control of this session (the sharing was "
                f"stopped or the permission revoked: {exc}); {WHAT_TO_DO}: run the command "
                "again and allow it"
            )
            async with self._lock:
                self._refused = ended
                session, self._session = self._session, None
            if session is not None:
                with contextlib.suppress(PortalError):
                    await session.close()
            raise ended from exc

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _keysyms(names: Sequence[str]) -> list[int]:
    """The keysyms of key names; an unknown name is ActionFailed before anything is sent."""
    try:
        return [keysym_of(n) for n in names]
    except DesktopError as exc:
        raise ActionFailed(str(exc)) from exc


class PortalInput:
    """The input port through the portal: keys to the focused window; the pointer at screen
    points of placed (X11) windows only (see the module docstring)."""

    def __init__(self, grant: PortalGrant, windows: GnomeWindows) -> None:
        self.grant = grant
        self.windows = windows
        self._position = (0, 0)
        self._unaimed: str | None = None  # why the last move went nowhere

    async def key_event(self, names: Sequence[str], down: bool) -> None:
        syms = _keysyms(names if down else list(reversed(names)))  # all known, or nothing sent
        session = await self.grant.session()

        async def send() -> None:
            for sym in syms:
                await session.keysym(sym, down)

        await self.grant.send(send)

    async def press_combo(self, names: Sequence[str]) -> None:
        _keysyms(names)
        await self.grant.press(names)

    async def type_text(self, text: str) -> None:
        """Characters in printable ASCII as their keysyms; others through the toolkit's
        Unicode entry (Ctrl+Shift+U, hex, space), as on the sandbox (:mod:`.mutter`: Mutter
        drops keysyms its layout lacks without an error)."""
        session = await self.grant.session()

        async def send() -> None:
            await session.type_text(text)

        await self.grant.send(send)

    def held(self, names: Sequence[str]) -> AbstractAsyncContextManager[None]:
        return held_by_key_events(self, names)

    async def move(self, x: int, y: int) -> None:
        active = await self.windows.active_window()
        if active is None or not active.placed:
            # nowhere to aim: the pointer stays; a press that follows is refused
            where = active.stable_id if active is not None else "(none is active)"
            self._unaimed = NO_PLACE.format(window=where)
            return  # the pointer stays where it was, and says so
        session = await self.grant.session()
        stream = session.streams[0]
        px, py = x - stream.position[0], y - stream.position[1]
        if not (0 <= px < stream.size[0] and 0 <= py < stream.size[1]):
            raise ActionFailed(
                f"the point ({x}, {y}) of window {active.stable_id} is outside the shared "
                f"screen ({stream.size[0]}x{stream.size[1]})"
            )
        await self.grant.send(lambda: session.move(px, py))
        self._unaimed = None
        self._position = (x, y)

    async def _aimed(self) -> PortalSession:
        if self._unaimed is not None:
            raise ActionFailed(self._unaimed)
        return await self.grant.session()

    async def button(self, button: MouseButton, down: bool) -> None:
        if not down and self.grant.opened is not None:  # a release is never refused
            session = self.grant.opened
        else:
            session = await self._aimed()
        await self.grant.send(lambda: session.button(button, down))

    async def wheel(self, direction: WheelDirection, notches: int) -> None:
        axis = AXIS_HORIZONTAL if direction in ("left", "right") else AXIS_VERTICAL
        steps = notches if direction in ("down", "right") else -notches
        session = await self._aimed()
        await self.grant.send(lambda: session.scroll(axis, steps))

    async def pointer(self) -> tuple[int, int]:
        return self._position

    async def close(self) -> None:
        await self.grant.close()


class PortalCapture:
    """The capture port through the portal: the shared monitor's stream; a placed (X11)
    window is its part of it; a Wayland window's own pixels are refused (no place)."""

    def __init__(
        self, grant: PortalGrant, windows: GnomeWindows, runtime_dir: str, env: dict[str, str]
    ) -> None:
        self.grant = grant
        self.windows = windows
        self.runtime_dir = runtime_dir
        self.env = env
        self._screen: FrameReader | None = None
        self._lock = asyncio.Lock()

    async def _frames(self) -> FrameReader:
        from deskpilot.desktop.wayland.pipewire import FrameReader

        async with self._lock:
            if self._screen is None:
                session = await self.grant.session()
                stream = session.streams[0]
                fd = await session.pipewire_fd()
                try:
                    self._screen = FrameReader(
                        stream.node_id,
                        stream.size,
                        runtime_dir=self.runtime_dir,
                        env=self.env,
                        fd=fd,
                    )
                finally:
                    with contextlib.suppress(OSError):
                        os.close(fd)  # the pipeline holds its own copy
            return self._screen

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        if window is None:
            frames = await self._frames()
            return await asyncio.to_thread(frames.frame, timeout=10.0)
        current = await self.windows.window(window.handle)
        if current is None:
            raise DesktopError(f"window {window.stable_id} has closed")
        if not current.placed:  # refused before any consent is asked for it
            raise ActionFailed(
                f"window {window.stable_id}'s own pixels cannot be taken on a GNOME session "
                "driven through the desktop portal: the portal shares the monitor, and GNOME "
                "tells no program where a Wayland window lies on it; read the window with "
                "read_screen_ax instead"
            )
        if current.hidden:
            raise ActionFailed(
                f"window {window.stable_id} is minimized: it cannot be captured. Activate it "
                "first, then try again."
            )
        frames = await self._frames()
        if not current.active and not await self.windows.activate(current):
            raise ActionFailed(f"window {window.stable_id} could not be made active")
        screen = await asyncio.to_thread(frames.frame, timeout=10.0)
        g = current.geometry
        return screen.crop((g.x, g.y, g.x + g.width, g.y + g.height))

    def checksum(self, region: Region | None) -> int | None:
        return None  # a frame is a PipeWire stream's: the readers fall back to AT-SPI events

    async def close(self) -> None:
        if self._screen is not None:
            await asyncio.to_thread(self._screen.close)
