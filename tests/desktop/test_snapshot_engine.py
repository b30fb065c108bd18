"""Snapshot engine: diffs, change summaries, warm reads, and apps that stop answering."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest
from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.atspi.connect import find_a11y_address
from deskpilot.desktop.atspi.consts import ROOT_PATH
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.registry import open_resolved
from deskpilot.tools.context import ToolContext
from deskpilot.tools.screen import SINCE
from tests.desktop.conftest import Apps, Call
from tests.desktop.helpers import find_id

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_diff_after_typing_shows_exactly_that_field(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    window = await apps.spawn(
        ["zenity", "--entry", "--title=Diff", "--text=Your name"], match=lambda w: w.title == "Diff"
    )
    first = (await call("read_screen_ax", {"windowID": window.stable_id})).text
    entry = find_id(first, "textbox")
    same = await call("read_screen_ax", {"changes": True})
    assert f"No changes since {SINCE}." in same.text

    typed = await call("perform", {"action": "type", "elementID": entry, "text": "Ada"})
    assert not typed.is_error, typed.text
    # the action's result ends with a one-line summary of what it changed: that field only
    last = typed.text.splitlines()[-1]
    assert last.startswith("Changes: ~ textbox") and f"@{entry}" in last, typed.text
    assert '= "Ada"' in last, typed.text
    # a changes read does not repeat what the action's result said
    assert f"No changes since {SINCE}." in (await call("read_screen_ax", {"changes": True})).text

    # a change made outside deskpilot (xdotool types into the focused field) is listed by the
    # next changes read, exactly
    env = {**os.environ, "DISPLAY": ctx.settings.display or ""}
    subprocess.run(["xdotool", "type", " Lovelace"], env=env, check=True, timeout=30)

    async def typed_in() -> bool:
        snap = await ctx.desktop.snapshot(window, fresh=True)
        return any(n.text == "Ada Lovelace" for n in snap.nodes())

    await async_wait_for(typed_in, timeout=15, what="xdotool's text in the field")
    changes = (await call("read_screen_ax", {"changes": True})).text
    body = changes.split(f"Changes since {SINCE} (+ new, - gone, ~ changed, ↕ moved):\n")[1]
    diff_lines = [ln for ln in body.split("\n</activeAppContext>")[0].splitlines() if ln]
    assert len(diff_lines) == 1, changes
    assert diff_lines[0].startswith("~ textbox") and f"@{entry}" in diff_lines[0]
    assert '= "Ada Lovelace"' in diff_lines[0]
    assert re.search(r'\(was: textbox[^=]*= "Ada"[^"]*\)$', diff_lines[0]), diff_lines[0]
    assert f"No changes since {SINCE}." in (await call("read_screen_ax", {"changes": True})).text


async def test_warm_reads_follow_changes(call: Call, ctx: ToolContext, apps: Apps) -> None:
    calc = await apps.open("galculator")
    desktop = ctx.desktop
    assert isinstance(desktop, DesktopFacade)
    cold = await desktop.snapshot(calc, fresh=True)
    warm = await desktop.snapshot(calc)
    assert len(warm.nodes()) == len(cold.nodes())
    read = (await call("read_screen_ax", {"windowID": calc.stable_id})).text
    await call("perform", {"elementID": find_id(read, "toggle", "7")})
    after = await desktop.snapshot(calc)  # warm: applies the events the click caused
    shown = [n.name or n.text or "" for n in after.nodes() if n.role in ("label", "text")]
    assert "7" in shown, shown


async def test_app_that_stops_answering_gives_a_partial_read_and_a_typed_error(
    call: Call, ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    calc = await apps.open("galculator")
    await call("read_screen_ax", {"windowID": calc.stable_id})
    os.kill(calc.pid, signal.SIGSTOP)
    try:
        for desktop in (ctx.desktop, await open_resolved(desktop_settings)):  # warm, cold
            start = time.monotonic()
            snap = await desktop.snapshot(calc, timeout=5.0)
            assert time.monotonic() - start < 6.0
            assert snap.partial
            assert any("did not answer" in p or "not answering" in p for p in snap.problems)
            if desktop is not ctx.desktop:
                await desktop.close()
        # a read that got nothing is an error naming the app, not an empty "partial" read
        result = await call("read_screen_ax", {"windowID": calc.stable_id})
        assert result.is_error and "Galculator" in result.text, result.text
        assert "is not responding" in result.text
    finally:
        os.kill(calc.pid, signal.SIGCONT)


async def test_reads_call_an_atk_bridge_app_on_its_own_connection(
    ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    """After the first read of an app that has a socket of its own (atk-bridge: GTK 3), a fresh
    read's calls go there: a monitor on the accessibility bus sees none of them."""
    calc = await apps.open("galculator")
    desktop = ctx.desktop
    assert isinstance(desktop, DesktopFacade)
    first = await desktop.snapshot(calc, fresh=True)
    a11y = desktop.ports.a11y
    (app,) = await a11y.trees.buses_for_pid(calc.pid)  # type: ignore[attr-defined]
    address = desktop_settings.a11y_bus or await find_a11y_address(
        desktop_settings.session_bus, 5.0
    )
    monitor = await MessageBus(bus_address=address).connect()
    seen: list[str] = []
    try:
        reply = await monitor.call(
            Message(
                destination="org.freedesktop.DBus",
                path="/org/freedesktop/DBus",
                interface="org.freedesktop.DBus.Monitoring",
                member="BecomeMonitor",
                signature="asu",
                body=[[f"type='method_call',destination='{app}'"], 0],
            )
        )
        assert reply is not None and reply.message_type == MessageType.METHOD_RETURN

        def copy(msg: Message) -> bool:
            if msg.message_type == MessageType.METHOD_CALL:
                seen.append(f"{msg.path} {msg.member}")
            return True  # handled: a monitor never answers (the bus would drop it)

        monitor.add_message_handler(copy)
        again = await desktop.snapshot(calc, fresh=True)
        # a call that does go through the bus (another connection's): once the monitor has
        # it, it has every call the read sent through the bus before it
        other = await MessageBus(bus_address=address).connect()
        try:
            await other.call(
                Message(
                    destination=app,
                    path=ROOT_PATH,
                    interface="org.a11y.atspi.Accessible",
                    member="GetRole",
                )
            )
        finally:
            other.disconnect()

        async def copied() -> bool:
            return f"{ROOT_PATH} GetRole" in seen

        await async_wait_for(copied, timeout=10, what="the monitor's copy of the call")
    finally:
        monitor.disconnect()
    assert len(again.nodes()) == len(first.nodes()) > 20
    assert seen == [f"{ROOT_PATH} GetRole"], seen


async def test_a_window_nothing_changed_reads_as_its_last_read_until_something_does(
    call: Call, ctx: ToolContext, apps: Apps
) -> None:
    # A read of a window with no event, no input, the same pixels and place since its last
    # read is that read again (the same nodes, said unchanged); a change made outside the tools
    # (xdotool types into the field: events) or a window moved (no event of the app) ends that.
    window = await apps.spawn(
        ["zenity", "--entry", "--title=Memo", "--text=Your name"], match=lambda w: w.title == "Memo"
    )
    desktop = ctx.desktop
    assert isinstance(desktop, DesktopFacade)
    first = (await call("read_screen_ax", {"windowID": window.stable_id})).text

    async def quiet_twice() -> bool:  # two reads in a row with nothing between them
        a = await desktop.snapshot(window)
        b = await desktop.snapshot(window)
        return b.unchanged and b.root is a.root

    await async_wait_for(quiet_twice, timeout=15, what="two reads with nothing between them")
    again = (await call("read_screen_ax", {"windowID": window.stable_id})).text
    assert again == first

    env = {**os.environ, "DISPLAY": ctx.settings.display or ""}
    subprocess.run(["xdotool", "type", "Ada"], env=env, check=True, timeout=30)

    async def typed_in() -> bool:
        snap = await desktop.snapshot(window)
        return not snap.unchanged and any(n.text == "Ada" for n in snap.nodes())

    await async_wait_for(typed_in, timeout=15, what="xdotool's text in a read")
    assert '"Ada"' in (await call("read_screen_ax", {"windowID": window.stable_id})).text

    await async_wait_for(quiet_twice, timeout=15, what="two reads with nothing between them")
    before = await desktop.snapshot(window)
    assert before.root is not None and before.root.bounds is not None
    subprocess.run(
        ["xdotool", "search", "--name", "^Memo$", "windowmove", "300", "260"],
        env=env,
        check=True,
        timeout=30,
    )

    async def moved() -> bool:
        w = next((x for x in await desktop.list_windows() if x.handle == window.handle), None)
        if w is None or (w.geometry.x, w.geometry.y) == (window.geometry.x, window.geometry.y):
            return False
        snap = await desktop.snapshot(w)
        was = before.root.bounds if before.root is not None else None
        now = snap.root.bounds if snap.root is not None else None
        return not snap.unchanged and None not in (was, now) and now != was

    await async_wait_for(moved, timeout=15, what="the moved window's read")
