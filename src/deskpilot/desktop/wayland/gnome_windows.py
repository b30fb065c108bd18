"""GNOME's windows port, built from what a bare Mutter session offers: AT-SPI frames.

Mutter tells no client where windows are (``org.gnome.Shell.Introspect`` is restricted, and a
bare mutter has no Shell), but every accessible app lists its top-level frames on the AT-SPI
bus with a title, its process and its states — ``active`` is the window Mutter focused. So a
window here is one frame:

* **handle**: derived from the app's bus name and the frame's object path (a hash, stable for
  the frame's life; a restarted app has another bus name, so handles are not reused);
* **geometry**: the window's own coordinates, ``(0, 0, width, height)`` from the frame's
  extents (``placed`` False). A Wayland client does not know where its window is on the
  screen, and Mutter does not say: points in such a window are its own coordinates, which is
  what the input port aims in (a ``RecordWindow`` stream of the active window,
  :mod:`.gnome_streams`). An X11 app on Xwayland does know: its named frame reports its place
  on the screen, which is then its geometry (``placed``), aimed at in the monitor's stream;
* **active** from the frame's ACTIVE state; **hidden** for a window deskpilot minimized (GTK
  on Wayland is never told it was minimized) until it is active again.

Activation, measured on mutter 43.8 headless: GTK 4 refuses ``Component.GrabFocus``
(NotSupported), GTK 3 answers False and nothing moves, ``org.freedesktop.Application.Activate``
exists only for unique GApplications (gnome-calculator 43 is not one) and xdg-activation needs a
surface and a serial of the user's. Mutter's own keybinding does it: without GNOME Shell's
switcher, ``switch-applications-backward`` (Shift+Alt+Tab) activates the least recently used
window of the tab list at once, so pressing it at most (windows − 1) times through
RemoteDesktop reaches any window, each step checked on the frames' ACTIVE states. Minimize is
Mutter's Super+H, close is Alt+F4 (``xdg_toplevel.close``), both on the window made active
first.

What cannot be told: the window under a point (:meth:`GnomeWindows.window_at` answers the
active window when the point lies inside it — the only window pointer input can reach — and
None otherwise), other windows' positions, popups (an app's menus are its own surfaces).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop import apps as appcat
from deskpilot.desktop.base import AppEntry, Rect, WindowInfo
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.errors import ActionFailed, DesktopError

if TYPE_CHECKING:
    from deskpilot.desktop.atspi.bus import AtspiBus
    from deskpilot.desktop.atspi.frames import WindowTrees

Catalogue = Callable[[], Awaitable[list[AppEntry]]]
Press = Callable[[Sequence[str]], Awaitable[None]]
#: the monitor's size, asked when wanted (on a user's session it comes with the portal's grant)
ScreenSize = Callable[[], Awaitable[tuple[int, int]]]

#: AT-SPI states (bits of the state set) this module reads
S_ACTIVE, S_VISIBLE = 1 << 1, 1 << 30
#: Mutter's keybindings (org.gnome.desktop.wm.keybindings defaults)
SWITCH_BACKWARD = ("Shift_L", "Alt_L", "Tab")
MINIMIZE = ("Super_L", "h")
CLOSE = ("Alt_L", "F4")
#: how long one switch step may take to show on the frames' states
STEP_S = 2.0


def frame_handle(bus_name: str, path: str) -> WindowHandle:
    """The handle of the frame at ``path`` of the app on ``bus_name``: 31 bits of a hash."""
    digest = hashlib.blake2b(f"{bus_name}\0{path}".encode(), digest_size=4).digest()
    return (int.from_bytes(digest, "big") & 0x7FFFFFFF) or 1


@dataclass(frozen=True)
class Frame:
    """One top-level frame as the accessibility bus shows it."""

    handle: WindowHandle
    bus: str
    path: str
    pid: int
    title: str
    app_name: str
    states: int
    size: tuple[int, int]
    #: where the frame says it is on the screen: (0, 0) for a Wayland client (which cannot
    #: know), the true place for an X11 window on Xwayland
    place: tuple[int, int] = (0, 0)

    @property
    def placed(self) -> bool:
        """An X11 window on Xwayland: it knows where it is (a Wayland toplevel never does)."""
        return self.place != (0, 0)

    @property
    def active(self) -> bool:
        return bool(self.states & S_ACTIVE)


class GnomeWindows:
    """The windows port over AT-SPI frames, activation through Mutter's keybindings."""

    def __init__(
        self, trees: WindowTrees, press: Press, catalogue: Catalogue, screen: ScreenSize
    ) -> None:
        self.trees = trees
        self.screen = screen
        self.bus: AtspiBus = trees.bus
        self.press = press
        self._catalogue = catalogue
        self._minimized: set[WindowHandle] = set()
        self._lost: str | None = None

    # -- reading ---------------------------------------------------------------------------

    async def frames(self) -> list[Frame]:
        """Every app's visible top-level frames with an area."""
        try:
            buses = await self.bus.app_buses()
        except DesktopError as exc:
            self._lost = str(exc)
            raise
        found = await asyncio.gather(*(self._frames_of(b) for b in buses))
        return [f for group in found for f in group]

    async def _frames_of(self, bus_name: str) -> list[Frame]:
        from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
        from deskpilot.desktop.atspi.consts import ROOT_PATH

        try:
            pid = await self.bus.pid_of(bus_name)
            listed = await self.trees.frames_of(bus_name)
            name = await self.bus.get_property(bus_name, ROOT_PATH, "Accessible", "Name")
        except (AtspiCallError, AtspiTimeout):
            return []  # busy, or leaving the bus: not a window we can use now
        out = []
        for path, title, states, extents in listed:
            if len(extents) != 4 or extents[2] <= 0 or extents[3] <= 0:
                continue
            if not states & S_VISIBLE:
                continue
            if not title and (extents[0], extents[1]) != (0, 0):
                # an unnamed frame placed somewhere is a popup surface placed against its
                # parent (Chromium's omnibox and bubble frames: (109, 35) in the window); a
                # Wayland toplevel knows no place, its "screen" extents start at (0, 0)
                continue
            out.append(
                Frame(
                    handle=frame_handle(bus_name, path),
                    bus=bus_name,
                    path=path,
                    pid=pid or 0,
                    title=title,
                    app_name=str(name),
                    states=states,
                    size=(int(extents[2]), int(extents[3])),
                    place=(int(extents[0]), int(extents[1])),
                )
            )
        return out

    def _info(self, f: Frame, catalogue: list[AppEntry]) -> WindowInfo:
        exe = _procfs.exe_name(f.pid) if f.pid else ""
        if f.active:
            self._minimized.discard(f.handle)
        return WindowInfo(
            handle=f.handle,
            pid=f.pid,
            title=f.title,
            app=appcat.identify(f.pid, (f.app_name, exe), exe, catalogue),
            geometry=Rect(*f.place, *f.size),
            active=f.active,
            hidden=f.handle in self._minimized,
            placed=f.placed,
        )

    async def list_windows(self) -> list[WindowInfo]:
        frames = await self.frames()
        catalogue = await self._catalogue()
        return [self._info(f, catalogue) for f in frames]

    async def handles(self) -> dict[WindowHandle, int]:
        return {f.handle: f.pid for f in await self.frames()}

    async def active_handle(self) -> WindowHandle | None:
        return next((f.handle for f in await self.frames() if f.active), None)

    async def active_window(self) -> WindowInfo | None:
        focused = next((f for f in await self.frames() if f.active), None)
        return None if focused is None else self._info(focused, await self._catalogue())

    async def window(self, handle: WindowHandle) -> WindowInfo | None:
        found = next((f for f in await self.frames() if f.handle == handle), None)
        return None if found is None else self._info(found, await self._catalogue())

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        """The active window when (x, y) lies in it (points are a window's own coordinates on
        this backend, and pointer input reaches only the active window); None otherwise:
        Mutter does not tell which window is under a screen point."""
        active = await self.active_window()
        if active is not None and active.geometry.contains(x, y):
            return active
        return None

    # -- acting ----------------------------------------------------------------------------

    async def request_activate(self, handle: WindowHandle) -> None:
        window = await self.window(handle)
        if window is not None:
            await self.activate(window)

    async def activate(self, window: WindowInfo) -> bool:
        """Shift+Alt+Tab until the window's frame is active (each press activates the least
        recently used window at once), at most once per other window."""
        for _ in range(2):  # a second round when a new window joined the tab list meanwhile
            frames = await self.frames()
            if not any(f.handle == window.handle for f in frames):
                return False
            for _step in range(max(1, len(frames) - 1)):
                before = next((f.handle for f in frames if f.active), None)
                if before == window.handle:
                    self._minimized.discard(window.handle)
                    return True
                await self.press(SWITCH_BACKWARD)
                try:
                    await self._switched_from(before)
                except WaitTimeout:
                    break  # nothing moved (a single window, or a modal one holding focus)
                frames = await self.frames()
            if await self.active_handle() == window.handle:
                self._minimized.discard(window.handle)
                return True
        return False

    async def _switched_from(self, before: WindowHandle | None) -> None:
        """Wait until another window than ``before`` is active (WaitTimeout if none gets)."""

        async def moved() -> bool:
            now = await self.active_handle()
            return now is not None and now != before

        await async_wait_for(
            moved, timeout=STEP_S, what="the switch to the next window", interval=0.02
        )

    async def _act_on(self, window: WindowInfo, keys: Sequence[str], what: str) -> None:
        if not await self.activate(window):
            raise ActionFailed(
                f"cannot {what} window {window.stable_id}: it could not be made active"
            )
        await self.press(keys)

    async def minimize(self, window: WindowInfo) -> None:
        """Mutter's minimize (Super+H) on the window made active; it then loses the focus."""
        await self._act_on(window, MINIMIZE, "minimize")

        async def gone() -> bool:
            return await self.active_handle() != window.handle

        try:
            await async_wait_for(gone, timeout=STEP_S, what="the window to be minimized")
        except WaitTimeout:
            raise ActionFailed(f"window {window.stable_id} was not minimized") from None
        self._minimized.add(window.handle)

    async def close_window(self, window: WindowInfo) -> None:
        """Mutter's close (Alt+F4: the app is asked to close the window)."""
        await self._act_on(window, CLOSE, "close")

    async def popups(self, window: WindowInfo) -> list[Rect]:
        return []  # an app's popups are its own surfaces; Mutter does not list them

    async def screen_size(self) -> tuple[int, int]:
        """The monitor's size (its stream's): what a screen capture shows."""
        return await self.screen()

    def lost(self) -> str | None:
        return self._lost

    async def close(self) -> None:
        return None  # the accessibility port owns the bus


async def read_frames(session_bus: str) -> list[Frame]:
    """The session's window frames, read on an accessibility connection of their own (eval's
    window checks, a test's look at the session): nothing is acted on."""
    from deskpilot.desktop.atspi.bus import AtspiBus
    from deskpilot.desktop.atspi.elements import ElementActions
    from deskpilot.desktop.atspi.frames import WindowTrees

    bus = await AtspiBus.connect(session_bus)
    try:

        async def no_keys(names: Sequence[str]) -> None:
            raise DesktopError("reading frames acts on nothing")

        async def no_apps() -> list[AppEntry]:
            return []

        async def no_screen() -> tuple[int, int]:
            return 0, 0

        trees = WindowTrees(bus, ElementActions(bus))
        return await GnomeWindows(trees, no_keys, no_apps, no_screen).frames()
    finally:
        await bus.close()
