"""The real facade and skills, built from the in-memory fake ports: the nine tools run on them
with no X11 and no D-Bus. Effects are checked in the fake world (the calculator's display, the
editor's text, the windows), not through the tools' own answers."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.base import Desktop, OpenedDesktop
from deskpilot.desktop.facade import DesktopFacade
from deskpilot.desktop.ports.fake import FakeWorld, fake_ports
from deskpilot.session import Session
from deskpilot.tools.builtin import NINE_TOOLS, computer_use_tools
from deskpilot.tools.context import ToolContext

TOOLS = computer_use_tools()


def desktop(settings: Settings) -> tuple[DesktopFacade, FakeWorld, ToolContext]:
    world = FakeWorld()
    desk = DesktopFacade(fake_ports(settings, world))
    ctx = ToolContext(desktop=desk, settings=settings, session=Session(), audit=lambda e: None)
    return desk, world, ctx


def call(ctx: ToolContext, name: str, args: dict[str, Any] | None = None) -> Any:
    result = asyncio.run(TOOLS.call(name, args or {}, ctx))
    assert not result.is_error, f"{name}: {result.text}"
    return result


def ids(text: str, role: str) -> dict[str, str]:
    """name → element ID of the elements of a role in a read."""
    return {
        ln.split('"')[1]: ln.rsplit("@", 1)[1]
        for ln in text.splitlines()
        if "@" in ln and ln.strip().startswith(role) and '"' in ln
    }


def test_the_facade_is_a_desktop(settings: Settings) -> None:
    desk, _world, _ctx = desktop(settings)
    assert isinstance(desk, Desktop) and isinstance(desk, OpenedDesktop)
    assert desk.backend == "fake" and desk.lost() is None
    assert desk.late_windows is False  # the fake world's windows are there when an action returns


def test_the_nine_tools_run_on_fake_ports(settings: Settings) -> None:
    settings = settings.with_overrides(browser="default", confirm="none")
    desk, world, ctx = desktop(settings)
    assert {t.name for t in NINE_TOOLS} == {s.name for s in TOOLS.list()}
    ran: set[str] = set()

    def run(name: str, args: dict[str, Any] | None = None) -> Any:
        ran.add(name)
        return call(ctx, name, args)

    assert "Calculator" in run("open_app", {"bundleId": "Calculator"}).text
    calc = world.windows[-1]
    assert calc.kind == "calculator" and world.active == calc.info.handle
    assert calc.info.stable_id in run("list_windows").text
    buttons = ids(run("read_screen_ax").text, "button")
    steps = [{"elementID": buttons[k]} for k in ("1", "2", "×", "7")]
    run("perform_sequence", {"steps": steps})
    run("perform", {"action": "shortcut", "shortcut": "enter"})
    assert calc.display == "84"  # the elements' actions, then a key, reached the app
    run("perform", {"action": "type", "text": "+1\n"})
    assert calc.display == "85"
    run("perform", {"action": "click", "elementID": buttons["C"]})
    assert calc.display == ""
    shot = run("computer_use_screenshot")
    assert shot.images and shot.images[0].data.startswith(b"\x89PNG")
    nine = next(n for n in calc.root.walk() if n.name == "9").bounds
    assert nine is not None
    x, y = nine.center[0] - calc.info.geometry.x, nine.center[1] - calc.info.geometry.y
    run("perform", {"action": "click", "x": x, "y": y})
    assert calc.display == "9"  # a pointer click at a point of the window
    moved = run("scroll", {"direction": "down", "milliseconds": 750})
    assert calc.scroll == 1  # one view at most: one notch over the small main area
    assert "moved" in moved.text.lower() or "scrolled" in moved.text.lower(), moved.text
    run("wait", {"seconds": 0.05})

    run("open_app", {"bundleId": "Editor"})
    editor = next(w for w in world.windows if w.kind == "editor")
    assert world.active == calc.info.handle  # the launch gave the focus back
    field = next(i for i in ids(run("read_screen_ax").text, "textbox").values())
    run("perform", {"action": "fill", "elementID": field, "text": "hello"})
    assert editor.display == "hello"  # filled without the keyboard
    assert "set_text 'hello'" in world.log

    opened = run("open_urls", {"urls": ["https://example.org/"]})
    assert "example.org" in opened.text
    assert any(w.info.title == "https://example.org/" for w in world.windows)
    assert ran == {t.name for t in NINE_TOOLS}
    assert "spawn xdg-open https://example.org/" in world.log
    asyncio.run(desk.close())
    assert "windows closed" in world.log


def test_no_platform_library_was_needed(settings: Settings) -> None:
    """Building and using the facade over fakes imports neither Xlib nor dbus-fast (checked
    in a fresh interpreter: this one may have imported them for other tests)."""
    import subprocess

    code = (
        "import asyncio, sys\n"
        "from deskpilot.config import Settings\n"
        "from deskpilot.desktop.facade import DesktopFacade\n"
        "from deskpilot.desktop.fake_apps import FAKE_APPS\n"
        "from deskpilot.desktop.ports.fake import FakeWorld, fake_ports\n"
        "world = FakeWorld(); world.open(FAKE_APPS[0])\n"
        "desk = DesktopFacade(fake_ports(Settings(), world))\n"
        "w = asyncio.run(desk.list_windows())[0]\n"
        "asyncio.run(desk.snapshot(w)); asyncio.run(desk.capture(w))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('Xlib', 'dbus_fast')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize("bad", ["Enter", "Ctrl"])
def test_an_unknown_key_is_refused_before_any_input(settings: Settings, bad: str) -> None:
    desk, world, _ctx = desktop(settings)

    async def go() -> None:
        window = world.open(world.windows[0].info.app if world.windows else _calc())
        before = list(world.log)
        with pytest.raises(Exception, match="unknown key name"):
            await desk.press_keys(window, ["Control_L", bad])
        assert world.log == before  # nothing was activated or pressed

    asyncio.run(go())


def _calc() -> Any:
    from deskpilot.desktop.fake_apps import FAKE_APPS

    return FAKE_APPS[0]


def test_scrolling_an_area_without_children_waits_for_no_tree(settings: Settings) -> None:
    """The calculator's display has no accessible children: whether it moved is judged on its
    pixels, and there is nothing in its tree that could follow the scroll, so the windows'
    trees are read once (to find the area), not again and again until a timeout."""
    desk, world, ctx = desktop(settings)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    calc = world.windows[-1]
    reads: list[bool] = []
    read_window = desk.ports.a11y.read_window

    async def counted(window: Any, *, timeout: float = 5.0, fresh: bool = False) -> Any:
        reads.append(fresh)
        return await read_window(window, timeout=timeout, fresh=fresh)

    desk.ports.a11y.read_window = counted  # type: ignore[method-assign]
    outcome, moved = asyncio.run(desk.scroll(calc.info, "down", 3))
    assert moved and calc.scroll == 1 and "1 wheel steps down" in outcome.detail
    assert reads == [True]


def test_a_click_says_the_pointer_is_on_the_element_only_when_it_is(settings: Settings) -> None:
    """An element clicked by its accessibility action hovers it first, as a person's pointer
    would; the result names the pointer's place only when the pointer got there. A backend
    with nowhere to aim (a Wayland window with no known place, behind GNOME's portal) leaves
    it where it was: the action still runs, and the result does not claim the hover."""
    settings = settings.with_overrides(confirm="none")
    desk, world, ctx = desktop(settings)
    call(ctx, "open_app", {"bundleId": "Calculator"})
    calc = world.windows[-1]
    buttons = ids(call(ctx, "read_screen_ax").text, "button")
    aimed = call(ctx, "perform", {"action": "click", "elementID": buttons["7"]}).text
    assert calc.display == "7" and "the pointer on it at" in aimed, aimed

    async def nowhere(x: int, y: int) -> None:
        return None  # the pointer stays

    desk.ports.input.move = nowhere  # type: ignore[method-assign]
    before = world.pointer
    unaimed = call(ctx, "perform", {"action": "click", "elementID": buttons["8"]}).text
    assert calc.display == "78" and world.pointer == before
    assert "the pointer on it" not in unaimed, unaimed
