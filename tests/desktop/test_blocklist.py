"""Blocked apps: KeePassXC is refused by every tool, and by a new tool written without any
policy code; a user-added entry too; screenshots black it out wherever it overlaps."""

from __future__ import annotations

import dataclasses
import io

import pytest
from PIL import Image as PILImage

from deskpilot._wait import async_wait_for
from deskpilot.config import Settings
from deskpilot.desktop.base import Rect
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.native.executor import NativeExecutor
from deskpilot.policy import Risk
from deskpilot.sandbox import Sandbox
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet
from deskpilot.tools.windows import find_window
from tests.desktop.conftest import Apps, Call

pytestmark = pytest.mark.asyncio(loop_scope="session")

WINDOW_TOOLS = {
    "read_screen_ax": {},
    "perform": {"action": "type", "text": "secret"},
    "perform_sequence": {"steps": [{"action": "shortcut", "shortcut": "ctrl+a"}]},
    "scroll": {"milliseconds": 500},
    "computer_use_screenshot": {},
}


def keepass_procs() -> int:
    import os

    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/comm") as fh:
                    count += fh.read().strip() == "keepassxc"
            except OSError:
                pass
    return count


async def test_keepassxc_is_refused_by_every_tool(call: Call, ctx: ToolContext, apps: Apps) -> None:
    before = keepass_procs()
    refused = await call("open_app", {"bundleId": "KeePassXC"})
    assert refused.is_error
    assert "blocked apps list" in refused.text and "Stop trying" in refused.text
    assert keepass_procs() == before  # nothing was launched

    window = await apps.spawn(["keepassxc"], match=lambda w: "KeePassXC" in w.title)
    for name, args in WINDOW_TOOLS.items():
        result = await call(name, {**args, "windowID": window.stable_id})
        assert result.is_error, name
        assert "KeePassXC is on the blocked apps list" in result.text, (name, result.text)
        assert not result.images
    # ... also when it is simply the active window and no windowID is given
    await ctx.desktop.activate(window)
    ctx.session.target = None
    fallback = await call("read_screen_ax")
    assert fallback.is_error and "blocked" in fallback.text
    # list_windows shows it, but not its title
    listing = (await call("list_windows")).text
    assert "BLOCKED" in listing
    assert f'Window: "{window.title}"' not in listing


async def test_user_added_entry_is_refused(
    ctx: ToolContext, apps: Apps, desktop_settings: Settings
) -> None:
    settings = desktop_settings.with_overrides(confirm="none", blocklist_add=("galculator",))
    mine = dataclasses.replace(ctx, settings=settings, session=Session())
    tools = computer_use_tools()
    refused = await tools.call("open_app", {"bundleId": "galculator"}, mine)
    assert refused.is_error and "Galculator is on the blocked apps list" in refused.text
    window = await apps.open("galculator")
    read = await tools.call("read_screen_ax", {"windowID": window.stable_id}, mine)
    assert read.is_error and "blocked" in read.text
    # without the entry it is readable
    ok = await tools.call("read_screen_ax", {"windowID": window.stable_id}, ctx)
    assert not ok.is_error
    assert f"windowID: {window.stable_id}" in ok.text and "button" in ok.text  # its tree


async def test_a_new_tool_without_policy_code_is_refused_on_keepassxc(
    ctx: ToolContext, apps: Apps, desktop: DesktopFacade
) -> None:
    read: list[str] = []

    @tool(risk=Risk.READ_ONLY, title="Dump")
    async def dump(ctx: ToolContext, windowID: str) -> ToolResult:
        """Dump a window's whole tree (straight from the desktop: no policy code at all)."""
        window = find_window(await ctx.desktop.list_windows(), windowID)
        assert window is not None
        names = [n.name for n in (await ctx.desktop.snapshot(window)).nodes() if n.name]
        read.append(window.title)
        return ToolResult("\n".join(names))

    vault = await apps.spawn(["keepassxc"], match=lambda w: "KeePassXC" in w.title)
    calc = await apps.open("org.gnome.Calculator")
    tools = ToolSet([dump])
    refused = await tools.call("dump", {"windowID": vault.stable_id}, ctx)
    assert refused.is_error and "KeePassXC is on the blocked apps list" in refused.text
    assert refused.data == {"refused": "blocked", "app": vault.app.name}
    assert read == []  # the door refused before the tool ran
    assert not (await tools.call("dump", {"windowID": calc.stable_id}, ctx)).is_error
    assert read == [calc.title]


def move_window(display: str, xid: int, x: int, y: int) -> None:
    """Ask the window manager to move a window (raw X: a channel deskpilot does not use)."""
    from Xlib import display as xdisplay

    d = xdisplay.Display(display)
    try:
        d.create_resource_object("window", xid).configure(x=x, y=y)
        d.sync()
    finally:
        d.close()


async def test_screenshots_black_out_keepassxc_wherever_it_overlaps(
    call: Call, ctx: ToolContext, apps: Apps, desktop: DesktopFacade, sandbox: Sandbox
) -> None:
    calc = await apps.open("org.gnome.Calculator")
    vault = await apps.spawn(["keepassxc"], match=lambda w: "KeePassXC" in w.title)
    g = calc.geometry
    assert sandbox.info is not None
    move_window(sandbox.info.display, vault.handle, g.x + g.width // 2, g.y + g.height // 2)

    async def overlapping() -> Rect | None:
        now = {w.handle: w for w in await desktop.list_windows()}
        v, c = now[vault.handle].geometry, now[calc.handle].geometry
        return v if v.intersects(c) and v.x > c.x and v.y > c.y else None

    over = await async_wait_for(overlapping, timeout=10, what="the vault to overlap the calc")
    await desktop.activate(calc)
    shot = await call("computer_use_screenshot", {"windowID": calc.stable_id})
    assert not shot.is_error, shot.text
    img = PILImage.open(io.BytesIO(shot.images[0].data)).convert("RGB")
    inside = (over.x - g.x + 5, over.y - g.y + 5)  # in the overlap, in the image's pixels
    assert img.getpixel(inside) == (0, 0, 0)
    assert img.getpixel((5, 5)) != (0, 0, 0)  # the calculator's own corner is still there
    # the native screenshot of the whole screen: the vault blacked out where it is
    screen = await NativeExecutor(ToolSet(), ctx).capture()
    full = PILImage.open(io.BytesIO(screen.data)).convert("RGB")
    cx, cy = over.center
    assert full.getpixel((cx, cy)) == (0, 0, 0)
    assert full.getpixel((g.x + 5, g.y + 5)) != (0, 0, 0)
