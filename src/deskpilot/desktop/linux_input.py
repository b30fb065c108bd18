"""Raw input: keyboard, pointer and wheel through XTest, aimed at a window or at a point.

Input aimed at a window activates it first, one action at a time, and re-activates the window
that was active before (:meth:`LinuxInput._raw_input`); what was done is an
:class:`~deskpilot.desktop.base.ActionOutcome`. Scrolling waits until the content stops
moving and the accessibility tree shows the new layout.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.atspi import Accessibility
from deskpilot.desktop.base import (
    ActionOutcome,
    MouseButton,
    Rect,
    ScrollDirection,
    Snapshot,
    WindowInfo,
)
from deskpilot.desktop.linux_launch import LinuxLaunching
from deskpilot.desktop.x11 import X11
from deskpilot.errors import ActionFailed, NotAnswering

#: Pause after moving the pointer and between a button's press and release. GTK 4 apps
#: (gnome-calculator) drop clicks whose motion, press and release reach them in one burst:
#: on a loaded 2-core sandbox (load ~14), 1 to 4 of 6 four-click sequences lost a click with
#: no pause, some still with 30 ms, none of 24 with 50 ms. A person's click takes ~100 ms.
CLICK_GAP_S = 0.05


class LinuxInput(LinuxLaunching):
    """Keyboard, pointer and wheel input."""

    async def _click(self, x: int, y: int, button: MouseButton = "left", count: int = 1) -> None:
        """Move, then press and release ``count`` times, each event apart (CLICK_GAP_S)."""
        self.x.move(x, y)
        for _ in range(count):
            await asyncio.sleep(CLICK_GAP_S)
            self.x.button(button, True)
            await asyncio.sleep(CLICK_GAP_S)
            self.x.button(button, False)

    def __init__(self, settings: Settings, x11: X11, a11y: Accessibility) -> None:
        super().__init__(settings, x11, a11y)
        self._lock = asyncio.Lock()  # raw input is one thing at a time

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
        if snap.unanswered:  # a frozen app cannot scroll: say so rather than "nothing moved"
            raise NotAnswering(f"{window.app.name} did not answer before scrolling")
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
            await self._click(x, y, button, count)

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


def _layout(snap: Snapshot) -> frozenset[object]:
    """What is where in a read: the keys and bounds of its nodes."""
    return frozenset((n.key, n.bounds) for n in snap.nodes())


class _Outcome:
    def __init__(self) -> None:
        self.activated = False
        self.restored: str | None = None

    def done(self, detail: str) -> ActionOutcome:
        return ActionOutcome("input", detail, activated=self.activated, restored=self.restored)
