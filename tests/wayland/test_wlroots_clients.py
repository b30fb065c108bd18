"""The wlroots clients against a real headless sway: IPC windows/focus/close, virtual keyboard
and pointer, screencopy. Effects are checked through other channels: an app's exit code and
output, its accessibility tree, the compositor's tree."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from deskpilot._wait import wait_for
from deskpilot.desktop.wayland.sway import SwayIpc, SwayWindow
from deskpilot.desktop.wayland.wlr_capture import ScreenCopy
from deskpilot.desktop.wayland.wlr_input import VirtualInput
from deskpilot.sandbox import Sandbox
from tests.wayland.conftest import require, window_extents

pytestmark = [pytest.mark.sandbox, pytest.mark.app]


@pytest.fixture(scope="module")
def sway() -> Iterator[Sandbox]:
    require("sway")
    with Sandbox(kind="sway", width=1024, height=768) as sb:
        yield sb


def _windows(sb: Sandbox) -> list[SwayWindow]:
    async def go() -> list[SwayWindow]:
        assert sb.info is not None
        ipc = await SwayIpc.connect(sb.info.extra_env["SWAYSOCK"])
        try:
            return await ipc.windows()
        finally:
            await ipc.close()

    return asyncio.run(go())


def _window_of(sb: Sandbox, pid: int) -> SwayWindow:
    return wait_for(
        lambda: next((w for w in _windows(sb) if w.pid == pid), None),
        timeout=30,
        what=f"a window of {pid}",
    )


def _ipc(sb: Sandbox, call: str, con_id: int) -> None:
    async def go() -> None:
        assert sb.info is not None
        ipc = await SwayIpc.connect(sb.info.extra_env["SWAYSOCK"])
        try:
            await getattr(ipc, call)(con_id)
        finally:
            await ipc.close()

    asyncio.run(go())


def test_windows_focus_and_close(sway: Sandbox) -> None:
    a = sway.spawn(["zenity", "--info", "--title=first one", "--text=a"])
    b = sway.spawn(["zenity", "--info", "--title=second one", "--text=b"])
    wa, wb = _window_of(sway, a.pid), _window_of(sway, b.pid)
    assert (wa.app_id, wa.title, wa.shell) == ("zenity", "first one", "xdg_shell")
    for w in (wa, wb):
        assert w.rect.x >= 0 and w.rect.x + w.rect.width <= 1024 and w.rect.width > 50
    _ipc(sway, "focus", wa.con_id)
    wait_for(lambda: _window_of(sway, a.pid).focused, timeout=10, what="the first to focus")
    assert not _window_of(sway, b.pid).focused
    _ipc(sway, "close_window", wa.con_id)
    assert a.wait(timeout=20) is not None
    assert all(w.pid != a.pid for w in _windows(sway))
    _ipc(sway, "close_window", wb.con_id)
    b.wait(timeout=20)


def test_keyboard_types_any_text_and_keys(sway: Sandbox) -> None:
    assert sway.info is not None
    proc = sway.spawn(["zenity", "--entry", "--text=say"], log="entry.log")
    win = _window_of(sway, proc.pid)
    _ipc(sway, "focus", win.con_id)
    keys = VirtualInput.open(sway.info.wayland_display, (1024, 768))
    try:
        keys.type_text("héllo €1=2")
        keys.press(["Control_L", "a"])  # select all …
        keys.type_text("Grüße — 42")  # … and type over it
        keys.press(["Return"])
    finally:
        keys.close()
    assert proc.wait(timeout=20) == 0
    answer = Path(sway.info.runtime_dir, "entry.log").read_text(encoding="utf-8")
    assert "Grüße — 42" in answer.splitlines(), answer


def test_pointer_clicks_where_the_compositor_says(sway: Sandbox) -> None:
    """A button's window-relative AT-SPI extents plus the window's place from sway's tree are
    its screen point: clicking "Yes" ends the question with code 0 ("No" would give 1)."""
    assert sway.info is not None
    proc = sway.spawn(["zenity", "--question", "--text=click yes"])
    win = _window_of(sway, proc.pid)
    x, y, w, h = wait_for(
        lambda: _try(lambda: window_extents(sway.info.session_bus, proc.pid, "push button", "Yes")),  # type: ignore[union-attr]
        timeout=20,
        what="the Yes button",
    )
    pointer = VirtualInput.open(sway.info.wayland_display, (1024, 768))
    try:
        pointer.click(win.rect.x + x + w // 2, win.rect.y + y + h // 2)
    finally:
        pointer.close()
    assert proc.wait(timeout=20) == 0


def _try(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except LookupError:
        return None


def test_screencopy_output_and_window_region(sway: Sandbox) -> None:
    assert sway.info is not None
    proc = sway.spawn(["zenity", "--info", "--title=shot", "--text=capture me"])
    win = _window_of(sway, proc.pid)
    cap = ScreenCopy.open(sway.info.wayland_display)
    got: list[tuple[Image.Image, Image.Image, tuple[int, int, int, int]]] = []

    def agreeing() -> float | None:
        # sway may still re-tile (a window of an earlier test closing): take the rect each time,
        # and the whole output and the region until the region is the output's crop there
        w = _window_of(sway, proc.pid)
        box = (w.rect.x, w.rect.y, w.rect.width, w.rect.height)
        whole, part = cap.capture(), cap.capture(box)
        got[:] = [(whole, part, box)]
        if whole.size != (1024, 768) or part.size != (box[2], box[3]):
            return None
        crop = whole.crop((box[0], box[1], box[0] + box[2], box[1] + box[3]))
        same = ImageChops.difference(crop, part).convert("L").histogram()[0]
        share = same / (box[2] * box[3])
        return share if share > 0.98 else None  # the same pixels (the cursor may differ)

    try:
        wait_for(agreeing, timeout=15, what="a region capture equal to the output's crop")
    finally:
        cap.close()
    whole, part, box = got[0]
    assert whole.size == (1024, 768) and part.size == (box[2], box[3])
    assert len(part.getcolors(maxcolors=1 << 20) or []) > 10  # a window, not a blank
    _ipc(sway, "close_window", win.con_id)
    proc.wait(timeout=20)
