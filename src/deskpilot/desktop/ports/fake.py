"""An in-memory desktop behind all five ports, for unit tests of the skills and the facade.

:class:`~deskpilot.desktop.ports.fake_world.FakeWorld` holds the windows of the fake apps of
:mod:`deskpilot.desktop.fake_apps` (a working calculator, a text editor, a password manager),
the active window, the pointer and the keyboard focus, and logs every effect in ``log``. Each
port is a thin view of it —
:class:`FakeWindows`, :class:`FakeInput`, :class:`FakeCapture`, :class:`FakeLauncher` and
:class:`~deskpilot.desktop.ports.fake_accessibility.FakeAccessibility` (the trees and elements,
a module of its own) — and :func:`fake_ports` bundles them. Launching one of the fake apps'
commands opens its window; input goes to the active window (a calculator presses its buttons,
an editor takes the text); a pointer click on a button presses it.

Not a substitute for desktop tests: real apps are tested on a sandbox desktop. The
whole-Desktop fake for the tools' own tests is :class:`~deskpilot.desktop.fake.FakeDesktop`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskpilot.config import Settings
from deskpilot.desktop.base import (
    AppEntry,
    MouseButton,
    Rect,
    WindowInfo,
)
from deskpilot.desktop.fake_apps import FAKE_APPS, FakeWindow
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.capture import Region
from deskpilot.desktop.ports.fake_accessibility import FakeAccessibility
from deskpilot.desktop.ports.fake_world import FakeWorld
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.desktop.ports.input import WheelDirection, held_by_key_events
from deskpilot.desktop.ports.keys import check_keys
from deskpilot.errors import ActionFailed, DesktopError

if TYPE_CHECKING:
    from PIL import Image

#: The fake browser's command (``browser = "default"`` opens URLs with it).
BROWSER = AppEntry("org.example.Browser", "Browser", "Web Browser", ("xdg-open",), "xdg-open")
_CALC_KEYS = {"*": "×", "/": "÷", "-": "−"}


class FakeWindows:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    async def list_windows(self) -> list[WindowInfo]:
        return [self.world.info(w) for w in self.world.windows]

    async def handles(self) -> dict[WindowHandle, int]:
        return {w.info.handle: w.info.pid for w in self.world.windows}

    async def active_handle(self) -> WindowHandle | None:
        return self.world.active

    async def active_window(self) -> WindowInfo | None:
        w = self.world.of(self.world.active) if self.world.active is not None else None
        return None if w is None else self.world.info(w)

    async def window(self, handle: WindowHandle) -> WindowInfo | None:
        w = self.world.of(handle)
        return None if w is None else self.world.info(w)

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        for w in reversed(self.world.windows):
            if not w.info.hidden and w.info.geometry.contains(x, y):
                return self.world.info(w)
        return None

    async def request_activate(self, handle: WindowHandle) -> None:
        w = self.world.of(handle)
        if w is not None:
            w.info = _shown(w.info)
            self.world.windows.remove(w)
            self.world.windows.append(w)  # raised: on top
            self.world.active = handle
            self.world.log.append(f"activate {handle}")

    async def activate(self, window: WindowInfo) -> bool:
        await self.request_activate(window.handle)
        return self.world.active == window.handle

    async def minimize(self, window: WindowInfo) -> None:
        w = self.world.of(window.handle)
        if w is not None:
            w.info = WindowInfo(**{**w.info.__dict__, "hidden": True})

    async def close_window(self, window: WindowInfo) -> None:
        self.world.windows = [w for w in self.world.windows if w.info.handle != window.handle]
        if self.world.active == window.handle:
            last = self.world.windows[-1].info.handle if self.world.windows else None
            self.world.active = last
        self.world.log.append(f"close {window.handle}")

    async def popups(self, window: WindowInfo) -> list[Rect]:
        return []

    async def screen_size(self) -> tuple[int, int]:
        return (self.world.width, self.world.height)

    def lost(self) -> str | None:
        return None

    async def close(self) -> None:
        self.world.log.append("windows closed")


def _shown(info: WindowInfo) -> WindowInfo:
    return WindowInfo(**{**info.__dict__, "hidden": False})


class FakeInput:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def _target(self) -> FakeWindow | None:
        return self.world.of(self.world.active) if self.world.active is not None else None

    async def key_event(self, names: Sequence[str], down: bool) -> None:
        check_keys(names)
        self.world.log.append(f"key_{'down' if down else 'up'} {'+'.join(names)}")

    async def press_combo(self, names: Sequence[str]) -> None:
        check_keys(names)
        self.world.log.append("keys " + "+".join(names))
        w = self._target()
        if w is not None and w.kind == "calculator" and list(names) == ["Return"]:
            self.world.press(w, "=")
        elif w is not None and list(names) == ["Control_L", "a"]:
            self.world.held = ["selected"]
        elif w is not None and list(names) == ["BackSpace"] and self.world.held == ["selected"]:
            w.display, self.world.held = "", []

    async def type_text(self, text: str) -> None:
        self.world.log.append(f"type {text!r}")
        w = self._target()
        if w is None:
            return
        for ch in text:
            if w.kind == "calculator":
                self.world.press(w, "=" if ch == "\n" else _CALC_KEYS.get(ch, ch))
            else:
                w.display += ch

    def held(self, names: Sequence[str]) -> AbstractAsyncContextManager[None]:
        return held_by_key_events(self, names)

    async def move(self, x: int, y: int) -> None:
        self.world.pointer = (x, y)

    async def button(self, button: MouseButton, down: bool) -> None:
        self.world.log.append(f"button {button} {'down' if down else 'up'}")
        hit = self.world.hit(*self.world.pointer)
        if down or hit is None:
            return
        w, node = hit
        self.world.active = w.info.handle
        if button == "left" and node.role == "push-button":
            self.world.press(w, node.name)
        elif button == "left" and "editable" in node.states:
            self.world.focus = node.key

    async def wheel(self, direction: WheelDirection, notches: int) -> None:
        self.world.log.append(f"wheel {direction} {notches}")
        w = self._target()
        if w is not None:
            delta = notches if direction in ("down", "right") else -notches
            w.scroll = max(0, w.scroll + delta)

    async def pointer(self) -> tuple[int, int]:
        return self.world.pointer

    async def close(self) -> None:
        pass


class FakeCapture:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        from PIL import Image, ImageDraw

        origin = (0, 0)
        size = (self.world.width, self.world.height)
        shown = self.world.windows
        if window is not None:
            w = self.world.of(window.handle)
            if w is None:
                raise DesktopError(f"window {window.stable_id} has closed")
            if w.info.hidden:
                raise ActionFailed(f"window {window.stable_id} is minimized or hidden")
            g = w.info.geometry
            origin, size, shown = (g.x, g.y), (g.width, g.height), [w]
        img = Image.new("RGB", size, "white")
        draw = ImageDraw.Draw(img)
        for w in shown:
            for node in w.root.walk():
                if node.bounds is not None and node.role == "push-button":
                    b = node.bounds.offset(-origin[0], -origin[1])
                    draw.rectangle([b.x, b.y, b.x + b.width, b.y + b.height], outline="black")
            for node in w.root.walk():
                if node.bounds is not None and node.role == "text":
                    b = node.bounds.offset(-origin[0] + 4, -origin[1] + 4)
                    draw.text((b.x, b.y), w.display, fill="black")
                    y = b.y + (w.scroll * 3) % max(1, b.height - 8)  # where the content is
                    draw.line([b.x + b.width - 30, y, b.x + b.width - 10, y], fill="black")
        return img

    def checksum(self, region: Region | None) -> int | None:
        if region is None:
            return None
        state = [(w.info.handle, w.display, w.scroll) for w in self.world.windows]
        return zlib.crc32(repr((region, state)).encode())

    async def close(self) -> None:
        pass


@dataclass
class FakeProcess:
    pid: int
    args: Any
    returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode


class FakeLauncher:
    """Starts the fake apps: a command that is one of FAKE_APPS' (or ``xdg-open URL``) opens
    its window at once; anything else is refused as not installed."""

    def __init__(self, world: FakeWorld, logs: Path = Path("/nonexistent/logs")) -> None:
        self.world = world
        self._logs = logs

    @property
    def logs(self) -> Path:
        return self._logs

    async def apps(self) -> list[AppEntry]:
        return list(FAKE_APPS)

    def argv_for(self, app: AppEntry) -> list[str]:
        return list(app.exec_argv)

    def spawn(self, argv: Sequence[str]) -> FakeProcess:
        pid = next(self.world._pids)
        self.world.launched.append(pid)
        self.world.log.append("spawn " + " ".join(argv))
        if argv[0] == BROWSER.executable:
            self.world.open(BROWSER, title=argv[-1], pid=pid)
            return FakeProcess(pid, list(argv))
        app = next((a for a in FAKE_APPS if a.exec_argv[:1] == tuple(argv[:1])), None)
        if app is None:
            raise DesktopError(f"cannot start {argv[0]}: No such file or directory")
        document = argv[1] if len(argv) > 1 else None
        title = f"{document.rsplit('/', 1)[-1]} - {app.name}" if document else None
        self.world.open(app, title=title, pid=pid)
        return FakeProcess(pid, list(argv))

    def spawn_unprivileged(self, argv: Sequence[str]) -> FakeProcess | None:
        return None

    def launched_pids(self) -> list[int]:
        return list(self.world.launched)

    def reap(self) -> None:
        pass

    def family(self, pids: Iterable[int]) -> set[int]:
        return set(pids)

    def agent_browser(self) -> str | None:
        return None

    def browser_flags(self) -> list[str]:
        return []

    async def close(self) -> None:
        pass


def fake_ports(settings: Settings, world: FakeWorld | None = None, name: str = "fake") -> Ports:
    """The five fake ports over one world (a new one unless given)."""
    world = world if world is not None else FakeWorld()
    return Ports(
        backend=name,
        settings=settings,
        windows=FakeWindows(world),
        input=FakeInput(world),
        capture=FakeCapture(world),
        a11y=FakeAccessibility(world),
        launcher=FakeLauncher(world, settings.state_dir / "logs"),
        late_windows=False,  # the world changes as it is acted on
    )
