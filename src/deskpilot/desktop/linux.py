"""LinuxDesktop: the :class:`~deskpilot.desktop.base.Desktop` of an X11 session with AT-SPI.

Composes :mod:`x11` (windows, input, capture), :mod:`atspi` (trees and element actions) and
:mod:`apps` (catalogue, launching). Element actions prefer AT-SPI (no focus needed); raw input
activates the target window first and re-activates the previously active window afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import threading
import time
import zlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop import apps as appcat
from deskpilot.desktop.a11yenv import accessible_env, chromium_flags
from deskpilot.desktop.atspi import (
    EVENTS_INCOMPLETE,
    INCOMPLETE_EXECUTABLES,
    Accessibility,
)
from deskpilot.desktop.atspi_bus import AtspiBus
from deskpilot.desktop.atspi_elements import shows
from deskpilot.desktop.base import (
    ActionOutcome,
    AppEntry,
    LiveElement,
    MouseButton,
    Rect,
    ScrollDirection,
    Snapshot,
    WindowInfo,
)
from deskpilot.desktop.x11 import X11, XWindow, exe_name
from deskpilot.errors import ActionFailed, DesktopError

CHROMIUM_NAMES = {
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "brave-browser",
    "microsoft-edge",
    "vivaldi",
}
ELECTRON_HINTS = {"electron", "code", "slack", "discord", "signal-desktop", "obsidian"}


#: A read within this many seconds of keyboard/pointer input first lets the app settle.
INPUT_SETTLE_S = 1.0

#: Seconds after a window's pixels changed during which its reads stay full (no cache).
PIXEL_SETTLE_S = 1.5

#: Apps launched by this process that may still run (see LinuxDesktop._reap).
_LAUNCHED: list[subprocess.Popen[bytes]] = []


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


class LinuxDesktop:
    """The real desktop: an X display plus its accessibility bus."""

    def __init__(self, settings: Settings, x11: X11, a11y: Accessibility) -> None:
        self.settings = settings
        self.x = x11
        self.a11y = a11y
        self._catalogue: list[AppEntry] | None = None
        self._children: list[subprocess.Popen[bytes]] = []
        self._lock = asyncio.Lock()  # raw input is one thing at a time
        self._pixels: dict[int, int | None] = {}  # window → checksum of its pixels at last read
        self._pixels_changed_at: dict[int, float] = {}
        # pixel checksums to take (None) or being taken after a window's first read
        self._baselines: dict[int, asyncio.Future[int | None] | None] = {}
        self._grabber: Any = None  # mss grabber, opened on first use
        self._grabber_lock = threading.Lock()
        self._last_input = 0.0  # monotonic time of the last keyboard/pointer input

    @classmethod
    async def open(cls, settings: Settings) -> LinuxDesktop:
        x11 = X11(settings.display)
        bus: AtspiBus | None = None
        try:
            bus = await AtspiBus.connect(settings.session_bus)
            await bus.register_events()
            await bus.listen()
        except BaseException:
            if bus is not None:
                await bus.close()
            x11.close()
            raise
        return cls(settings, x11, Accessibility(bus))

    async def close(self) -> None:
        for pending in self._baselines.values():
            if pending is not None:
                with contextlib.suppress(Exception):
                    await pending  # a grab in a thread: let it finish before the grabber closes
        try:
            if self._grabber is not None:
                self._grabber.close()
            await self.a11y.bus.close()
        finally:
            self.x.close()
            self._reap()

    def _reap(self) -> None:
        self._children = [p for p in self._children if p.poll() is None]
        # apps outlive this object: keep their Popen objects referenced (no "still running"
        # warning from Popen.__del__) until they exit
        _LAUNCHED.extend(p for p in self._children if p not in _LAUNCHED)
        _LAUNCHED[:] = [p for p in _LAUNCHED if p.poll() is None]

    # -- windows and apps ------------------------------------------------------------------

    async def apps(self) -> list[AppEntry]:
        if self._catalogue is None:
            self._catalogue = appcat.load_catalogue(self._app_env())
        return self._catalogue

    def _info(self, w: XWindow, active: int | None, catalogue: list[AppEntry]) -> WindowInfo:
        exe = exe_name(w.pid) if w.pid else ""
        app = appcat.identify(w.pid, w.wm_class, exe, catalogue)
        return WindowInfo(
            xid=w.xid,
            pid=w.pid,
            title=w.title,
            app=app,
            geometry=w.geometry,
            active=w.xid == active,
            hidden=w.hidden,
            desktop=w.desktop,
        )

    async def list_windows(self) -> list[WindowInfo]:
        self._reap()
        catalogue = await self.apps()
        active = self.x.active_xid()
        return [self._info(w, active, catalogue) for w in self.x.windows()]

    async def active_window(self) -> WindowInfo | None:
        active = self.x.active_xid()
        if active is None:
            return None
        w = self.x.window(active)
        return None if w is None else self._info(w, active, await self.apps())

    async def activate(self, window: WindowInfo) -> bool:
        async def active() -> bool:
            return self.x.active_xid() == window.xid

        for _ in range(2):  # the WM occasionally ignores an activation right after another
            self.x.request_activate(window.xid)
            try:
                await async_wait_for(active, timeout=1.0, what="the window to become active")
                return True
            except WaitTimeout:
                continue
        return False

    # -- launching -------------------------------------------------------------------------

    def _app_env(self) -> dict[str, str]:
        env = dict(self.settings.environ)
        if self.settings.display:
            env["DISPLAY"] = self.settings.display
        if self.settings.sandbox_dir:
            from deskpilot.sandbox import SandboxInfo, sandbox_app_env

            info = SandboxInfo(
                display=self.settings.display or "",
                pgid=0,
                width=0,
                height=0,
                runtime_dir=self.settings.sandbox_dir,
                session_bus=self.settings.session_bus or "",
            )
            return sandbox_app_env(env, info)
        return accessible_env(env)

    def _argv_for(self, app: AppEntry) -> list[str]:
        argv = list(app.exec_argv)
        exe = app.executable.lower()
        if exe in CHROMIUM_NAMES or exe in ELECTRON_HINTS:
            argv[1:1] = [f for f in chromium_flags() if f not in argv]
        return argv

    def _spawn(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        log_dir = self.settings.state_dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log = log_dir / f"{Path(argv[0]).name}.log"
        with open(log, "ab") as out:
            env = self._app_env()
            try:
                proc = subprocess.Popen(
                    list(argv),
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,
                    cwd=env.get("HOME") or None,
                )
            except OSError as exc:
                raise DesktopError(f"cannot start {argv[0]}: {exc.strerror}") from exc
        self._children.append(proc)
        if self.settings.sandbox_dir:
            from deskpilot.sandbox import record_spawn

            record_spawn(self.settings.sandbox_dir, proc.pid)
        return proc

    async def _wait_new_window(
        self,
        before: dict[int, int],
        proc: subprocess.Popen[bytes],
        app: AppEntry | None,
        timeout: float,
    ) -> WindowInfo:
        names = set()
        if app is not None:
            names = {n.casefold() for n in (app.wm_class, app.executable, app.app_id) if n}

        async def check() -> WindowInfo | None:
            new = [x for x, pid in self.x.client_pids().items() if self.x.is_new(before, x, pid)]
            if not new:
                if proc.poll() == 0 and app is not None:
                    # a single-instance app (GApplication) handed the launch to its running
                    # instance and exited: that instance's window is the app's window
                    return next(
                        (w for w in await self.list_windows() if w.app.app_id == app.app_id),
                        None,
                    )
                return None
            family = _procfs.descendants([proc.pid])
            windows = await self.list_windows()
            for w in windows:
                if w.xid not in new or not w.title:
                    continue
                ident = {k for k in w.app.match_keys()}
                if (
                    w.pid in family
                    or (names & ident)
                    or (app is not None and w.app.app_id == app.app_id)
                ):
                    return w
            return None

        try:
            return await async_wait_for(check, timeout=timeout, what="the app's window")
        except WaitTimeout as exc:
            code = proc.poll()
            why = f" (it exited with code {code})" if code not in (None, 0) else ""
            raise DesktopError(
                f"{app.name if app else proc.args!r} started but no window appeared within "
                f"{timeout:.0f}s{why}; see {self.settings.state_dir / 'logs'}"
            ) from exc

    async def wait_tree_ready(self, window: WindowInfo, timeout: float = 20.0) -> None:
        """Wait until the window's accessible tree is there and two reads agree on its size
        (and the window on its title: LibreOffice retitles its frame once the document is in)."""
        last: dict[str, object] = {"count": -1, "title": None}

        async def check() -> bool:
            located = await self.a11y.locate(window)
            if located is None:
                return False
            bus_name, frame, _ = located
            tree = await self.a11y.reader.read_app(bus_name)
            count = len(tree.subtree(frame))
            now = self.x.window(window.xid)
            title = now.title if now is not None else None
            stable = count > 1 and count == last["count"] and title == last["title"]
            last["count"], last["title"] = count, title
            return stable

        try:
            await async_wait_for(
                check, timeout=timeout, what="the accessibility tree", interval=0.1
            )
        except WaitTimeout as exc:
            raise DesktopError(
                f"the window of {window.app.name} appeared but its accessibility tree did not "
                f"settle within {timeout:.0f}s; the app may not support AT-SPI"
            ) from exc

    async def launch(
        self, app: AppEntry, *, timeout: float = 30.0, restore_focus: bool = True
    ) -> WindowInfo:
        before = self.x.client_pids()
        previous = self.x.active_xid()
        proc = self._spawn(self._argv_for(app))
        deadline = time.monotonic() + timeout
        window = await self._wait_new_window(before, proc, app, timeout)
        await self.wait_tree_ready(window, timeout)
        while (current := await self._refresh(window)) is None:
            # a first window that went away once ready (LibreOffice may open its frame, then
            # replace it with the document's): wait for the one that replaced it
            before[window.xid] = window.pid
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DesktopError(
                    f"{app.name}'s window closed as soon as it was ready; "
                    f"see {self.settings.state_dir / 'logs'}"
                )
            window = await self._wait_new_window(before, proc, app, remaining)
            await self.wait_tree_ready(window, remaining)
        window = current
        if restore_focus and previous is not None and previous in self.x.client_ids():
            prev = self.x.window(previous)
            if prev is not None and not prev.hidden and self.x.active_xid() != previous:
                self.x.request_activate(previous)
        return (await self._refresh(window)) or window

    async def _refresh(self, window: WindowInfo) -> WindowInfo | None:
        w = self.x.window(window.xid)
        return None if w is None else self._info(w, self.x.active_xid(), await self.apps())

    def agent_browser_profile(self) -> Path:
        if self.settings.sandbox_dir:
            return Path(self.settings.sandbox_dir) / "home" / ".config" / "deskpilot-browser"
        return self.settings.state_dir / "browser-profile"

    async def open_urls(
        self, urls: Sequence[str], *, browser: str = "agent", timeout: float = 30.0
    ) -> WindowInfo:
        before = self.x.client_pids()
        if browser == "default":
            procs = [self._spawn(["xdg-open", u]) for u in urls]
            window = await self._wait_new_window(before, procs[0], None, timeout)
            return window
        chromium = next(
            (
                p
                for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser")
                if os.access(p, os.X_OK)
            ),
            None,
        )
        if chromium is None:
            raise DesktopError(
                "the agent browser (Debian's chromium) is not installed: apt install chromium, "
                'or set browser = "default" in the config to use the system browser'
            )
        profile = self.agent_browser_profile()
        profile.mkdir(parents=True, exist_ok=True)
        argv = [
            chromium,
            *chromium_flags(),
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "--new-window",
            *urls,
        ]
        entry = next((a for a in await self.apps() if a.executable == "chromium"), None)
        proc = self._spawn(argv)
        window = await self._wait_new_window(before, proc, entry, timeout)
        await self.wait_tree_ready(window, timeout)
        await self.wait_page_loaded(window, timeout)
        return (await self._refresh(window)) or window

    async def wait_page_loaded(self, window: WindowInfo, timeout: float = 15.0) -> bool:
        """Wait until the browser window shows a loaded web document (not busy, has content)."""

        async def loaded() -> bool:
            # full reads: Chromium's tree can lag its paint by more than PIXEL_SETTLE_S on a
            # busy machine, and it does not always announce that its document now shows
            snap = await self.snapshot(window, timeout=2.0, fresh=True)
            return any(
                n.role == "document-web" and "busy" not in n.states and n.children
                for n in snap.nodes()
            )

        try:
            await async_wait_for(loaded, timeout=timeout, what="the page to load", interval=0.1)
        except WaitTimeout:
            return False
        return True

    # -- accessibility ---------------------------------------------------------------------

    async def snapshot(
        self, window: WindowInfo, *, timeout: float = 5.0, fresh: bool = False
    ) -> Snapshot:
        start = time.perf_counter()
        if time.monotonic() - self._last_input < INPUT_SETTLE_S:
            # keyboard/pointer input is processed asynchronously: let the app catch up
            # (a read right after typing "12*7\n" could still show "12×7")
            await self.settle(window, self._last_input)
        fresh = await self._pixels_changed(window) or fresh
        root, partial, problems = await self.a11y.read_window(window, timeout=timeout, fresh=fresh)
        if window.xid in self._baselines and self._baselines[window.xid] is None:
            self._baselines[window.xid] = asyncio.ensure_future(
                asyncio.to_thread(self._checksum, self._on_screen(window))
            )
        return Snapshot(
            window=window,
            root=root,
            partial=partial,
            problems=problems,
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )

    async def _pixels_changed(self, window: WindowInfo) -> bool:
        """For apps whose AT-SPI events do not cover everything (Chromium sends none when a
        page scrolls), compare the window's pixels with the last read's: after a visual
        change the cached tree is not trusted, and reads stay full for PIXEL_SETTLE_S (the
        accessibility tree lags behind the paint)."""
        where = self.a11y.cache.located.get(window.xid)
        if where is not None:
            incomplete = (await self.a11y.bus.toolkit(where.bus)).casefold() in EVENTS_INCOMPLETE
        else:
            incomplete = window.app.executable.casefold() in INCOMPLETE_EXECUTABLES
        if not incomplete:
            return False
        if where is None:
            # the first read of this window in this process is a full read anyway: its pixels
            # are only the next read's baseline, grabbed in a thread once the read is done
            # (the first grab opens an X connection: ~20 ms)
            self._pixels_changed_at[window.xid] = 0.0
            self._baselines[window.xid] = None
            return False
        if (pending := self._baselines.pop(window.xid, None)) is not None:
            self._pixels[window.xid] = await pending
        digest = self._checksum(self._on_screen(window))
        now = time.monotonic()
        previous = self._pixels.get(window.xid)
        self._pixels[window.xid] = digest
        if digest is None or previous != digest:  # also when there is no baseline
            self._pixels_changed_at[window.xid] = now
        return now - self._pixels_changed_at[window.xid] < PIXEL_SETTLE_S

    def _on_screen(self, window: WindowInfo) -> tuple[int, int, int, int] | None:
        """The window's on-screen part as (left, top, width, height), if any."""
        sw, sh = self.x.screen_size()
        g = window.geometry
        left, top = max(0, g.x), max(0, g.y)
        width, height = min(g.x + g.width, sw) - left, min(g.y + g.height, sh) - top
        return (left, top, width, height) if width > 0 and height > 0 else None

    def _checksum(self, region: tuple[int, int, int, int] | None) -> int | None:
        """A checksum of a screen region's pixels (an MIT-SHM grab and a CRC of it: a few
        milliseconds for 1280×800; a collision costs one read from the cache). Safe in a
        thread: it uses its own X connection, not the desktop's."""
        if region is None:
            return None
        left, top, width, height = region
        try:
            with self._grabber_lock:
                if self._grabber is None:
                    import mss

                    self._grabber = mss.MSS(display=self.settings.display)
                grabber = self._grabber
            shot = grabber.grab({"left": left, "top": top, "width": width, "height": height})
        except Exception:  # mss raises its own ScreenShotError and OS errors
            return None
        return zlib.crc32(shot.raw)

    async def inspect(self, key: tuple[str, str]) -> LiveElement | None:
        live = await self.a11y.inspect(key)
        if live is None:
            return None
        bounds = await self.a11y.extents(key)
        return LiveElement(
            key=live.key,
            pid=live.pid,
            role=live.role,
            name=live.name,
            parent_key=live.parent_key,
            states=live.states,
            bounds=bounds,
        )

    async def _element_center(self, window: WindowInfo, key: tuple[str, str]) -> tuple[int, int]:
        rect = await self.a11y.extents(key)
        if rect is None or rect.empty:
            raise ActionFailed("the element has no on-screen position to click")
        located = await self.a11y.locate(window)
        if located is not None and located[2] != (0, 0):
            rect = rect.offset(*located[2])
        if not window.geometry.intersects(rect):
            raise ActionFailed("the element is outside the window's visible area; scroll first")
        return rect.center

    async def click_element(self, window: WindowInfo, key: tuple[str, str]) -> ActionOutcome:
        name = await self.a11y.activate(key)
        if name is not None:
            return ActionOutcome("atspi", f"AT-SPI action '{name}'")
        x, y = await self._element_center(window, key)
        async with self._raw_input(window) as outcome:
            self.x.click(x, y)
        return outcome.done(f"pointer click at ({x}, {y})")

    async def fill_element(
        self, window: WindowInfo, key: tuple[str, str], text: str
    ) -> ActionOutcome:
        live = await self.a11y.inspect(key, window.pid)
        masked = live is not None and live.role == "password-text"
        how = await self.a11y.set_text(key, text, masked=masked)
        if how is not None:
            return ActionOutcome("atspi", how)
        # no EditableText (Chromium inputs): focus it, select all, type over it
        return await self._type_over(window, key, text, masked=masked)

    async def _type_over(
        self, window: WindowInfo, key: tuple[str, str], text: str, *, masked: bool = False
    ) -> ActionOutcome:
        async with self._raw_input(window) as outcome:
            if not await self._focus(key):
                x, y = await self._element_center(window, key)
                self.x.click(x, y)
                if not await self._has_focus(key):
                    raise ActionFailed("the field did not take the keyboard focus")
            self.x.press_combo([self.x.keysym("Control_L"), self.x.keysym("a")])
            self.x.press_combo([self.x.keysym("BackSpace")])
            self.x.type_text(text)
            # key events are queued; the app may still be applying them: wait until the field
            # shows the text, so that the next action (focusing another field) cannot steal
            # keystrokes meant for this one
            if not await self._shows(key, text, masked):
                shown = "(hidden)" if masked else await self.a11y.read_text(key)
                raise ActionFailed(
                    f"typed {len(text)} characters but the field shows {shown!r}; re-read it"
                )
        return outcome.done("focused the field, selected all and typed")

    async def _shows(
        self, key: tuple[str, str], text: str, masked: bool = False, timeout: float = 3.0
    ) -> bool:
        async def check() -> bool:
            return shows(await self.a11y.read_text(key), text, masked)

        try:
            await async_wait_for(check, timeout=timeout, what="the typed text")
        except WaitTimeout:
            return False
        return True

    async def _focus(self, key: tuple[str, str]) -> bool:
        """GrabFocus, then wait until the element reports FOCUSED (Chromium focuses
        asynchronously: typing right away would go to the previous field)."""
        return await self.a11y.grab_focus(key) and await self._has_focus(key)

    async def _has_focus(self, key: tuple[str, str], timeout: float = 1.5) -> bool:
        async def focused() -> bool:
            live = await self.a11y.inspect(key)
            return live is not None and "focused" in live.states

        try:
            await async_wait_for(focused, timeout=timeout, what="the keyboard focus")
        except WaitTimeout:
            return False
        return True

    async def read_text(self, key: tuple[str, str]) -> str | None:
        return await self.a11y.read_text(key)

    async def settle(self, window: WindowInfo, since: float) -> bool:
        buses = await self.a11y.buses_for_pid(window.pid)
        if not buses:
            return False
        results = await asyncio.gather(*(self.a11y.bus.settle(b, since) for b in buses))
        return any(results)

    async def focus_element(self, window: WindowInfo, key: tuple[str, str]) -> bool:
        return await self._focus(key)

    # -- raw input aimed at a window -------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _raw_input(self, window: WindowInfo) -> AsyncIterator[_Outcome]:
        async with self._lock:
            previous = self.x.active_xid()
            outcome = _Outcome()
            self._last_input = time.monotonic()
            if previous != window.xid:
                if not await self.activate(window):
                    raise ActionFailed(
                        f"could not activate window {window.stable_id} for keyboard/pointer "
                        "input (is it minimized on another desktop?)"
                    )
                outcome.activated = True
            try:
                yield outcome
            finally:
                if outcome.activated and previous is not None:
                    prev = self.x.window(previous)
                    if prev is not None and not prev.hidden:
                        info = self._info(prev, previous, await self.apps())
                        if await self.activate(info):
                            outcome.restored = info.stable_id

    async def type_text(self, window: WindowInfo, text: str) -> ActionOutcome:
        async with self._raw_input(window) as outcome:
            self.x.type_text(text)
        return outcome.done(f"typed {len(text)} characters")

    async def press_keys(self, window: WindowInfo, keys: Sequence[str]) -> ActionOutcome:
        syms = [self.x.keysym(k) for k in keys]
        async with self._raw_input(window) as outcome:
            self.x.press_combo(syms)
        return outcome.done("pressed " + "+".join(keys))

    async def scroll(
        self, window: WindowInfo, direction: ScrollDirection, steps: int
    ) -> tuple[ActionOutcome, bool]:
        snap = await self.snapshot(window, timeout=2.0, fresh=True)
        area = self._scroll_area(window, snap)
        x, y = area.center
        before_img = await self.capture(window)
        before_tree = _layout(snap)
        async with self._raw_input(window) as outcome:
            pointer = self.x.pointer()
            self.x.move(x, y)
            for _ in range(steps):
                self.x.wheel(direction, 1)
                await asyncio.sleep(0.01)  # let the app process each notch
            self.x.move(*pointer)
        moved = await self._changed(window, before_img)
        if moved:
            await self._still(window)  # smooth scrolling: wait until the content stops moving
            await self._tree_follows(window, before_tree)
        return outcome.done(f"{steps} wheel steps {direction} at ({x}, {y})"), moved

    async def _changed(self, window: WindowInfo, before: bytes) -> bool:
        """Whether the window's pixels change within a short while (the app repaints async)."""

        async def differs() -> bool:
            return (await self.capture(window)) != before

        try:
            await async_wait_for(differs, timeout=0.6, what="the window to repaint")
            return True
        except WaitTimeout:
            return False

    async def _still(self, window: WindowInfo, timeout: float = 2.0) -> None:
        """Wait until two captures 80 ms apart are the same (animations have finished)."""
        last = {"img": await self.capture(window)}

        async def same() -> bool:
            await asyncio.sleep(0.08)
            now = await self.capture(window)
            stable = now == last["img"]
            last["img"] = now
            return stable

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(same, timeout=timeout, what="the window to stop moving")

    async def _tree_follows(self, window: WindowInfo, before: frozenset[object]) -> None:
        """Wait (briefly) until the accessibility tree shows the new layout: Chromium's tree
        trails its pixels by a frame or more, and a read right away would show the old one."""

        last: dict[str, frozenset[object]] = {"layout": before}

        async def changed() -> bool:
            now = _layout(await self.snapshot(window, timeout=2.0, fresh=True))
            settled = now != before and now == last["layout"]
            last["layout"] = now
            return settled

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(changed, timeout=1.5, what="the tree to follow the scroll")

    def _scroll_area(self, window: WindowInfo, snap: Snapshot) -> Rect:
        """The largest scrollable-looking area of the window (else the window itself)."""
        best: Rect | None = None
        scrollish = {
            "scroll-pane",
            "document-web",
            "document-text",
            "document-frame",
            "text",
            "list",
            "list-box",
            "table",
            "tree",
            "tree-table",
            "viewport",
            "canvas",
        }
        for node in snap.nodes():
            b = node.bounds
            if (
                node.role in scrollish
                and b is not None
                and not b.empty
                and window.geometry.intersects(b)
                and (best is None or b.width * b.height > best.width * best.height)
            ):
                best = b
        return best or window.geometry

    # -- pixels ----------------------------------------------------------------------------

    async def screen_size(self) -> tuple[int, int]:
        return self.x.screen_size()

    async def capture(self, window: WindowInfo | None = None) -> bytes:
        return png_bytes(await self.capture_image(window))

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        if window is None:
            import mss

            with mss.MSS(display=self.settings.display) as grabber:
                shot = grabber.grab(grabber.monitors[0])
                return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
        current = self.x.window(window.xid)
        if current is None:
            raise DesktopError(f"window {window.stable_id} has closed")
        if current.hidden:
            raise ActionFailed(
                f"window {window.stable_id} is minimized or hidden: it cannot be captured. "
                "Restore it (or choose another window) and try again."
            )
        w, h, data = self.x.capture_window(window.xid)
        return Image.frombytes("RGB", (w, h), data, "raw", "BGRX")

    async def pointer_click(
        self,
        x: int,
        y: int,
        *,
        button: MouseButton = "left",
        count: int = 1,
        modifiers: Sequence[str] = (),
    ) -> None:
        self._last_input = time.monotonic()
        syms = [self.x.keysym(m) for m in modifiers]
        with self.x.held(syms):
            self.x.click(x, y, button, count)

    async def pointer_move(self, x: int, y: int) -> None:
        self.x.move(x, y)

    async def pointer_button(self, button: MouseButton, down: bool) -> None:
        self._last_input = time.monotonic()
        self.x.button(button, down)

    async def pointer_position(self) -> tuple[int, int]:
        return self.x.pointer()

    async def pointer_drag(
        self, path: Sequence[tuple[int, int]], *, modifiers: Sequence[str] = ()
    ) -> None:
        self._last_input = time.monotonic()
        if len(path) < 2:
            raise ActionFailed("a drag needs at least two points")
        syms = [self.x.keysym(m) for m in modifiers]
        with self.x.held(syms):
            self.x.move(*path[0])
            self.x.button("left", True)
            for px, py in path[1:]:
                await asyncio.sleep(0.02)
                self.x.move(px, py)
            await asyncio.sleep(0.02)
            self.x.button("left", False)

    async def wheel(
        self, x: int, y: int, dx: int, dy: int, *, modifiers: Sequence[str] = ()
    ) -> None:
        self._last_input = time.monotonic()
        syms = [self.x.keysym(m) for m in modifiers]
        self.x.move(x, y)
        with self.x.held(syms):
            if dy:
                self.x.wheel("down" if dy > 0 else "up", abs(dy))
            if dx:
                self.x.wheel("right" if dx > 0 else "left", abs(dx))

    async def key_event(self, keysym_names: Sequence[str], down: bool) -> None:
        self._last_input = time.monotonic()
        self.x.key_event([self.x.keysym(k) for k in keysym_names], down)

    async def type_raw(self, text: str) -> None:
        self._last_input = time.monotonic()
        self.x.type_text(text)

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        active = self.x.active_xid()
        catalogue = await self.apps()
        for xid in reversed(self.x.client_ids(stacking=True)):
            w = self.x.window(xid)
            if w is not None and not w.hidden and w.geometry.contains(x, y):
                return self._info(w, active, catalogue)
        return None

    async def element_at(self, x: int, y: int) -> LiveElement | None:
        window = await self.window_at(x, y)
        if window is None:
            return None
        return await self.a11y.element_at(window, x, y)

    # -- helpers for tests and tools -------------------------------------------------------

    async def minimize(self, window: WindowInfo) -> None:
        self.x.request_minimize(window.xid)

        async def hidden() -> bool:
            w = self.x.window(window.xid)
            return w is not None and w.hidden

        await async_wait_for(hidden, timeout=2.0, what="the window to minimize")

    async def close_window(self, window: WindowInfo) -> None:
        self.x.request_close(window.xid)


def _layout(snap: Snapshot) -> frozenset[object]:
    """What is where in a read: the keys and bounds of its nodes."""
    return frozenset((n.key, n.bounds) for n in snap.nodes())


class _Outcome:
    def __init__(self) -> None:
        self.activated = False
        self.restored: str | None = None

    def done(self, detail: str) -> ActionOutcome:
        return ActionOutcome("input", detail, activated=self.activated, restored=self.restored)
