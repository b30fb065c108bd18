"""The wlroots backend (sway first): windows from the compositor's IPC, input through the
virtual keyboard and pointer protocols, capture through wlr-screencopy, AT-SPI for
accessibility and the freedesktop launcher.

Registered as ``"wlroots"`` (:mod:`deskpilot.desktop.registry`), chosen by ``auto`` when the
session is a Wayland one with sway's IPC socket (``SWAYSOCK``). Screen points come from the
compositor: a window's geometry is its content rectangle in sway's tree, and the accessibility
port adds it to the window-relative extents every Wayland toolkit reports (measured: GTK 3's
"screen" extents equal its window ones on Wayland).

What sway cannot do and what stands in for it: no minimize (a window is moved to the
scratchpad, hidden; focusing it brings it back, floating); no popups list (an app's menus are
its own surfaces, captured with its window when they lie inside it); a covered floating
window is captured as the screen shows it (screencopy copies the output, not a window).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop import apps as appcat
from deskpilot.desktop.base import AppEntry, MouseButton, Rect, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import PixelWatch, Region
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.desktop.ports.input import WheelDirection
from deskpilot.desktop.registry import Backend
from deskpilot.desktop.wayland.session import find_session
from deskpilot.desktop.wayland.sway import SwayError, SwayIpc, SwayWindow
from deskpilot.errors import ActionFailed, DesktopError, DisplayUnavailable

if TYPE_CHECKING:
    from PIL import Image

    from deskpilot.desktop.wayland.wlr_capture import ScreenCopy
    from deskpilot.desktop.wayland.wlr_input import VirtualInput
    from deskpilot.desktop.xdg.launcher import XdgLauncher

Catalogue = Callable[[], Awaitable[list[AppEntry]]]


class SwayWindows:
    """The windows port over sway's IPC."""

    def __init__(self, ipc: SwayIpc, catalogue: Catalogue) -> None:
        self.ipc = ipc
        self._catalogue = catalogue
        self._lost: str | None = None

    async def _views(self) -> list[SwayWindow]:
        try:
            return await self.ipc.windows()
        except SwayError as exc:
            self._lost = str(exc)
            raise DesktopError(f"sway is gone: {exc}") from exc

    def _info(self, v: SwayWindow, catalogue: list[AppEntry]) -> WindowInfo:
        exe = _procfs.exe_name(v.pid) if v.pid else ""
        app = appcat.identify(v.pid, (v.app_id, v.app_id), exe, catalogue)
        return WindowInfo(
            handle=v.con_id,
            pid=v.pid,
            title=v.title,
            app=app,
            geometry=Rect(v.rect.x, v.rect.y, v.rect.width, v.rect.height),
            active=v.focused,
            hidden=v.workspace == "__i3_scratch" or not v.visible,
        )

    async def list_windows(self) -> list[WindowInfo]:
        catalogue = await self._catalogue()
        return [self._info(v, catalogue) for v in await self._views()]

    async def handles(self) -> dict[WindowHandle, int]:
        return {v.con_id: v.pid for v in await self._views()}

    async def active_handle(self) -> WindowHandle | None:
        return next((v.con_id for v in await self._views() if v.focused), None)

    async def active_window(self) -> WindowInfo | None:
        views = await self._views()
        focused = next((v for v in views if v.focused), None)
        return None if focused is None else self._info(focused, await self._catalogue())

    async def window(self, handle: WindowHandle) -> WindowInfo | None:
        found = next((v for v in await self._views() if v.con_id == handle), None)
        return None if found is None else self._info(found, await self._catalogue())

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        views = [v for v in await self._views() if v.visible and v.workspace != "__i3_scratch"]
        # floating windows lie above tiled ones; among floating ones the later is above
        ordered = [v for v in reversed(views) if v.floating] + [v for v in views if not v.floating]
        for v in ordered:
            r = v.rect
            if r.x <= x < r.x + r.width and r.y <= y < r.y + r.height:
                return self._info(v, await self._catalogue())
        return None

    async def request_activate(self, handle: WindowHandle) -> None:
        with contextlib.suppress(SwayError):
            await self.ipc.focus(handle)

    async def activate(self, window: WindowInfo) -> bool:
        async def active() -> bool:
            return await self.active_handle() == window.handle

        try:
            await self.ipc.focus(window.handle)
            await async_wait_for(active, timeout=2.0, what="the window to become active")
        except (SwayError, WaitTimeout):
            return False
        return True

    async def minimize(self, window: WindowInfo) -> None:
        """sway has no minimize: the window goes to the scratchpad (hidden)."""
        try:
            await self.ipc.command(f"[con_id={int(window.handle)}] move scratchpad")
        except SwayError as exc:
            raise ActionFailed(f"cannot hide window {window.stable_id}: {exc}") from exc

        async def hidden() -> bool:
            w = await self.window(window.handle)
            return w is not None and w.hidden

        await async_wait_for(hidden, timeout=2.0, what="the window to be hidden")

    async def close_window(self, window: WindowInfo) -> None:
        await self.ipc.close_window(window.handle)

    async def popups(self, window: WindowInfo) -> list[Rect]:
        return []  # an app's popups are its own surfaces; sway does not list them

    async def screen_size(self) -> tuple[int, int]:
        outs = [o for o in await self.ipc.outputs() if o.get("active")]
        if not outs:
            return (0, 0)
        rects = [o.get("rect") or {} for o in outs]
        right = max(int(r.get("x", 0)) + int(r.get("width", 0)) for r in rects)
        bottom = max(int(r.get("y", 0)) + int(r.get("height", 0)) for r in rects)
        return (right, bottom)

    def lost(self) -> str | None:
        return self._lost

    async def close(self) -> None:
        await self.ipc.close()


class WlrInput:
    """The input port over the virtual keyboard and pointer protocols."""

    def __init__(self, devices: VirtualInput) -> None:
        self.devices = devices

    async def key_event(self, names: Sequence[str], down: bool) -> None:
        self.devices.key_event(names, down)

    async def press_combo(self, names: Sequence[str]) -> None:
        self.devices.press(names)

    async def type_text(self, text: str) -> None:
        self.devices.type_text(text)

    @contextlib.asynccontextmanager
    async def held(self, names: Sequence[str]) -> AsyncIterator[None]:
        self.devices.key_event(names, True)
        try:
            yield
        finally:
            self.devices.key_event(names, False)

    async def move(self, x: int, y: int) -> None:
        try:
            self.devices.move(x, y)
        except DesktopError as exc:
            raise ActionFailed(str(exc)) from exc
        self.devices.conn.roundtrip()

    async def button(self, button: MouseButton, down: bool) -> None:
        self.devices.button(button, down)
        self.devices.conn.roundtrip()

    async def wheel(self, direction: WheelDirection, notches: int) -> None:
        dx = notches if direction == "right" else -notches if direction == "left" else 0
        dy = notches if direction == "down" else -notches if direction == "up" else 0
        x, y = self.devices.position
        self.devices.scroll(x, y, dx, dy)

    async def pointer(self) -> tuple[int, int]:
        return self.devices.position

    async def close(self) -> None:
        self.devices.close()


class WlrCapture:
    """The capture port over wlr-screencopy: a window is its content rectangle's pixels."""

    def __init__(self, screencopy: ScreenCopy, windows: SwayWindows) -> None:
        self.copy = screencopy
        self.windows = windows

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        if window is None:
            return self.copy.capture()
        current = await self.windows.window(window.handle)
        if current is None:
            raise DesktopError(f"window {window.stable_id} has closed")
        if current.hidden:
            raise ActionFailed(
                f"window {window.stable_id} is hidden (in sway's scratchpad): it cannot be "
                "captured. Activate it first, then try again."
            )
        g = current.geometry
        if g.empty:
            raise ActionFailed(f"window {window.stable_id} has no area on the screen")
        return self.copy.capture((g.x, g.y, g.width, g.height))

    def checksum(self, region: Region | None) -> int | None:
        return None  # a capture renders (100+ ms): the readers fall back to AT-SPI events

    async def close(self) -> None:
        self.copy.close()


class WaylandLauncher:
    """The freedesktop launcher's catalogue and flags, starting apps as the Wayland session's
    own clients: native Wayland switches, and — on a sandbox run as its own user — as that
    user (:mod:`deskpilot.sandbox.user`)."""

    def __init__(self, settings: Settings, xdg: XdgLauncher, wayland_display: str) -> None:
        self.settings = settings
        self.xdg = xdg
        self.wayland_display = wayland_display

    @property
    def logs(self) -> Path:
        return self.xdg.logs

    async def apps(self) -> list[AppEntry]:
        return await self.xdg.apps()

    def argv_for(self, app: AppEntry) -> list[str]:
        return self.xdg.argv_for(app)

    def _env_and_argv(self, argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
        from deskpilot.desktop.wayland.appenv import wayland_app_env

        env = dict(self.settings.environ)
        if self.settings.sandbox_dir:
            from deskpilot.sandbox.info import read_info, sandbox_app_env
            from deskpilot.sandbox.user import load_user

            info = read_info(self.settings.sandbox_dir)
            if info is not None:
                env = sandbox_app_env(env, info)
                user = load_user(self.settings.sandbox_dir)
                if user is not None and user.switches:
                    env.update(user.env())
                    env["HOME"] = info.home
                    _hand_over(argv, self.settings.sandbox_dir, user.own)
                    return env, user.wrap(argv)
                return env, list(argv)
        return wayland_app_env(env, self.wayland_display), list(argv)

    def spawn(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        env, full = self._env_and_argv(argv)
        return self.xdg.start(argv, full, env)

    def spawn_unprivileged(self, argv: Sequence[str]) -> subprocess.Popen[bytes] | None:
        return None  # a Wayland sandbox's apps already run as its user

    def reap(self) -> None:
        self.xdg.reap()

    def launched_pids(self) -> list[int]:
        return self.xdg.launched_pids()

    def family(self, pids: Iterable[int]) -> set[int]:
        return self.xdg.family(pids)

    def agent_browser(self) -> str | None:
        return self.xdg.agent_browser()

    def browser_flags(self) -> list[str]:
        from deskpilot.desktop.wayland.appenv import CHROMIUM_WAYLAND_FLAGS

        return [*self.xdg.browser_flags(), *CHROMIUM_WAYLAND_FLAGS]

    async def close(self) -> None:
        await self.xdg.close()


def _hand_over(argv: Sequence[str], runtime_dir: str, own: Callable[[str], None]) -> None:
    """Give the sandbox's user the paths an app is started with that deskpilot made inside the
    sandbox (a browser profile, a copied document): made by root, they would be read-only to
    the app (measured: Chromium exited with code 21, its profile not writable)."""
    root = os.path.realpath(runtime_dir) + os.sep
    for arg in argv[1:]:
        path = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        if path.startswith("file://"):
            path = path.removeprefix("file://")
        real = os.path.realpath(path) if path.startswith("/") else ""
        if real.startswith(root) and os.path.exists(real):
            own(real)


def _wayland_socket(settings: Settings) -> str:
    env = settings.environ
    name = env.get("WAYLAND_DISPLAY", "")
    if not name:
        raise DisplayUnavailable("no Wayland session: WAYLAND_DISPLAY is not set")
    if os.path.isabs(name):
        return name
    runtime = env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    return os.path.join(runtime, name)


async def open_ports(settings: Settings) -> Ports:
    """sway's IPC, the virtual devices, screencopy and the accessibility bus, opened together
    (all or none)."""
    from deskpilot.desktop.atspi.port import AtspiAccessibility
    from deskpilot.desktop.wayland.wlr_capture import ScreenCopy
    from deskpilot.desktop.wayland.wlr_input import VirtualInput
    from deskpilot.desktop.xdg.launcher import XdgLauncher

    ipc_path = settings.environ.get("SWAYSOCK", "")
    if not ipc_path:
        raise DisplayUnavailable("no sway session: SWAYSOCK is not set")
    socket_path = _wayland_socket(settings)
    ipc = await SwayIpc.connect(ipc_path)
    opened: list[Callable[[], object]] = []
    try:
        xdg = XdgLauncher(settings)
        windows = SwayWindows(ipc, xdg.apps)
        size = await windows.screen_size()
        devices = await asyncio.to_thread(VirtualInput.open, socket_path, size)
        opened.append(devices.close)
        screencopy = await asyncio.to_thread(ScreenCopy.open, socket_path)
        opened.append(screencopy.close)
        a11y = await AtspiAccessibility.open(settings)
    except BaseException:
        for close in reversed(opened):
            close()
        await ipc.close()
        raise
    return Ports(
        backend="wlroots",
        settings=settings,
        windows=windows,
        input=WlrInput(devices),
        capture=WlrCapture(screencopy, windows),
        a11y=a11y,
        launcher=WaylandLauncher(settings, xdg, socket_path),
    )


def detect(settings: Settings) -> str | None:
    """A Wayland session with sway's IPC socket: named by the environment, or found in the
    user's runtime dir (an MCP client starts servers without WAYLAND_DISPLAY)."""
    env = settings.environ
    if env.get("SWAYSOCK") and env.get("WAYLAND_DISPLAY"):
        return "a sway (wlroots) Wayland session: SWAYSOCK and WAYLAND_DISPLAY are set"
    if env.get("WAYLAND_DISPLAY") or not env.get("DISPLAY"):
        found = find_session(env, os.getuid())
        if found.swaysock and found.wayland_display:
            return f"a sway (wlroots) Wayland session found in {found.runtime_dir}"
    return None


def resolve(settings: Settings) -> Settings:
    """The settings with what the environment leaves out of the sway session filled in."""
    env = settings.environ
    if env.get("SWAYSOCK") and env.get("WAYLAND_DISPLAY") and settings.session_bus:
        return settings
    found = find_session(env, os.getuid())
    filled = {**found.env(), **{k: v for k, v in env.items() if v}}
    return settings.with_overrides(
        environ=filled, session_bus=settings.session_bus or found.session_bus or None
    )


def open_preview(display: str, mode: str) -> PixelWatch:
    """The console's live preview on the sway session of ``display`` (:mod:`.wlr_preview`)."""
    from deskpilot.desktop.wayland.wlr_preview import open_preview as open_sway_preview

    return open_sway_preview(display, mode)


BACKEND = Backend(
    name="wlroots",
    open=open_ports,
    detect=detect,
    resolve=resolve,
    priority=20,
    sandbox="sway",
    preview=open_preview,
    summary="a wlroots compositor (sway): IPC windows, virtual keyboard/pointer, screencopy, "
    "with AT-SPI",
)
