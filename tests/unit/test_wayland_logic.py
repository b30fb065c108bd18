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
    BASE,
    EXTRA_CODES,
    LAST_CODE,
    MODIFIER_KEYS,
    PRINTABLE_CODES,
    Keymap,
    VirtualInput,
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
    assert keysym_for_char(" ") == "space" and Keymap().ensure(["space"]) is False  # fixed


def test_keymap_keeps_fixed_keys_and_grows_for_new_characters() -> None:
    km = Keymap()
    fixed_return = km.code("Return")
    assert fixed_return == 28 + 8 and km.code("Control_L") == MODIFIER_KEYS["Control_L"][0]
    assert km.ensure([keysym_for_char("a"), "Return"]) is False  # fixed keys need no change
    assert km.ensure([keysym_for_char("€")]) is True
    euro = km.code(keysym_for_char("€"))
    assert euro == EXTRA_CODES[0] and km.code("Return") == fixed_return
    text = km.text()
    assert f"<K{euro}> = {euro};" in text and "modifier_map Control" in text
    assert text.count("key <K") == len(MODIFIER_KEYS) + len(km.base) + 1
    # filling every free code starts the extra keys over; fixed keys never move
    many = [keysym_for_char(chr(0x4E00 + i)) for i in range(LAST_CODE)]
    assert km.ensure(many[: km.room]) is True and km.code("Return") == fixed_return
    assert sorted(km.codes.values()) == sorted(EXTRA_CODES)
    with pytest.raises(DesktopError, match="too many distinct characters"):
        km.ensure(many)


def test_every_key_has_a_code_of_its_own_and_characters_sit_on_printable_keys() -> None:
    """Chromium drops a character (other than a letter or digit) sent on a key that prints
    nothing on a keyboard: punctuation and added characters use printable codes."""
    codes = [c for _k, _s, c in BASE] + [c for c, _m in MODIFIER_KEYS.values()]
    assert len(set(codes + list(EXTRA_CODES))) == len(codes) + len(EXTRA_CODES)
    assert max(codes + list(EXTRA_CODES)) <= LAST_CODE and len(EXTRA_CODES) >= 20
    printable = {c + 8 for c in PRINTABLE_CODES}
    km = Keymap()
    assert all(km.code(keysym_for_char(ch)) in printable for ch in "!,.;/[]~")
    assert set(EXTRA_CODES) <= printable and km.code("space") == 57 + 8


def test_long_texts_with_many_distinct_characters_type_in_parts() -> None:
    """More distinct characters than one keymap holds: the text is typed in parts, the keymap
    sent again before each (a fake connection records what was sent)."""

    class Wire:
        def __init__(self) -> None:
            self.sent: list[tuple[int, int]] = []

        def send(self, oid: int, opcode: int, args: object = None, fds: object = ()) -> None:
            self.sent.append((oid, opcode))

        def roundtrip(self) -> None:
            pass

    vi = VirtualInput.__new__(VirtualInput)
    vi.conn, vi.keyboard, vi.keymap, vi._start = Wire(), 7, Keymap(), 0.0  # type: ignore[assignment]
    text = "".join(chr(0x4E00 + i) for i in range(2 * len(EXTRA_CODES) + 3))
    vi.type_text(text)
    sent = vi.conn.sent  # type: ignore[attr-defined]
    keymaps = sum(1 for _o, op in sent if op == 0)
    keys = sum(1 for _o, op in sent if op == 1)
    assert keymaps == 3 and keys == 2 * len(text)


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
