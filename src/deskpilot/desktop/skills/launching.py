"""Launching: starting apps and browser windows, and waiting until they can be read.

An app is started by the launcher (:mod:`deskpilot.desktop.ports.launching`: in its own
session, with the environment apps get). A launch waits for the app's new window (also when a
single-instance app hands the launch to its running instance, or when a first window is
replaced by the document's) and for its accessible tree to settle.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import AppEntry, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import WindowHandle, is_new
from deskpilot.desktop.ports.launching import Spawned
from deskpilot.desktop.skills.reading import Reading, content_digest
from deskpilot.desktop.toolkits import refused_root
from deskpilot.errors import DeskpilotError, DesktopError

if TYPE_CHECKING:
    from deskpilot.pages.launch import LaunchRules

#: How long a launched process may be gone, having failed, before the launch says so (a
#: launcher that failed may still have left a child that shows the window).
EXITED_GRACE_S = 2.0
#: How long a browser document must stay idle with nothing in it to count as loaded (an
#: about:blank page never gets content; a real page gets it well within this) — or with
#: content that changes from one read to the next (a page that never stops moving).
EMPTY_PAGE_S = 1.5


_log = logging.getLogger(__name__)


class Launching:
    """Starting apps and URLs on the desktop."""

    def __init__(self, ports: Ports, reading: Reading) -> None:
        self.settings = ports.settings
        self.windows = ports.windows
        self.a11y = ports.a11y
        self.launcher = ports.launcher
        self.reading = reading

    async def list_windows(self) -> list[WindowInfo]:
        """The windows there are (the launcher forgets the apps that exited meanwhile)."""
        self.launcher.reap()
        return await self.windows.list_windows()

    async def _wait_new_window(
        self,
        before: dict[WindowHandle, int],
        proc: Spawned,
        app: AppEntry | None,
        timeout: float,
        *,
        handoff: bool = True,
    ) -> WindowInfo:
        """The app's new window. With ``handoff``, a launcher that exits at once (a
        single-instance app passing the launch to its running instance) may mean the running
        instance's window is the answer; without it, only a new window is."""
        names = set()
        if app is not None:
            names = {n.casefold() for n in (app.wm_class, app.executable, app.app_id) if n}

        exited: list[float] = []  # when the started process was first seen gone, failed

        async def check() -> WindowInfo | None:
            handles = await self.windows.handles()
            new = [h for h, pid in handles.items() if is_new(before, h, pid)]
            if not new:
                code = proc.poll()
                if code not in (None, 0):
                    # failed before any window (an app that refuses to run as root, a bad
                    # option, a missing library): said at once, not after the whole wait
                    exited[:1] = exited[:1] or [time.monotonic()]
                    if time.monotonic() - exited[0] >= EXITED_GRACE_S:
                        raise DesktopError(self._exited(app, proc, code))
                if handoff and proc.poll() == 0 and app is not None:
                    # a single-instance app (GApplication) handed the launch to its running
                    # instance and exited: that instance's window is the app's window
                    return next(
                        (w for w in await self.list_windows() if w.app.app_id == app.app_id),
                        None,
                    )
                return None
            family = self.launcher.family([proc.pid])
            windows = await self.list_windows()
            for w in windows:
                if w.handle not in new or not w.title:
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
                f"{timeout:.0f}s{why}; see {self.launcher.logs}"
            ) from exc

    async def readable(self, window: WindowInfo, proc: Spawned, app: AppEntry) -> None:
        """Fail at once when the app's window is up but its controls can never be read (a
        toolkit without accessibility, a bridge that did not load), rather than waiting out
        the launch for a tree that never comes; the window stays open (screenshots show it)."""
        pids = [window.pid] if window.pid else sorted(self.launcher.family([proc.pid]))
        why = await self.a11y.unreadable(pids)
        if why is not None:
            raise DesktopError(
                f'{app.name} opened its window "{window.title}" (windowID {window.stable_id}) '
                f"but its controls cannot be read: {why}"
            )

    def _exited(self, app: AppEntry | None, proc: Spawned, code: int | None) -> str:
        """What to say of a launch whose process failed before showing a window: its exit
        status and the last lines of its output."""
        argv = proc.args if isinstance(proc.args, list | tuple) else [str(proc.args)]
        log = self.launcher.logs / f"{Path(str(argv[0])).name}.log"
        try:
            lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines()]
        except OSError:
            lines = []
        said = " | ".join([ln for ln in lines if ln][-5:])
        name = app.name if app is not None else str(argv[0])
        text = f"{name} exited with code {code} before showing a window"
        return text + (f"; it said: {said[-400:]}" if said else "") + f" (log: {log})"

    async def wait_tree_ready(self, window: WindowInfo, timeout: float = 20.0) -> None:
        """Wait until the window's accessible tree is there and two reads agree on its size
        (and the window on its title: LibreOffice retitles its frame once the document is in)."""
        last: dict[str, object] = {"count": -1, "title": None}

        async def check() -> bool:
            # the window as it is now (LibreOffice retitles its first frame "LibreOffice 7.4"
            # once the document is in: its frame is found by the new title)
            now = await self.windows.window(window.handle)
            if now is None:
                return False
            # a read like any other (one window, bounded; warm after the first, from events),
            # with time for a cold live read of a big window on a loaded machine
            read = await self.a11y.read_window(now, timeout=min(20.0, max(5.0, timeout / 3)))
            count = len(read.root.walk()) if read.root is not None and not read.partial else -1
            title = now.title
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
        before = await self.windows.handles()
        previous = await self.windows.active_handle()
        argv = self.launcher.argv_for(app)
        proc = self.launcher.spawn(argv)
        deadline = time.monotonic() + timeout
        try:
            window = await self._wait_new_window(before, proc, app, timeout)
        except DesktopError as exc:
            # an app that refuses root (VLC): again as the desktop's unprivileged user
            if (
                not refused_root(str(exc))
                or (again := self.launcher.spawn_unprivileged(argv)) is None
            ):
                raise
            proc = again
            try:
                window = await self._wait_new_window(
                    before, proc, app, max(5.0, deadline - time.monotonic())
                )
            except DesktopError as second:
                raise DesktopError(
                    f"{exc}; started again as the sandbox's unprivileged user, it failed too: "
                    f"{second}"
                ) from second
        await self.readable(window, proc, app)
        window = await self._ready_window(window, before, app, deadline)
        while (current := await self.windows.window(window.handle)) is None:
            # a first window that went away once ready (LibreOffice may open its frame, then
            # replace it with the document's): wait for the one that replaced it
            before[window.handle] = window.pid
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DesktopError(
                    f"{app.name}'s window closed as soon as it was ready; see {self.launcher.logs}"
                )
            window = await self._wait_new_window(before, proc, app, remaining)
            await self.wait_tree_ready(window, remaining)
        window = current
        if restore_focus and previous is not None and previous in await self.windows.handles():
            prev = await self.windows.window(previous)
            if (
                prev is not None
                and not prev.hidden
                and await self.windows.active_handle() != previous
            ):
                # waited for: a restore still under way when the caller acts on the new
                # window would take the keyboard from it
                await self.windows.activate(prev)
        return (await self.windows.window(window.handle)) or window

    async def _ready_window(
        self, window: WindowInfo, before: dict[WindowHandle, int], app: AppEntry, deadline: float
    ) -> WindowInfo:
        """``window`` once its tree is ready — or, when it never gets an accessible frame (a
        splash screen) while the app opened another window, that one."""
        try:
            await self.wait_tree_ready(window, min(15.0, max(1.0, deadline - time.monotonic())))
            return window
        except DesktopError:
            names = {n.casefold() for n in (app.wm_class, app.executable, app.app_id) if n}
            others = [
                w
                for w in await self.list_windows()
                if w.handle != window.handle
                and is_new(before, w.handle, w.pid)
                and w.title
                and (w.pid == window.pid or bool(names & w.app.match_keys()))
            ]
            if not others:
                if time.monotonic() >= deadline:
                    raise
                await self.wait_tree_ready(window, max(1.0, deadline - time.monotonic()))
                return window
        # the biggest: the app's main window rather than a dialog in front of it
        other = max(others, key=lambda w: w.geometry.width * w.geometry.height)
        await self.wait_tree_ready(other, max(5.0, deadline - time.monotonic()))
        return other

    def agent_browser_profile(self) -> Path:
        from deskpilot.pages.store import agent_profile

        return agent_profile(self.settings)

    def agent_browser_rules(self) -> LaunchRules:
        """The page side of a start: the page-rules extension, written fresh from the library
        (rules then apply with no deskpilot process running)."""
        from deskpilot.pages.launch import LaunchRules, launch_rules

        try:
            return launch_rules(self.settings)
        except DeskpilotError as exc:  # a broken library must not stop the browser
            _log.warning("page rules not loaded into the agent browser: %s", exc)
            return LaunchRules([], 0)

    async def open_urls(
        self, urls: Sequence[str], *, browser: str = "agent", timeout: float = 30.0
    ) -> WindowInfo:
        before = await self.windows.handles()
        if browser == "default":
            procs = [self.launcher.spawn(["xdg-open", u]) for u in urls]
            window = await self._wait_new_window(before, procs[0], None, timeout)
            return window
        chromium = self.launcher.agent_browser()
        if chromium is None:
            raise DesktopError(
                "the agent browser (Debian's chromium) is not installed: apt install chromium, "
                'or set browser = "default" in the config to use the system browser'
            )
        from deskpilot.pages.launch import ensure_first_pages_ruled, running

        profile = self.agent_browser_profile()
        profile.mkdir(parents=True, exist_ok=True)
        rules = self.agent_browser_rules()
        # only a browser this process starts can load its first pages before the rules
        starts = rules.rules > 0 and not await running(self.settings)
        argv = [
            chromium,
            *self.launcher.browser_flags(),
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            *rules.flags,
            "--new-window",
            *urls,
        ]
        entry = next((a for a in await self.launcher.apps() if a.executable == "chromium"), None)
        proc = self.launcher.spawn(argv)
        # a running agent browser takes the URLs from this process and opens a new window
        # (--new-window): wait for that window, never settle for one that was there before
        window = await self._wait_new_window(before, proc, entry, timeout, handoff=False)
        await self.wait_tree_ready(window, timeout)
        await self.wait_page_loaded(window, timeout)
        if starts and await ensure_first_pages_ruled(self.settings, timeout):
            await self.wait_page_loaded(window, timeout)
        return (await self.windows.window(window.handle)) or window

    async def wait_page_loaded(self, window: WindowInfo, timeout: float = 15.0) -> bool:
        """Wait until the browser window shows a loaded web document (not busy, has content)."""

        empty_since: list[float] = []  # when an idle document with nothing in it was first seen
        full_since: list[float] = []  # when an idle document with content was first seen
        last: list[int] = []  # the content of the last read

        async def loaded() -> bool:
            # full reads: Chromium's tree can lag its paint by more than PIXEL_SETTLE_S on a
            # busy machine, and it does not always announce that its document now shows
            snap = await self.reading.snapshot(window, timeout=2.0, fresh=True)
            agreed, last[:] = last == [content_digest(snap)], [content_digest(snap)]
            idle = [n for n in snap.nodes() if n.role == "document-web" and "busy" not in n.states]
            if any(n.children for n in idle):
                # its content is there once two full reads in a row agree (a page that keeps
                # changing: after EMPTY_PAGE_S); with its pixels the same too, the cache, kept
                # current by events, serves the next reads (no full reads for PIXEL_SETTLE_S)
                if agreed:
                    self.reading.pixels.caught_up(window)
                    return True
                full_since[:1] = full_since[:1] or [time.monotonic()]
                return time.monotonic() - full_since[0] >= EMPTY_PAGE_S
            if not idle:
                empty_since.clear()
                return False
            # an empty page (about:blank) never gets children: idle and empty for a while is
            # loaded too, rather than the whole timeout
            empty_since[:1] = empty_since[:1] or [time.monotonic()]
            return time.monotonic() - empty_since[0] >= EMPTY_PAGE_S

        try:
            await async_wait_for(loaded, timeout=timeout, what="the page to load", interval=0.1)
        except WaitTimeout:
            return False
        return True
