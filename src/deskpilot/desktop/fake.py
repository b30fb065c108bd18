"""FakeDesktop: an in-memory :class:`~deskpilot.desktop.base.Desktop` for unit tests.

It ships a tiny working calculator (buttons append to a display, ``=`` evaluates), a text
editor (one editable text area) and a password manager (for blocklist tests): see
:mod:`fake_apps`. Pointer clicks
hit elements by their bounds, so coordinate-level code can be tested too. Everything it was
asked to do is appended to ``FakeDesktop.log``.

Not a substitute for desktop tests: real apps are tested on a sandbox desktop.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from PIL import Image, ImageDraw

from deskpilot.desktop.base import (
    ActionOutcome,
    AppEntry,
    AppIdentity,
    LiveElement,
    MouseButton,
    Node,
    OpenedDocument,
    PointerAction,
    Rect,
    ScrollDirection,
    Snapshot,
    Typed,
    WindowInfo,
)
from deskpilot.desktop.caret import Caret
from deskpilot.desktop.fake_apps import FAKE_APPS, FakeWindow, WindowBuilder, press
from deskpilot.errors import ActionFailed, DesktopError


@dataclass
class FakeDesktop:
    """A scriptable desktop. ``log`` records every effect, in order."""

    width: int = 1280
    height: int = 800
    log: list[str] = field(default_factory=list)
    windows: list[FakeWindow] = field(default_factory=list)
    active_xid: int | None = None
    pointer: tuple[int, int] = (0, 0)
    typed: list[str] = field(default_factory=list)
    focus: tuple[str, str] | None = None  # the element with the keyboard focus
    covers: dict[tuple[str, str], str] = field(default_factory=dict)  # key → what covers it
    late_windows: bool = False  # a window is there as soon as the action opening it returns
    _xids: itertools.count[int] = field(default_factory=lambda: itertools.count(0x400001))
    _builder: WindowBuilder = field(default_factory=WindowBuilder)
    _pids: itertools.count[int] = field(default_factory=lambda: itertools.count(4000))
    _bus: itertools.count[int] = field(default_factory=lambda: itertools.count(10))

    # -- building --------------------------------------------------------------------------
    def add_window(self, app: AppEntry, title: str | None = None) -> WindowInfo:
        """Open a window of one of FAKE_APPS (by entry) and make it active."""
        xid, pid = next(self._xids), next(self._pids)
        bus = f":1.{next(self._bus)}"
        geo = Rect(100 + 40 * len(self.windows), 100, 400, 500)
        ident = AppIdentity(app.name, app.app_id, (app.executable, app.name), app.executable)
        info = WindowInfo(xid, pid, title or app.name, ident, geo)
        self.windows.append(self._builder.build(app, info, bus))
        self.active_xid = xid
        self.log.append(f"open {app.app_id} {xid}")
        return self._info(self.windows[-1])

    def _info(self, w: FakeWindow) -> WindowInfo:
        i = w.info
        return WindowInfo(
            i.handle,
            i.pid,
            i.title,
            i.app,
            i.geometry,
            active=i.handle == self.active_xid,
            hidden=i.hidden,
            desktop=i.desktop,
            placed=i.placed,
        )

    def close_window(self, xid: int) -> None:
        self.windows = [w for w in self.windows if w.info.handle != xid]
        if self.active_xid == xid:
            self.active_xid = self.windows[-1].info.handle if self.windows else None
        self.log.append(f"close {xid}")

    def _window(self, window: WindowInfo) -> FakeWindow:
        for w in self.windows:
            if w.info.handle == window.handle:
                return w
        raise DesktopError(f"window {window.stable_id} has closed")

    def _find(self, key: tuple[str, str]) -> tuple[FakeWindow, Node] | None:
        for w in self.windows:
            for node in w.root.walk():
                if node.key == key:
                    return w, node
        return None

    def display_text(self, xid: int) -> str:
        return next(w.display for w in self.windows if w.info.handle == xid)

    # -- Desktop ---------------------------------------------------------------------------

    async def list_windows(self) -> list[WindowInfo]:
        return [self._info(w) for w in self.windows]

    async def active_window(self) -> WindowInfo | None:
        return next((self._info(w) for w in self.windows if w.info.handle == self.active_xid), None)

    async def activate(self, window: WindowInfo) -> bool:
        self._window(window)
        self.active_xid = window.handle
        self.log.append(f"activate {window.handle}")
        return True

    async def apps(self) -> list[AppEntry]:
        return list(FAKE_APPS)

    async def launch(self, app: AppEntry, *, timeout: float = 30.0) -> WindowInfo:
        return self.add_window(app)

    async def open_document(
        self, app: AppEntry, document: str, *, timeout: float = 60.0
    ) -> OpenedDocument:
        name = document.rstrip("/").rsplit("/", 1)[-1]
        return OpenedDocument(self.add_window(app, title=f"{name} - {app.name}"))

    async def open_urls(
        self, urls: Sequence[str], *, browser: str = "agent", timeout: float = 30.0
    ) -> WindowInfo:
        self.log.append(f"open_urls {' '.join(urls)}")
        app = AppEntry("chromium", "Chromium", "Web Browser", ("chromium",), "chromium")
        return self.add_window(app, title=urls[0])

    async def snapshot(
        self,
        window: WindowInfo,
        *,
        timeout: float = 5.0,
        fresh: bool = False,
        whole: tuple[str, str] | None = None,
    ) -> Snapshot:
        w = self._window(window)
        for node in w.root.walk():
            if node.role == "text":
                node.text = w.display
        return Snapshot(window=self._info(w), root=w.root)

    async def inspect(self, key: tuple[str, str]) -> LiveElement | None:
        found = self._find(key)
        if found is None:
            return None
        w, node = found
        return LiveElement(
            key, w.info.pid, node.role, node.name, node.parent_key, node.states, node.bounds
        )

    def _press(self, w: FakeWindow, label: str) -> None:
        self.log.append(press(w, label))

    async def click_element(self, window: WindowInfo, key: tuple[str, str]) -> ActionOutcome:
        found = self._find(key)
        if found is None:
            raise ActionFailed("element vanished")
        w, node = found
        self._press(w, node.name)
        return ActionOutcome("atspi", "AT-SPI action 'click'")

    async def fill_element(
        self, window: WindowInfo, key: tuple[str, str], text: str
    ) -> ActionOutcome:
        found = self._find(key)
        if found is None or (not found[1].editable and found[1].role != "text"):
            raise ActionFailed("element is not editable")
        found[0].display = text
        self.log.append(f"fill {text!r}")
        return ActionOutcome("atspi", "EditableText.SetTextContents")

    async def focus_element(self, window: WindowInfo, key: tuple[str, str]) -> bool:
        self.log.append(f"focus {key[1]}")
        if self._find(key) is None:
            return False
        self.focus = key
        return True

    async def settle(self, window: WindowInfo, since: float) -> bool:
        return True

    def events_seen(self) -> int:
        return len(self.log)

    async def focused_element(self, window: WindowInfo) -> tuple[str, str] | None:
        return self.focus

    async def covering(self, window: WindowInfo, key: tuple[str, str]) -> str | None:
        return self.covers.get(key)

    async def select_text(
        self,
        window: WindowInfo,
        key: tuple[str, str],
        *,
        text: str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> Caret:
        raise ActionFailed("the fake apps' texts cannot be selected")

    async def text_caret(self, key: tuple[str, str]) -> Caret | None:
        return None  # the fake apps' fields have no caret

    async def cell_at(self, key: tuple[str, str], row: int, col: int) -> tuple[str, str] | None:
        return None  # the fake apps have no tables

    async def read_cells(
        self,
        window: WindowInfo,
        key: tuple[str, str],
        first: tuple[int, int],
        last: tuple[int, int],
    ) -> tuple[Node | None, list[str]]:
        return None, ["the fake desktop has no tables"]

    async def read_text(self, key: tuple[str, str]) -> str | None:
        found = self._find(key)
        return None if found is None else found[0].display

    async def _focus_for_input(self, window: WindowInfo) -> tuple[bool, str | None]:
        previous = self.active_xid
        self._window(window)
        activated = previous != window.handle
        self.active_xid = window.handle
        return activated, (None if previous is None or not activated else str(previous))

    def _raise(self, window: WindowInfo) -> None:
        """Put ``window`` over the others (a pointer action makes sure its point shows it)."""
        w = self._window(window)
        self.windows = [o for o in self.windows if o is not w] + [w]

    async def _restore(self, previous: str | None) -> str | None:
        if previous is None:
            return None
        self.active_xid = int(previous)
        w = next((w for w in self.windows if w.info.handle == int(previous)), None)
        return w.info.stable_id if w else None

    async def type_text(self, window: WindowInfo, text: str) -> ActionOutcome:
        activated, previous = await self._focus_for_input(window)
        await self.type_raw(text)
        restored = await self._restore(previous)
        return ActionOutcome("input", f"typed {len(text)} characters", activated, restored)

    async def type_into(self, window: WindowInfo, key: tuple[str, str], text: str) -> Typed:
        return Typed(await self.type_text(window, text), len(text))

    async def press_keys(self, window: WindowInfo, keys: Sequence[str]) -> ActionOutcome:
        activated, previous = await self._focus_for_input(window)
        w = self._window(window)
        self.log.append("keys " + "+".join(keys))
        if w.kind == "calculator" and list(keys) == ["Return"]:
            self._press(w, "=")
        restored = await self._restore(previous)
        return ActionOutcome("input", "pressed " + "+".join(keys), activated, restored)

    async def scroll(
        self,
        window: WindowInfo,
        direction: ScrollDirection,
        steps: int,
        key: tuple[str, str] | None = None,
    ) -> tuple[ActionOutcome, bool]:
        w = self._window(window)
        before = w.scroll
        delta = steps if direction in ("down", "right") else -steps
        w.scroll = max(0, w.scroll + delta)
        self.log.append(f"scroll {direction} {steps}" + (f" {key[1]}" if key else ""))
        return ActionOutcome("input", f"{steps} wheel steps {direction}"), w.scroll != before

    async def element_point(self, window: WindowInfo, key: tuple[str, str]) -> tuple[int, int]:
        found = self._find(key)
        if found is None or found[1].bounds is None:
            raise ActionFailed("the element has no on-screen position to point at")
        return found[1].bounds.center

    async def point_at(
        self, window: WindowInfo, x: int, y: int, action: PointerAction = "click"
    ) -> ActionOutcome:
        activated, previous = await self._focus_for_input(window)
        self._raise(window)  # as the real one: the point must show the window (on_top)
        self.pointer = (x, y)
        self.log.append(f"{action} {x},{y}")
        hit = self._hit(x, y)
        if hit is not None and action in ("click", "double_click") and hit[1].role == "push-button":
            for _ in range(2 if action == "double_click" else 1):
                self._press(hit[0], hit[1].name)
        restored = await self._restore(previous)
        return ActionOutcome("input", f"{action} at ({x}, {y})", activated, restored)

    async def drag_in(
        self, window: WindowInfo, start: tuple[int, int], end: tuple[int, int]
    ) -> ActionOutcome:
        activated, previous = await self._focus_for_input(window)
        self.pointer = end
        self.log.append(f"drag {start[0]},{start[1]} {end[0]},{end[1]}")
        restored = await self._restore(previous)
        return ActionOutcome("input", f"dragged to {end}", activated, restored)

    async def screen_size(self) -> tuple[int, int]:
        return (self.width, self.height)

    async def capture(self, window: WindowInfo | None = None) -> bytes:
        if window is not None:
            w = self._window(window)
            if w.info.hidden:
                raise ActionFailed(f"window {window.stable_id} is minimized or hidden")
            size = (w.info.geometry.width, w.info.geometry.height)
        else:
            size = (self.width, self.height)
        img = Image.new("RGB", size, "white")
        draw = ImageDraw.Draw(img)
        for fw in self.windows:
            if window is None or fw.info.handle == window.handle:
                ox, oy = (0, 0) if window is None else (-fw.info.geometry.x, -fw.info.geometry.y)
                for node in fw.root.walk():
                    if node.bounds is not None and node.role == "push-button":
                        b = node.bounds.offset(ox, oy)
                        draw.rectangle([b.x, b.y, b.x + b.width, b.y + b.height], outline="black")
        buf = io.BytesIO()
        img.save(buf, format="PNG", compress_level=1)  # as the real desktop encodes (pixels.py)
        return buf.getvalue()

    def _hit(
        self, x: int, y: int, window: WindowInfo | None = None
    ) -> tuple[FakeWindow, Node] | None:
        """The deepest node at (x, y) of ``window``, else of the window on top there."""
        for w in reversed(self.windows):
            if window is not None and w.info.handle != window.handle:
                continue
            if w.info.geometry.contains(x, y):
                hit: Node | None = None
                for node in w.root.walk():
                    if node.bounds is not None and node.bounds.contains(x, y):
                        hit = node
                return (w, hit) if hit is not None else None
        return None

    async def pointer_click(
        self,
        x: int,
        y: int,
        *,
        button: MouseButton = "left",
        count: int = 1,
        modifiers: Sequence[str] = (),
    ) -> None:
        self.pointer = (x, y)
        self.log.append(
            f"pointer_click {x},{y} {button} x{count}"
            + (f" +{'+'.join(modifiers)}" if modifiers else "")
        )
        hit = self._hit(x, y)
        if hit is not None:
            self.active_xid = hit[0].info.handle
            if button == "left" and hit[1].role == "push-button":
                for _ in range(count):
                    self._press(hit[0], hit[1].name)

    async def pointer_move(self, x: int, y: int) -> None:
        self.pointer = (x, y)
        self.log.append(f"pointer_move {x},{y}")

    async def pointer_button(self, button: MouseButton, down: bool) -> None:
        self.log.append(f"pointer_button {button} {'down' if down else 'up'}")

    async def pointer_position(self) -> tuple[int, int]:
        return self.pointer

    async def pointer_drag(
        self, path: Sequence[tuple[int, int]], *, modifiers: Sequence[str] = ()
    ) -> None:
        self.pointer = path[-1]
        self.log.append("pointer_drag " + " ".join(f"{x},{y}" for x, y in path))

    async def wheel(
        self, x: int, y: int, dx: int, dy: int, *, modifiers: Sequence[str] = ()
    ) -> None:
        self.pointer = (x, y)
        self.log.append(f"wheel {x},{y} dx={dx} dy={dy}")

    async def key_event(self, keysym_names: Sequence[str], down: bool) -> None:
        self.log.append(f"key_{'down' if down else 'up'} {'+'.join(keysym_names)}")

    async def type_raw(self, text: str) -> None:
        self.typed.append(text)
        self.log.append(f"type {text!r}")
        w = next((w for w in self.windows if w.info.handle == self.active_xid), None)
        if w is None:
            return
        for ch in text:
            if w.kind == "calculator" and ch == "\n":
                self._press(w, "=")
            elif w.kind == "calculator":
                self._press(w, {"*": "×", "/": "÷", "-": "−"}.get(ch, ch))
            else:
                w.display += ch

    async def window_at(self, x: int, y: int) -> WindowInfo | None:
        for w in reversed(self.windows):
            if w.info.geometry.contains(x, y):
                return self._info(w)
        return None

    async def element_at(
        self, x: int, y: int, window: WindowInfo | None = None
    ) -> LiveElement | None:
        hit = self._hit(x, y, window)
        if hit is None:
            return None
        w, node = hit
        return LiveElement(
            node.key, w.info.pid, node.role, node.name, node.parent_key, node.states, node.bounds
        )

    async def close(self) -> None:
        self.log.append("close")
