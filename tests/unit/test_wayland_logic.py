"""Pure logic of the Wayland clients: keysyms, deskpilot's keymap, sway's tree, wire encoding,
portal tokens, session bus configuration."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from Xlib import XK

from deskpilot.desktop.ports.keynames import NAMES
from deskpilot.desktop.wayland import keysyms, session
from deskpilot.desktop.wayland.portal import TokenStore
from deskpilot.desktop.wayland.sway import SwayRect, views
from deskpilot.desktop.wayland.wire import Args, Reader, fixed
from deskpilot.desktop.wayland.wlr_input import (
    FIRST_FREE,
    LAST_CODE,
    MODIFIER_KEYS,
    Keymap,
    keysym_for_char,
)
from deskpilot.errors import DesktopError


def test_keysym_table_equals_xlib_for_every_vocabulary_name() -> None:
    for name in NAMES:
        assert keysyms.keysym(name) == XK.string_to_keysym(name), name


def test_characters_become_latin1_or_unicode_keysyms() -> None:
    assert keysyms.keysym("=") == 0x3D and keysyms.keysym("é") == 0xE9
    assert keysyms.keysym("€") == 0x010020AC and keysyms.keysym("\n") == 0xFF0D
    with pytest.raises(DesktopError, match="unknown key name 'Bogus_Key'"):
        keysyms.keysym("Bogus_Key")
    # the wlroots keymap spells the same numbers
    assert keysym_for_char("=") == "0x0000003d" and keysym_for_char("€") == "0x010020ac"


def test_keymap_keeps_fixed_keys_and_grows_for_new_characters() -> None:
    km = Keymap()
    fixed_return = km.code("Return")
    assert km.code("Control_L") == MODIFIER_KEYS["Control_L"][0]
    assert km.ensure([keysym_for_char("a"), "Return"]) is False  # fixed keys need no change
    assert km.ensure([keysym_for_char("€")]) is True
    euro = km.code(keysym_for_char("€"))
    assert euro > km.code(keysym_for_char("z")) and km.code("Return") == fixed_return
    text = km.text()
    assert f"<K{euro}> = {euro};" in text and "modifier_map Control" in text
    assert text.count("key <K") == len(MODIFIER_KEYS) + len(km.base) + 1
    # filling every free code starts the extra keys over; fixed keys never move
    many = [keysym_for_char(chr(0x4E00 + i)) for i in range(LAST_CODE)]
    room = LAST_CODE - (FIRST_FREE + len(km.base)) + 1
    assert km.ensure(many[:room]) is True and km.code("Return") == fixed_return
    assert max(km.codes.values()) <= LAST_CODE
    with pytest.raises(DesktopError, match="too many distinct characters"):
        km.ensure(many)


def test_sway_tree_views_with_content_rects() -> None:
    tree = {
        "type": "root",
        "nodes": [
            {
                "type": "output",
                "nodes": [
                    {
                        "type": "workspace",
                        "name": "1",
                        "nodes": [
                            {
                                "type": "con",
                                "id": 5,
                                "pid": 10,
                                "app_id": "zenity",
                                "name": "Entry",
                                "focused": True,
                                "shell": "xdg_shell",
                                "rect": {"x": 0, "y": 0, "width": 1280, "height": 800},
                                "window_rect": {"x": 2, "y": 0, "width": 1276, "height": 773},
                            },
                        ],
                        "floating_nodes": [
                            {
                                "type": "floating_con",
                                "id": 7,
                                "pid": 11,
                                "app_id": None,
                                "window_properties": {"class": "XTerm"},
                                "window": 4194307,
                                "name": "xterm",
                                "shell": "xwayland",
                                "rect": {"x": 551, "y": 315, "width": 178, "height": 147},
                                "window_rect": {"x": 2, "y": 0, "width": 174, "height": 120},
                            },
                        ],
                    }
                ],
            }
        ],
    }
    tiled, floating = list(views(tree))
    assert (tiled.con_id, tiled.pid, tiled.app_id, tiled.focused) == (5, 10, "zenity", True)
    assert tiled.rect == SwayRect(2, 25, 1276, 773)  # under the 25 px title bar
    assert floating.rect == SwayRect(553, 340, 174, 120) and floating.floating
    assert (floating.app_id, floating.x11_id, floating.workspace) == ("XTerm", 4194307, "1")


def test_wire_arguments_are_padded_and_read_back() -> None:
    data = bytes(Args().uint(7).int(-2).string("wl_seat").data)
    assert len(data) % 4 == 0 and struct.unpack_from("=Ii", data) == (7, -2)
    r = Reader(data)
    assert (r.uint(), r.int(), r.string()) == (7, -2, "wl_seat")
    assert fixed(1.5) == 384 and fixed(-15) == -3840


def test_portal_token_store_is_private(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "state" / "portal-restore-token")
    assert store.load() is None
    store.save("abc")
    assert store.load() == "abc" and (store.path.stat().st_mode & 0o777) == 0o600
    store.clear()
    store.clear()
    assert store.load() is None


def _probes(files: dict[str, int | None], comms: dict[int, str]) -> session.Probes:
    """A machine with sockets ``files`` (path → listening pid, None: nobody listens)."""
    import fnmatch

    return session.Probes(
        glob=lambda pattern: sorted(f for f in files if fnmatch.fnmatch(f, pattern)),
        answers=lambda path: files.get(path) is not None,
        listener=lambda path: files.get(path),
        comm=lambda pid: comms.get(pid, ""),
    )


def test_session_found_in_the_runtime_dir_names_its_compositor() -> None:
    files = {
        "/run/user/1000/wayland-0": 42,
        "/run/user/1000/wayland-0.lock": None,
        "/run/user/1000/sway-ipc.1000.42.sock": 42,
        "/run/user/1000/bus": 7,
    }
    found = session.find_session({}, 1000, _probes(files, {42: "sway"}))
    assert (found.wayland_display, found.compositor, found.found_by) == (
        "/run/user/1000/wayland-0",
        "sway",
        "runtime dir",
    )
    assert found.swaysock == "/run/user/1000/sway-ipc.1000.42.sock"
    assert found.env()["DBUS_SESSION_BUS_ADDRESS"] == "unix:path=/run/user/1000/bus"


def test_session_named_by_the_environment_and_gnome_by_its_process() -> None:
    files = {"/tmp/rt/wayland-1": 9, "/tmp/rt/.mutter-Xwaylandauth.AB12": None}
    env = {"XDG_RUNTIME_DIR": "/tmp/rt", "WAYLAND_DISPLAY": "wayland-1"}
    found = session.find_session(env, 0, _probes(files, {9: "gnome-shell"}))
    assert (found.compositor, found.found_by, found.swaysock) == ("gnome", "environment", "")
    assert found.xauthority == "/tmp/rt/.mutter-Xwaylandauth.AB12"


def test_no_wayland_session_and_a_dead_socket_is_not_one() -> None:
    files = {"/run/user/5/wayland-0": None}
    found = session.find_session({}, 5, _probes(files, {}))
    assert found.wayland_display == "" and found.env() == {"XDG_RUNTIME_DIR": "/run/user/5"}
