"""The GNOME backend (Mutter on Wayland): windows from AT-SPI frames, input and capture through
Mutter's RemoteDesktop and ScreenCast, AT-SPI for accessibility, native Wayland apps.

Registered as ``"gnome"`` (:mod:`deskpilot.desktop.registry`), chosen by ``auto`` on a Wayland
session whose compositor is Mutter (GNOME) with ``org.gnome.Mutter.RemoteDesktop`` on the
session bus — a session deskpilot started (the GNOME sandbox), where these APIs need no
consent. X11 apps of the same session run on Xwayland; ``--backend x11`` drives them there.

Which way input and pixels go is decided by what the session offers (:func:`uses_portal`):
on deskpilot's own sandbox Mutter's private API; on a session deskpilot did not start
xdg-desktop-portal, with the user's consent (:mod:`.gnome_portal`, which says what the portal
cannot give).

The coordinate contract: Mutter tells nobody where a window is, so a Wayland client's window's
geometry is its own, ``(0, 0, width, height)`` (:mod:`.gnome_windows`), element extents are
window-relative as every Wayland toolkit reports them, and a point is in the **active**
window's coordinates: the pointer moves in that window's own ``RecordWindow`` stream
(:mod:`.gnome_streams`; the skills activate a window before pointing into it). An X11 app on
Xwayland knows its place: its window is placed, and its points are screen points, aimed at in
the monitor's stream. Keys go to the
focused window through one RemoteDesktop session held for the desktop's life; a screen capture
is its monitor stream.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from deskpilot.config import Settings
from deskpilot.desktop.base import MouseButton, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import PixelWatch, Region
from deskpilot.desktop.ports.input import WheelDirection, held_by_key_events
from deskpilot.desktop.registry import Backend
from deskpilot.desktop.wayland.gnome_windows import GnomeWindows
from deskpilot.desktop.wayland.mutter import (
    AXIS_HORIZONTAL,
    AXIS_VERTICAL,
    RD_BUS,
    MutterError,
    MutterSession,
    keysym_of,
)
from deskpilot.desktop.wayland.session import find_session
from deskpilot.errors import ActionFailed, DesktopError, DisplayUnavailable

#: GNOME Shell's name on the session bus (bare Mutter has none)
SHELL_BUS = "org.gnome.Shell"
#: xdg-desktop-portal's name on the session bus
PORTAL_BUS = "org.freedesktop.portal.Desktop"

if TYPE_CHECKING:
    from PIL import Image

    from deskpilot.desktop.wayland.gnome_streams import WindowStreams
    from deskpilot.desktop.wayland.pipewire import FrameReader


class MutterInput:
    """The input port: keys through the desktop's RemoteDesktop session, the pointer in the
    active window's own stream (its coordinates: see the module docstring)."""

    def __init__(self, keys: MutterSession, windows: GnomeWindows, streams: WindowStreams) -> None:
        self.keys = keys
        self.windows = windows
        self.streams = streams
        self._aimed: MutterSession | None = None
        self._position = (0, 0)

    async def _send(self, call: Callable[[], Awaitable[None]]) -> None:
        try:
            await call()
        except MutterError as exc:
            raise ActionFailed(str(exc)) from exc

    async def key_event(self, names: Sequence[str], down: bool) -> None:
        async def send() -> None:
            for name in names if down else list(reversed(names)):
                await self.keys.keysym(keysym_of(name), down)

        await self._send(send)

    async def press_combo(self, names: Sequence[str]) -> None:
        await self._send(lambda: self.keys.press(names))

    async def type_text(self, text: str) -> None:
        await self._send(lambda: self.keys.type_text(text))

    def held(self, names: Sequence[str]) -> AbstractAsyncContextManager[None]:
        return held_by_key_events(self, names)

    async def move(self, x: int, y: int) -> None:
        active = await self.windows.active_window()
        if active is None:
            raise ActionFailed(
                "no window is active: on GNOME the pointer moves in the active window's own "
                "coordinates, so there is nowhere to point"
            )
        if active.placed:  # an X11 window on Xwayland: screen coordinates, the monitor's stream
            await self._send(lambda: self.keys.move(x, y))
            self._aimed = self.keys
            self._position = (x, y)
            return
        if not active.geometry.contains(x, y):
            raise ActionFailed(
                f"the point ({x}, {y}) is outside the active window {active.stable_id} "
                f"({active.geometry.width}x{active.geometry.height}): on GNOME points are in "
                "the active window's own coordinates"
            )
        stream = await self.streams.of(active)
        ox, oy = await stream.origin((active.geometry.width, active.geometry.height))
        await self._send(lambda: stream.session.move(x + ox, y + oy))
        self._aimed = stream.session
        self._position = (x, y)

    async def button(self, button: MouseButton, down: bool) -> None:
        session = self._aimed if self._aimed is not None and self._aimed.closed is None else None
        await self._send(lambda: (session or self.keys).button(button, down))

    async def wheel(self, direction: WheelDirection, notches: int) -> None:
        axis = AXIS_HORIZONTAL if direction in ("left", "right") else AXIS_VERTICAL
        steps = notches if direction in ("down", "right") else -notches
        session = self._aimed if self._aimed is not None and self._aimed.closed is None else None
        await self._send(lambda: (session or self.keys).scroll(axis, steps))

    async def pointer(self) -> tuple[int, int]:
        return self._position

    async def close(self) -> None:
        await self.keys.close()


class MutterCapture:
    """The capture port: a window through its own stream (activated first when it has none
    yet), the screen through the monitor stream of the desktop's RemoteDesktop session."""

    def __init__(
        self, monitor: MutterSession, windows: GnomeWindows, streams: WindowStreams
    ) -> None:
        self.monitor = monitor
        self.windows = windows
        self.streams = streams
        self._screen: FrameReader | None = None
        self._lock = threading.Lock()

    def _screen_frames(self) -> FrameReader:
        from deskpilot.desktop.wayland.pipewire import FrameReader

        with self._lock:
            if self._screen is None:
                stream = self.monitor.stream
                assert stream is not None
                self._screen = FrameReader(
                    stream.node_id,
                    stream.size,
                    runtime_dir=self.streams.runtime_dir,
                    env=self.streams.env,
                )
            return self._screen

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        if window is None:
            frames = self._screen_frames()
            return await asyncio.to_thread(frames.frame, timeout=10.0)
        current = await self.windows.window(window.handle)
        if current is None:
            raise DesktopError(f"window {window.stable_id} has closed")
        if current.hidden:
            raise ActionFailed(
                f"window {window.stable_id} is minimized: it cannot be captured. Activate it "
                "first, then try again."
            )
        if current.placed:  # an X11 window on Xwayland: its place in the monitor's frame
            if not current.active and not await self.windows.activate(current):
                raise ActionFailed(f"window {window.stable_id} could not be made active")
            screen = await asyncio.to_thread(self._screen_frames().frame, timeout=10.0)
            g = current.geometry
            return screen.crop((g.x, g.y, g.x + g.width, g.y + g.height))
        stream = await self.streams.of(current)
        return await stream.image((current.geometry.width, current.geometry.height))

    def checksum(self, region: Region | None) -> int | None:
        return None  # a frame is a PipeWire stream's: the readers fall back to AT-SPI events

    async def close(self) -> None:
        try:
            await self.streams.close()
        finally:
            if self._screen is not None:
                await asyncio.to_thread(self._screen.close)


def _runtime_dir(settings: Settings) -> str:
    """Where the session's PipeWire daemon listens: a sandbox's runtime dir, else the user's."""
    if settings.sandbox_dir:
        from deskpilot.sandbox.info import read_info

        info = read_info(settings.sandbox_dir)
        if info is not None:
            return info.runtime_dir
    return settings.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"


async def open_ports(settings: Settings) -> Ports:
    """The desktop's ports, by what the session offers (see :func:`uses_portal`)."""
    if await asyncio.to_thread(uses_portal, settings):
        return await _open_portal(settings)
    return await _open_private(settings)


def uses_portal(settings: Settings) -> bool:
    """Whether input and pixels go through xdg-desktop-portal (:mod:`.gnome_portal`), which
    asks the user, rather than Mutter's own RemoteDesktop/ScreenCast, which ask nobody:

    * deskpilot's own sandbox (``settings.sandbox_dir``): Mutter's API, always;
    * a session whose portal is running, or GNOME Shell's (which serves remote desktop only
      through the portal, started on demand by D-Bus): the portal — a session deskpilot did
      not start;
    * a bare Mutter without a portal (a headless mutter someone runs for a CI job): Mutter's
      API, as on the sandbox.
    """
    bus = settings.session_bus
    if settings.sandbox_dir or not bus:
        return False
    return _has_name(bus, PORTAL_BUS) or _has_name(bus, SHELL_BUS)


async def _open_private(settings: Settings) -> Ports:
    """The accessibility bus, a RemoteDesktop session with the monitor's stream and the
    launcher, opened together (all or none)."""
    from deskpilot.desktop.atspi.port import AtspiAccessibility
    from deskpilot.desktop.wayland.wlroots import WaylandLauncher, _wayland_socket
    from deskpilot.desktop.xdg.launcher import XdgLauncher

    socket_path = _wayland_socket(settings)
    try:
        main = await MutterSession.start(settings.session_bus, record="monitor")
    except MutterError as exc:
        raise DisplayUnavailable(f"cannot drive this GNOME session: {exc}") from exc
    try:
        a11y = await AtspiAccessibility.open(settings)
    except BaseException:
        await main.close()
        raise
    assert main.stream is not None
    size = main.stream.size

    async def screen() -> tuple[int, int]:
        return size

    xdg = XdgLauncher(settings)
    windows = GnomeWindows(a11y.trees, main.press, xdg.apps, screen)
    # the streams' frames need Pillow: imported when a GNOME desktop opens, not when the
    # registry looks at which backends exist (a `deskpilot tool` call on X11 loads no Pillow)
    from deskpilot.desktop.wayland.gnome_streams import WindowStreams

    streams = WindowStreams(
        settings.session_bus,
        _runtime_dir(settings),
        settings.environ,
        windows.activate,
        windows.active_handle,
        windows.handles,
    )
    return Ports(
        backend="gnome",
        settings=settings,
        windows=windows,
        input=MutterInput(main, windows, streams),
        capture=MutterCapture(main, windows, streams),
        a11y=a11y,
        launcher=WaylandLauncher(settings, xdg, socket_path),
    )


async def _open_portal(settings: Settings) -> Ports:
    """The accessibility bus and the launcher; input and pixels through the portal, whose
    session (and the user's consent) waits for the first call that needs it."""
    from deskpilot.desktop.atspi.port import AtspiAccessibility
    from deskpilot.desktop.wayland.gnome_portal import PortalCapture, PortalGrant, PortalInput
    from deskpilot.desktop.wayland.wlroots import WaylandLauncher, _wayland_socket
    from deskpilot.desktop.xdg.launcher import XdgLauncher

    socket_path = _wayland_socket(settings)
    a11y = await AtspiAccessibility.open(settings)
    grant = PortalGrant(Path(settings.state_dir).expanduser(), settings.session_bus)
    xdg = XdgLauncher(settings)
    windows = GnomeWindows(a11y.trees, grant.press, xdg.apps, grant.screen_size)
    grant.active = windows.active_handle
    return Ports(
        backend="gnome",
        settings=settings,
        windows=windows,
        input=PortalInput(grant, windows),
        capture=PortalCapture(grant, windows, _runtime_dir(settings), dict(settings.environ)),
        a11y=a11y,
        launcher=WaylandLauncher(settings, xdg, socket_path),
    )


def _has_name(session_bus: str, name: str) -> bool:
    """Whether ``name`` is owned on ``session_bus`` (asked on a thread of its own: ``detect``
    is synchronous and may be called inside a running event loop)."""
    from dbus_fast import Message, MessageType
    from dbus_fast.aio import MessageBus

    async def ask() -> bool:
        bus = await MessageBus(bus_address=session_bus).connect()
        try:
            reply = await asyncio.wait_for(
                bus.call(
                    Message(
                        destination="org.freedesktop.DBus",
                        path="/org/freedesktop/DBus",
                        interface="org.freedesktop.DBus",
                        member="NameHasOwner",
                        signature="s",
                        body=[name],
                    )
                ),
                3.0,
            )
        finally:
            bus.disconnect()
        return (
            reply is not None
            and reply.message_type == MessageType.METHOD_RETURN
            and bool(reply.body[0])
        )

    found: list[bool] = []

    def run() -> None:
        try:
            found.append(asyncio.run(ask()))
        except Exception:  # an unreachable bus: no Mutter here
            found.append(False)

    thread = threading.Thread(target=run, name="mutter-detect", daemon=True)
    thread.start()
    thread.join(5.0)
    return bool(found and found[0])


def detect(settings: Settings) -> str | None:
    """A Wayland session run by Mutter (GNOME) with its RemoteDesktop API on the session bus:
    named by the environment, or found in the user's runtime dir."""
    env = settings.environ
    if not env.get("WAYLAND_DISPLAY") and env.get("DISPLAY"):
        return None  # an X11 session
    found = find_session(env, os.getuid())
    if not found.wayland_display or found.compositor != "gnome":
        return None
    bus = settings.session_bus or found.session_bus
    if not bus or not _has_name(bus, RD_BUS):
        return None
    where = (
        "named by the environment"
        if found.found_by == "environment"
        else (f"found in {found.runtime_dir}")
    )
    through = (
        "input and pixels through xdg-desktop-portal (the desktop asks you once)"
        if uses_portal(settings.with_overrides(session_bus=bus))
        else "input and pixels through Mutter's RemoteDesktop API"
    )
    return f"a GNOME (Mutter) Wayland session, {where}: {through}"


def resolve(settings: Settings) -> Settings:
    """The settings with what the environment leaves out of the GNOME session filled in."""
    env = settings.environ
    if env.get("WAYLAND_DISPLAY") and settings.session_bus:
        return settings
    found = find_session(env, os.getuid())
    filled = {**found.env(), **{k: v for k, v in env.items() if v}}
    return settings.with_overrides(
        environ=filled, session_bus=settings.session_bus or found.session_bus or None
    )


def titles(display: str) -> list[str]:
    """The titles of the GNOME session's windows (AT-SPI frames: its Wayland and Xwayland
    apps alike), on connections of their own — eval's window checks."""
    from deskpilot.desktop.wayland.gnome_preview import session_of_display
    from deskpilot.desktop.wayland.gnome_windows import read_frames

    found = session_of_display(display)

    async def read() -> list[str]:
        return [f.title for f in await read_frames(found.session_bus)]

    got: list[list[str]] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            got.append(asyncio.run(read()))
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="gnome-titles", daemon=True)
    thread.start()
    thread.join(30.0)
    if failed:
        raise DesktopError(f"cannot read the GNOME session's windows: {failed[0]}")
    if not got:
        raise DesktopError("the GNOME session's windows did not answer within 30 s")
    return got[0]


def open_preview(display: str, mode: str) -> PixelWatch:
    """The console's live preview on the GNOME session of ``display`` (:mod:`.gnome_preview`)."""
    from deskpilot.desktop.wayland.gnome_preview import open_preview as open_gnome_preview

    return open_gnome_preview(display, mode)


BACKEND = Backend(
    name="gnome",
    open=open_ports,
    detect=detect,
    resolve=resolve,
    priority=15,
    sandbox="gnome",
    preview=open_preview,
    titles=titles,
    summary="GNOME on Wayland (Mutter): AT-SPI windows, RemoteDesktop input in the active "
    "window's stream, ScreenCast capture",
)
