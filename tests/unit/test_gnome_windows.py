"""The GNOME backend's window system without a desktop: frames as a stand-in accessibility bus
lists them, activation through a stand-in of Mutter's switch-applications-backward (each press
activates the least recently used window), and the ports' members. The real thing runs in
tests/wayland/test_tools_gnome.py."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from deskpilot.desktop.base import AppEntry
from deskpilot.desktop.ports.capture import Capture
from deskpilot.desktop.ports.input import Input
from deskpilot.desktop.ports.windows import WindowSystem
from deskpilot.desktop.wayland.gnome import MutterCapture, MutterInput
from deskpilot.desktop.wayland.gnome_windows import (
    S_ACTIVE,
    S_VISIBLE,
    SWITCH_BACKWARD,
    GnomeWindows,
    frame_handle,
)
from deskpilot.errors import ActionFailed

SHOWN = S_VISIBLE


class Desk:
    """Apps' frames and Mutter's most-recently-used order; presses keys as Mutter would."""

    def __init__(self) -> None:
        # bus -> (pid, app name, [(path, title, states, extents)])
        self.apps: dict[str, tuple[int, str, list[tuple[str, str, int, tuple[int, ...]]]]] = {}
        self.mru: list[tuple[str, str]] = []  # (bus, path), focused first
        self.pressed: list[tuple[str, ...]] = []
        self.bus = self  # the trees' bus

    def add(self, bus: str, pid: int, path: str, title: str, size: tuple[int, int]) -> None:
        entry = self.apps.setdefault(bus, (pid, "app", []))
        entry[2].append((path, title, SHOWN, (0, 0, *size)))
        self.mru.insert(0, (bus, path))

    # the accessibility bus, as GnomeWindows asks it
    async def app_buses(self) -> list[str]:
        return list(self.apps)

    async def pid_of(self, bus: str) -> int:
        return self.apps[bus][0]

    async def get_property(self, bus: str, path: str, iface: str, prop: str) -> str:
        return self.apps[bus][1]

    async def frames_of(self, bus: str) -> list[tuple[str, str, int, tuple[int, ...]]]:
        focused = self.mru[0] if self.mru else None
        return [
            (p, t, s | (S_ACTIVE if (bus, p) == focused else 0), e)
            for p, t, s, e in self.apps[bus][2]
        ]

    # Mutter's keybindings, through RemoteDesktop
    async def press(self, keys: Sequence[str]) -> None:
        self.pressed.append(tuple(keys))
        if tuple(keys) == SWITCH_BACKWARD and len(self.mru) > 1:
            self.mru.insert(0, self.mru.pop())  # the least recently used is activated


async def no_apps() -> list[AppEntry]:
    return []


async def monitor() -> tuple[int, int]:
    return 1280, 800


def windows_of(desk: Desk) -> GnomeWindows:
    return GnomeWindows(desk, desk.press, no_apps, monitor)  # type: ignore[arg-type]


def test_frames_are_windows_in_their_own_coordinates() -> None:
    desk = Desk()
    desk.add(":1.4", 40, "/a/1", "Calculator", (360, 490))
    desk.add(":1.7", 70, "/org/a11y/atspi/accessible/1", "Signup", (307, 211))
    desk.apps[":1.7"][2].extend(
        [
            ("/popup", "", SHOWN, (109, 35, 814, 88)),  # a popup surface placed in its parent
            ("/hidden", "gone", 0, (0, 0, 10, 10)),  # not visible
            ("/empty", "no area", SHOWN, (0, 0, 0, 0)),
            ("/chooser", "", SHOWN, (0, 0, 800, 600)),  # an unnamed window is still one
        ]
    )
    listed = asyncio.run(windows_of(desk).list_windows())
    by_title = {w.title: w for w in listed}
    assert sorted(by_title) == ["", "Calculator", "Signup"]
    signup = by_title["Signup"]
    assert signup.handle == frame_handle(":1.7", "/org/a11y/atspi/accessible/1")
    assert (signup.pid, signup.active, signup.hidden) == (70, True, False)
    g = signup.geometry
    assert (g.x, g.y, g.width, g.height) == (0, 0, 307, 211)
    assert not by_title["Calculator"].active


def test_handles_are_stable_and_distinct() -> None:
    assert frame_handle(":1.4", "/a/1") == frame_handle(":1.4", "/a/1")
    handles = {frame_handle(f":1.{b}", f"/a/{p}") for b in range(30) for p in range(30)}
    assert len(handles) == 900 and all(0 < h < 2**31 for h in handles)


def test_window_at_is_the_active_window_or_nothing() -> None:
    desk = Desk()
    desk.add(":1.4", 40, "/a/1", "Calculator", (360, 490))
    desk.add(":1.7", 70, "/b/1", "Signup", (307, 211))
    windows = windows_of(desk)
    hit = asyncio.run(windows.window_at(100, 100))
    assert hit is not None and hit.title == "Signup"  # the active one holds the point
    assert asyncio.run(windows.window_at(340, 400)) is None  # only the calculator is that big


def test_activation_walks_the_tab_list_backwards_until_the_window_is_active() -> None:
    desk = Desk()
    for i in range(4):
        desk.add(f":1.{i}", 10 + i, "/w", f"w{i}", (200, 100))
    windows = windows_of(desk)
    listed = {w.title: w for w in asyncio.run(windows.list_windows())}
    assert listed["w3"].active
    assert asyncio.run(windows.activate(listed["w1"]))
    assert desk.mru[0] == (":1.1", "/w")
    assert len(desk.pressed) <= 3 and set(desk.pressed) == {SWITCH_BACKWARD}
    desk.pressed.clear()
    assert asyncio.run(windows.activate(listed["w1"]))  # already active: nothing pressed
    assert desk.pressed == []


def test_a_window_gone_is_not_activated_and_minimize_needs_the_focus_to_leave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("deskpilot.desktop.wayland.gnome_windows.STEP_S", 0.2)
    desk = Desk()
    desk.add(":1.1", 11, "/w", "one", (200, 100))
    desk.add(":1.2", 12, "/w", "two", (200, 100))
    windows = windows_of(desk)
    two = asyncio.run(windows.active_window())
    assert two is not None and two.title == "two"
    del desk.apps[":1.2"]
    desk.mru.remove((":1.2", "/w"))
    assert asyncio.run(windows.activate(two)) is False
    one = asyncio.run(windows.active_window())
    assert one is not None
    with pytest.raises(ActionFailed, match="was not minimized"):
        asyncio.run(windows.minimize(one))  # the stand-in ignores Super+H: it stays active


@pytest.mark.parametrize(
    ("impl", "protocol"),
    [(GnomeWindows, WindowSystem), (MutterInput, Input), (MutterCapture, Capture)],
)
def test_each_gnome_port_has_every_member(impl: type, protocol: type) -> None:
    wanted = {n for n in vars(protocol) if not n.startswith("_")}
    assert wanted <= set(dir(impl))


def test_a_windows_origin_in_its_stream_follows_the_toolkit() -> None:
    from deskpilot.desktop.wayland.gnome_streams import content_origin

    # GTK 4 counts from its opaque body: the box is the window's size
    assert content_origin((61, 55, 421, 545), (360, 490)) == (61, 55)
    # Qt 5 draws a title bar and thin borders around its content (measured: 706x533 box)
    assert content_origin((0, 0, 706, 533), (700, 500)) == (3, 30)
    # GTK 3 and Chromium count from the surface's corner, the shadow included
    assert content_origin((26, 23, 281, 182), (307, 211)) == (0, 0)
    assert content_origin(None, (100, 100)) == (0, 0)


def test_an_x11_window_on_xwayland_keeps_its_place() -> None:
    desk = Desk()
    desk.add(":1.4", 40, "/a/1", "Calculator", (360, 490))
    desk.apps[":1.4"][2].append(("/x/1", "on Xwayland", SHOWN, (546, 340, 188, 157)))
    by_title = {w.title: w for w in asyncio.run(windows_of(desk).list_windows())}
    x11, wayland = by_title["on Xwayland"], by_title["Calculator"]
    assert x11.placed and (x11.geometry.x, x11.geometry.y) == (546, 340)
    assert not wayland.placed and (wayland.geometry.x, wayland.geometry.y) == (0, 0)
