"""list_windows: both ID forms, app ids, the ACTIVE marker; resolution; closed windows."""

from __future__ import annotations

import os
import re
import signal

import pytest

from deskpilot._wait import async_wait_for
from deskpilot.desktop.apps import resolve_app
from deskpilot.tools.context import ToolContext
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_list_windows_forms_and_resolution(call: Call, ctx: ToolContext, apps: Apps) -> None:
    calc = await apps.open("galculator")
    editor = await apps.open("org.xfce.mousepad")
    assert await ctx.desktop.activate(editor)

    listing = await call("list_windows")
    text = listing.text
    assert not listing.is_error
    assert re.match(r"Open Windows \(\d+ total\):", text)
    assert "Galculator (galculator):" in text
    assert "Mousepad (org.xfce.mousepad):" in text
    assert f"Window ID: {calc.pid}/{calc.title}" in text
    assert f"Stable Window ID: {calc.pid}/{calc.handle}" in text
    assert f"PID: {editor.pid}" in text
    active = [ln for ln in text.splitlines() if "⭐ (ACTIVE)" in ln]
    # seen once in a full suite (3 December): no line marked, the editor activated just before;
    # what the window manager said was active then is in the message, for the next look
    now = await ctx.desktop.active_window()
    assert active == [f'  - Window: "{editor.title}" ⭐ (ACTIVE)'], (now, text)

    # both forms name the same window
    for wid in (calc.window_id, calc.stable_id):
        read = await call("read_screen_ax", {"windowID": wid})
        assert not read.is_error, read.text
        assert f"windowID: {calc.stable_id}" in read.text

    # a closed window gives the documented error
    await ctx.desktop.close_window(calc)  # type: ignore[attr-defined]

    async def closed() -> bool:
        return all(w.handle != calc.handle for w in await ctx.desktop.list_windows())

    await async_wait_for(closed, timeout=10, what="galculator to close")
    for wid in (calc.stable_id, calc.window_id):
        gone = await call("read_screen_ax", {"windowID": wid})
        assert gone.is_error
        assert gone.text == (
            f"Window {wid} not found — run list_windows again; the window may have closed."
        )
    bogus = await call("perform", {"action": "type", "text": "x", "windowID": "1/2"})
    assert bogus.is_error and "not found" in bogus.text


async def test_no_window_id_uses_tracked_target_then_active(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    editor = await apps.open("org.xfce.mousepad")
    await ctx.desktop.activate(editor)
    first = await call("read_screen_ax")  # no target yet: the active window
    assert f"windowID: {editor.stable_id}" in first.text
    assert ctx.session.target == editor.stable_id
    calc = await apps.open("galculator")
    await call("read_screen_ax", {"windowID": calc.stable_id})  # now the tracked target
    await ctx.desktop.activate(editor)
    again = await call("read_screen_ax")
    assert f"windowID: {calc.stable_id}" in again.text  # the target, not the active window


async def test_a_restarted_app_reusing_its_window_id_is_found(apps: Apps) -> None:
    # X hands a restarted client the same window ids (gnome-calculator's window is always
    # 0x800004 on a fresh display): when the dead window is still listed as the new process
    # starts, the launch must still recognise the new window by its pid
    desktop = apps.desktop
    first = await apps.open("Calculator")
    os.kill(first.pid, signal.SIGKILL)

    async def gone() -> bool:
        return first.handle not in await desktop.window_handles()

    await async_wait_for(gone, timeout=10, what="the killed calculator's window to go")
    entry = resolve_app("Calculator", await desktop.apps())
    launcher = desktop.ports.launcher
    proc = launcher.spawn(launcher.argv_for(entry))
    stale = {first.handle: first.pid}  # as if the dead window were still listed at the start
    second = await desktop.launching._wait_new_window(stale, proc, entry, timeout=30)
    await apps.adopt(second)
    assert second.pid == proc.pid != first.pid


async def test_listing_sees_changes_made_behind_its_back(ctx: ToolContext, apps: Apps) -> None:
    """Windows are kept between listings while no X event says they changed: a title, a
    position and a minimize done by another X client (not deskpilot) show in the next
    listing at once, with no wait."""
    from Xlib import display

    editor = await apps.open("org.xfce.mousepad")
    first = {w.handle: w for w in await ctx.desktop.list_windows()}
    again = {w.handle: w for w in await ctx.desktop.list_windows()}
    assert again[editor.handle] == first[editor.handle]  # nothing changed: the same answer

    other = display.Display(ctx.settings.display)
    try:
        win = other.create_resource_object("window", editor.handle)
        name = other.intern_atom("_NET_WM_NAME")
        utf8 = other.intern_atom("UTF8_STRING")
        win.change_property(name, utf8, 8, b"Renamed behind deskpilot's back")
        other.sync()
        now = {w.handle: w for w in await ctx.desktop.list_windows()}
        assert now[editor.handle].title == "Renamed behind deskpilot's back"

        before = now[editor.handle].geometry
        win.configure(x=before.x + 37, y=before.y + 23)
        other.sync()

        async def moved() -> bool:
            w = next(w for w in await ctx.desktop.list_windows() if w.handle == editor.handle)
            # the window manager applies the move (and may keep it on screen)
            return (w.geometry.x, w.geometry.y) != (before.x, before.y)

        await async_wait_for(moved, timeout=10, what="the moved window's new position")
        x_after = win.translate_coords(other.screen().root, 0, 0)
        listed = next(w for w in await ctx.desktop.list_windows() if w.handle == editor.handle)
        assert (listed.geometry.x, listed.geometry.y) == (-x_after.x, -x_after.y)

        win.unmap()
        other.sync()

        async def hidden() -> bool:
            listed = {w.handle: w for w in await ctx.desktop.list_windows()}
            return editor.handle not in listed or listed[editor.handle].hidden

        await async_wait_for(hidden, timeout=10, what="the unmapped window to show as hidden")
        win.map()
        other.sync()
    finally:
        other.close()


async def test_the_active_window_is_where_the_keys_go_while_the_window_manager_lags(
    ctx: ToolContext, apps: Apps
) -> None:
    """Openbox moves the X input focus first and names the window in _NET_ACTIVE_WINDOW when
    the focus events come back: meanwhile the property names the window keys have left, or
    none. A listing then marks where the keys go, and an activation returns only once the
    focus is in its window (a full suite once listed no window active after one returned)."""
    from Xlib import X, Xatom, display

    calc = await apps.open("galculator")
    editor = await apps.open("org.xfce.mousepad")
    assert await ctx.desktop.activate(editor)
    other = display.Display(ctx.settings.display)
    root = other.screen().root
    active = other.intern_atom("_NET_ACTIVE_WINDOW")

    def focus_in(handle: int) -> bool:
        """The X server's input focus is in ``handle`` (read over a connection of its own)."""
        focus = other.get_input_focus().focus
        xid = focus if isinstance(focus, int) else focus.id
        while xid not in (X.NONE, X.PointerRoot, root.id):
            if xid == handle:
                return True
            xid = other.create_resource_object("window", xid).query_tree().parent.id
        return False

    def marked() -> list[int]:
        return [w.handle for w in listed if w.active]

    try:
        assert focus_in(editor.handle)
        for lagging in (0, calc.handle):  # focus passing between apps; the window left
            root.change_property(active, Xatom.WINDOW, 32, [lagging])
            other.sync()
            listed = await ctx.desktop.list_windows()
            assert marked() == [editor.handle], (lagging, listed)
            assert await ctx.desktop.ports.windows.active_handle() == editor.handle
            now = await ctx.desktop.active_window()
            assert now is not None and now.handle == editor.handle
        # the property already names galculator: activating it waits for the focus too
        assert await ctx.desktop.activate(calc)
        assert focus_in(calc.handle)
        listed = await ctx.desktop.list_windows()
        assert marked() == [calc.handle]
    finally:
        # the window manager names the active window again
        await ctx.desktop.activate(editor)
        other.close()
