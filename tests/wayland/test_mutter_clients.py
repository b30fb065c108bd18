"""Mutter's RemoteDesktop + ScreenCast clients against a real headless mutter: keys typed into
an app, a click at an element's window-relative extents through a window stream, frames of
the monitor and of the focused window. Effects are checked through the app's own exit code and
output, and the AT-SPI tree."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from deskpilot._wait import wait_for
from deskpilot.desktop.wayland.mutter import MutterError, MutterSession
from deskpilot.desktop.wayland.pipewire import FrameReader
from deskpilot.sandbox import Sandbox
from tests.wayland.conftest import focused_window_stream, frames_by_pid, require, window_extents

pytestmark = [pytest.mark.sandbox, pytest.mark.app]


@pytest.fixture(scope="module")
def gnome() -> Iterator[Sandbox]:
    require("gnome")
    with Sandbox(kind="gnome", width=1024, height=768) as sb:
        yield sb


def _mapped(sb: Sandbox, pid: int) -> None:
    assert sb.info is not None
    bus = sb.info.session_bus
    wait_for(lambda: frames_by_pid(bus).get(pid), timeout=30, what=f"app {pid}'s window")


def test_keys_reach_the_focused_app(gnome: Sandbox) -> None:
    assert gnome.info is not None
    proc = gnome.spawn(["zenity", "--entry", "--text=say"], log="m-entry.log")
    _mapped(gnome, proc.pid)

    async def go() -> None:
        session = await MutterSession.start(gnome.info.session_bus)  # type: ignore[union-attr]
        try:
            await session.type_text("Grüße €5, ok")
            await session.press(["Control_L", "a"])
            await session.type_text("über 42")
            await session.press(["Return"])
        finally:
            await session.close()

    asyncio.run(go())
    assert proc.wait(timeout=20) == 0
    answer = Path(gnome.info.runtime_dir, "m-entry.log").read_text(encoding="utf-8")
    assert "über 42" in answer.splitlines(), answer


def test_click_in_a_window_stream_uses_window_coordinates(gnome: Sandbox) -> None:
    """No screen position is known for a window on bare mutter; the focused window's own stream
    takes the element's window-relative AT-SPI extents as they are."""
    assert gnome.info is not None
    proc = gnome.spawn(["zenity", "--question", "--text=click yes"])
    _mapped(gnome, proc.pid)
    bus = gnome.info.session_bus
    x, y, w, h = wait_for(
        lambda: _try(lambda: window_extents(bus, proc.pid, "push button", "Yes")),
        timeout=20,
        what="the Yes button",
    )

    async def go() -> Image.Image:
        session = await focused_window_stream(bus)
        try:
            assert session.stream is not None
            runtime_dir = gnome.info.runtime_dir  # type: ignore[union-attr]
            frames = FrameReader(
                session.stream.node_id, session.stream.size, runtime_dir=runtime_dir
            )
            try:
                shot = frames.frame(timeout=20)
            finally:
                frames.close()
            with pytest.raises(MutterError, match="outside the recorded area"):
                await session.move(-1, 5)
            await session.move(x + w // 2, y + h // 2)
            await session.button("left", True)
            await session.button("left", False)
            return shot
        finally:
            await session.close()

    shot = asyncio.run(go())
    assert proc.wait(timeout=20) == 0  # "Yes"; "No" would be 1
    # the window's own frame shows the button where AT-SPI says it is: not background there
    button = shot.crop((x, y, x + w, y + h))
    assert len(button.getcolors(maxcolors=1 << 16) or []) > 3


def _try(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except LookupError:
        return None


def test_monitor_frames(gnome: Sandbox) -> None:
    assert gnome.info is not None
    proc = gnome.spawn(["zenity", "--info", "--text=frame me"])
    _mapped(gnome, proc.pid)

    async def go() -> Image.Image:
        session = await MutterSession.start(gnome.info.session_bus)  # type: ignore[union-attr]
        try:
            assert session.stream is not None and session.stream.size == (1024, 768)
            runtime_dir = gnome.info.runtime_dir  # type: ignore[union-attr]
            frames = FrameReader(
                session.stream.node_id, session.stream.size, runtime_dir=runtime_dir
            )
            try:
                return frames.frame(timeout=20)
            finally:
                frames.close()
        finally:
            await session.close()

    shot = asyncio.run(go())
    assert shot.size == (1024, 768)
    assert len(shot.getcolors(maxcolors=1 << 20) or []) > 50  # a desktop with a window on it
    proc.kill()
    proc.wait(timeout=10)
