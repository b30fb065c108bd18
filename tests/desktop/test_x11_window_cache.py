"""The X11 window list's cache: a window read once is kept until an X event says it changed.

A window id can be looked up while no window has it: the window manager's client list still
names a window just destroyed (a killed browser's), and X hands the freed id to the next
client's first window (the next browser's). The list must hear that new window's changes.
Titles are set here on a connection of the test's own, a channel the listing does not use.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

import pytest
from Xlib import X, display

from deskpilot._wait import async_wait_for
from deskpilot.desktop.x11.display import X11
from deskpilot.sandbox import Sandbox
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps


@pytest.fixture
def other(sandbox: Sandbox) -> Iterator[display.Display]:
    """Another client of the sandbox's display: makes windows the listing has to hear about."""
    assert sandbox.info is not None
    conn = display.Display(sandbox.info.display)
    yield conn
    conn.close()


@pytest.fixture
def x11(sandbox: Sandbox) -> Iterator[X11]:
    assert sandbox.info is not None
    x = X11(sandbox.info.display)
    yield x
    x.close()


def test_a_window_made_with_an_id_looked_up_before_is_heard(
    x11: X11, other: display.Display
) -> None:
    # the id the other client gives its next window, while no window has it
    wid = other.display.allocate_resource_id()
    other.display.free_resource_id(wid)
    assert x11.window(wid) is None

    root = other.screen().root
    win = root.create_window(0, 0, 40, 30, 0, X.CopyFromParent, override_redirect=True)
    assert win.id == wid  # the same id, now a window
    name, utf8 = other.intern_atom("_NET_WM_NAME"), other.intern_atom("UTF8_STRING")
    try:
        win.change_property(name, utf8, 8, b"first")
        other.sync()
        found = x11.window(wid)
        assert found is not None and found.title == "first"

        win.change_property(name, utf8, 8, b"second")  # only this changes: one PropertyNotify
        other.sync()
        found = x11.window(wid)
        assert found is not None and found.title == "second"  # was "first" from the cache
    finally:
        with contextlib.suppress(Exception):
            win.destroy()
            other.sync()


@pytest.mark.asyncio(loop_scope="session")
async def test_a_restarted_app_s_window_on_a_looked_up_id_is_heard(
    ctx: ToolContext, apps: Apps
) -> None:
    """Looked up once it closed (a tool asking after its target), the id comes back as the
    restarted app's window (X hands a restarted client the same ids): renamed by another X
    client, that window shows its new title in the next listing."""
    first = await apps.open("org.xfce.mousepad")
    os.kill(first.pid, signal.SIGKILL)

    async def gone() -> bool:
        return first.handle not in await ctx.desktop.window_handles()

    await async_wait_for(gone, timeout=10, what="the killed editor's window to go")
    assert await ctx.desktop.ports.windows.window(first.handle) is None
    second = await apps.open("org.xfce.mousepad")
    if second.handle != first.handle:
        pytest.skip(
            f"X gave the restarted editor another id ({second.handle} after {first.handle})"
        )
    other = display.Display(ctx.settings.display)
    try:
        win = other.create_resource_object("window", second.handle)
        name, utf8 = other.intern_atom("_NET_WM_NAME"), other.intern_atom("UTF8_STRING")
        win.change_property(name, utf8, 8, b"Renamed behind deskpilot's back")
        other.sync()
        now = {w.handle: w.title for w in await ctx.desktop.list_windows()}
        assert now[second.handle] == "Renamed behind deskpilot's back"
    finally:
        other.close()
