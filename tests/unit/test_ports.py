"""The ports: each fake satisfies its interface, the identity helpers and the key vocabulary."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from deskpilot.config import Settings
from deskpilot.desktop.fake_apps import FAKE_APPS
from deskpilot.desktop.ports.accessibility import Accessibility
from deskpilot.desktop.ports.capture import Capture
from deskpilot.desktop.ports.fake import FakeWorld, fake_ports
from deskpilot.desktop.ports.identity import is_new
from deskpilot.desktop.ports.input import Input
from deskpilot.desktop.ports.keynames import CHAR_NAMES, NAMES
from deskpilot.desktop.ports.keys import char_key, check_keys, is_key_name, sendable
from deskpilot.desktop.ports.launching import Launcher
from deskpilot.desktop.ports.windows import WindowSystem
from deskpilot.errors import DesktopError, ElementCallFailed

PORTS = {
    "windows": WindowSystem,
    "input": Input,
    "capture": Capture,
    "a11y": Accessibility,
    "launcher": Launcher,
}


def members(protocol: type) -> set[str]:
    return {n for n in vars(protocol) if not n.startswith("_")}


@pytest.mark.parametrize("port", sorted(PORTS))
def test_each_fake_fills_its_port(port: str, tmp_path: Path) -> None:
    ports = fake_ports(Settings(state_dir=tmp_path))
    impl, protocol = getattr(ports, port), PORTS[port]
    assert isinstance(impl, protocol)
    for name in members(protocol):
        wanted = getattr(protocol, name)
        got = getattr(type(impl), name)
        if inspect.iscoroutinefunction(wanted):  # same kind, same parameters
            assert inspect.iscoroutinefunction(got), f"{port}.{name} must be a coroutine"
            assert list(inspect.signature(got).parameters) == list(
                inspect.signature(wanted).parameters
            ), f"{port}.{name}"


def test_a_handle_reused_by_another_process_is_a_new_window() -> None:
    before = {0x400001: 100, 0x400002: 0}
    assert not is_new(before, 0x400001, 100)
    assert not is_new(before, 0x400001, 0)  # pid unknown: the same window
    assert is_new(before, 0x400001, 200)  # the id came back with another app
    assert is_new(before, 0x400003, 100)
    assert is_new(before, 0x400002, 300)  # its pid was unknown: now another owns it


def test_the_key_vocabulary_is_what_x11_accepts() -> None:
    XK = pytest.importorskip("Xlib.XK")
    assert {a[3:] for a in dir(XK) if a.startswith("XK_")} == NAMES
    for ch, name in CHAR_NAMES.items():
        assert XK.string_to_keysym(name) == ord(ch)


def test_keys_are_named_or_single_characters() -> None:
    assert is_key_name("Return") and is_key_name("KP_0") and not is_key_name("Enter")
    assert char_key("!") == "exclam" and char_key("é") == "eacute" and char_key("€") is None
    assert sendable("€") and not sendable("Enter")
    check_keys(["Control_L", "a", "€"])
    with pytest.raises(DesktopError, match="unknown key name 'Enter'"):
        check_keys(["Control_L", "Enter"])


def test_the_fake_world_behind_the_ports(tmp_path: Path) -> None:
    world = FakeWorld()
    ports = fake_ports(Settings(state_dir=tmp_path), world)

    async def go() -> None:
        calc = world.open(FAKE_APPS[0])
        read = await ports.a11y.read_window(calc)
        assert read.root is not None and not read.partial
        seven = next(n for n in read.root.walk() if n.name == "7")
        assert await ports.a11y.activate(seven.key) == "click"
        await ports.input.type_text("*6\n")
        assert world.windows[0].display == "42"
        await ports.input.move(*seven.bounds.center)  # type: ignore[union-attr]
        await ports.input.button("left", True)
        await ports.input.button("left", False)
        assert world.windows[0].display == "427"
        assert await ports.a11y.children(read.root.key)
        with pytest.raises(ElementCallFailed):
            await ports.a11y.role((":1.999", "/gone"))
        before = await ports.windows.handles()
        proc = ports.launcher.spawn(["fake-editor", "/tmp/notes.txt"])
        after = await ports.windows.handles()
        new = [h for h, pid in after.items() if is_new(before, h, pid)]
        assert len(new) == 1 and after[new[0]] == proc.pid
        editor = await ports.windows.window(new[0])
        assert editor is not None and editor.title == "notes.txt - Editor" and editor.active
        image = await ports.capture.capture_image(editor)
        assert image.size == (editor.geometry.width, editor.geometry.height)
        with pytest.raises(DesktopError, match="cannot start"):
            ports.launcher.spawn(["no-such-app"])
        await ports.close()

    asyncio.run(go())
