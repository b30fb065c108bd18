"""The state of the in-memory fake desktop (:mod:`.fake`), shared by its ports.

The windows of the fake apps of :mod:`deskpilot.desktop.fake_apps` (a working calculator, a text
editor, a password manager), which one is active, the pointer and the keyboard focus, and a log
of every effect.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from deskpilot.desktop.base import AppEntry, AppIdentity, Node, Rect, WindowInfo
from deskpilot.desktop.fake_apps import FakeWindow, WindowBuilder, press
from deskpilot.desktop.ports.identity import ElementKey, WindowHandle
from deskpilot.errors import ElementCallFailed


@dataclass
class FakeWorld:
    """The fake desktop's state, shared by its ports."""

    width: int = 1280
    height: int = 800
    windows: list[FakeWindow] = field(default_factory=list)
    active: WindowHandle | None = None
    pointer: tuple[int, int] = (0, 0)
    focus: ElementKey | None = None
    held: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    launched: list[int] = field(default_factory=list)
    _handles: itertools.count[int] = field(default_factory=lambda: itertools.count(0x600001))
    _pids: itertools.count[int] = field(default_factory=lambda: itertools.count(5000))
    _buses: itertools.count[int] = field(default_factory=lambda: itertools.count(20))
    _builder: WindowBuilder = field(default_factory=WindowBuilder)

    def open(self, app: AppEntry, title: str | None = None, pid: int | None = None) -> WindowInfo:
        """Open a window of ``app`` (one of FAKE_APPS, or any other: an empty frame) and make
        it active."""
        handle, pid = next(self._handles), pid or next(self._pids)
        geo = Rect(100 + 40 * len(self.windows), 100, 400, 500)
        ident = AppIdentity(app.name, app.app_id, (app.executable, app.name), app.executable)
        info = WindowInfo(handle, pid, title or app.name, ident, geo)
        self.windows.append(self._builder.build(app, info, f":1.{next(self._buses)}"))
        self.active = handle
        self.log.append(f"open {app.app_id} {handle}")
        return self.info(self.windows[-1])

    def info(self, w: FakeWindow) -> WindowInfo:
        i = w.info
        return WindowInfo(
            i.handle, i.pid, i.title, i.app, i.geometry, i.handle == self.active, i.hidden
        )

    def of(self, handle: WindowHandle) -> FakeWindow | None:
        return next((w for w in self.windows if w.info.handle == handle), None)

    def find(self, key: ElementKey) -> tuple[FakeWindow, Node] | None:
        for w in self.windows:
            for node in w.root.walk():
                if node.key == key:
                    return w, node
        return None

    def node(self, key: ElementKey) -> Node:
        found = self.find(key)
        if found is None:
            raise ElementCallFailed(f"no element {key[1]} on {key[0]}")
        return found[1]

    def hit(self, x: int, y: int) -> tuple[FakeWindow, Node] | None:
        for w in reversed(self.windows):
            if not w.info.hidden and w.info.geometry.contains(x, y):
                inner = [n for n in w.root.walk() if n.bounds and n.bounds.contains(x, y)]
                return (w, inner[-1]) if inner else None
        return None

    def press(self, w: FakeWindow, label: str) -> None:
        self.log.append(press(w, label))

    def text_of(self, w: FakeWindow, node: Node) -> str | None:
        return w.display if node.role in ("text", "password-text") else None
