"""Keyboard and pointer input on wlroots compositors: the virtual keyboard and virtual pointer
protocols (``zwp_virtual_keyboard_manager_v1``, ``zwlr_virtual_pointer_manager_v1``).

The devices are made once and held for the life of the connection: a headless sway has no
input device at all (its seat's capabilities are 0), and a keyboard that appears just before its
keys and vanishes after them loses keys (measured: ``wtype`` into a GTK 4 calculator typed
nothing until given a delay). Keys go to the focused window, as on any desktop.

The keyboard carries deskpilot's own keymap (as ``wtype`` does): four modifier keys on fixed
keycodes plus one keycode per keysym needed so far, so any Unicode character types without
layout tricks. The keymap grows when a new symbol is needed and is sent again (clients receive
it); it never exceeds keycode 255, which X11 clients on Xwayland cannot go beyond.
Modifiers are sent as state (``modifiers``), not derived from key presses.

Pointer positions are in the compositor's layout (screen) coordinates, given with the layout's
extent (``motion_absolute``); buttons use Linux input codes (BTN_LEFT = 0x110).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence

from deskpilot.desktop.wayland.wire import Args, Connection, WaylandError, fixed

KEYBOARD_MANAGER = "zwp_virtual_keyboard_manager_v1"
POINTER_MANAGER = "zwlr_virtual_pointer_manager_v1"
#: zwp_virtual_keyboard_v1 requests
KEYMAP, KEY, MODIFIERS = 0, 1, 2
#: zwlr_virtual_pointer_v1 requests
MOTION_ABSOLUTE, BUTTON, AXIS, FRAME, AXIS_SOURCE, AXIS_STOP, AXIS_DISCRETE = 1, 2, 3, 4, 5, 6, 7
KEYMAP_FORMAT_XKB_V1 = 1
PRESSED, RELEASED = 1, 0
BUTTONS = {"left": 0x110, "right": 0x111, "middle": 0x112, "back": 0x116, "forward": 0x115}
#: modifier keysym → (keycode, real-modifier mask) in deskpilot's keymap
MODIFIER_KEYS: dict[str, tuple[int, int]] = {
    "Shift_L": (9, 1 << 0),
    "Control_L": (10, 1 << 2),
    "Alt_L": (11, 1 << 3),
    "Super_L": (12, 1 << 6),
}
#: right-hand and alias modifiers → the one deskpilot's keymap has
RIGHT_MODIFIERS = {"Control_R": "Control_L", "Shift_R": "Shift_L", "Alt_R": "Alt_L",
                   "Super_R": "Super_L", "Meta_L": "Alt_L", "Meta_R": "Alt_L"}  # fmt: skip
_MODIFIER_MAP = {"Shift_L": "Shift", "Control_L": "Control", "Alt_L": "Mod1", "Super_L": "Mod4"}
FIRST_FREE, LAST_CODE = 13, 255
#: Scroll: one wheel notch as libinput reports it (15 units, one discrete step).
NOTCH = 15.0


def keysym_for_char(char: str) -> str:
    """The XKB keysym for one character, as a number XKB's parser accepts.

    Latin-1 characters get their legacy keysyms (``=`` is ``equal``, 0x3d: apps that bind keys
    look for those — a GTK 4 calculator ignored ``=`` typed as the Unicode keysym 0x100003d);
    every other character its Unicode keysym (0x01000000 + code point)."""
    if char == "\n":
        return "Return"
    if char == "\t":
        return "Tab"
    if char == " ":
        # the fixed space key: Chromium on ozone-wayland dropped a space typed through a key
        # the keymap added (measured with Chromium 120 on sway 1.7: "Lyon 69" arrived as
        # "Lyon69")
        return "space"
    cp = ord(char)
    if 0x20 <= cp <= 0x7E or 0xA0 <= cp <= 0xFF:
        return f"0x{cp:08x}"
    return f"0x{0x01000000 + cp:08x}"


#: Keys every deskpilot keymap has, on fixed keycodes from FIRST_FREE on: GTK 3 matches its key
#: bindings (Return in a dialog, Escape, Ctrl+A) by keycode, and a keymap that only grew the
#: key after the app had read it left those bindings dead (measured: a zenity entry typed text
#: but ignored Return and Escape). Letters carry their capital on level 2.
NAMED_KEYS = (
    *("Return", "Escape", "Tab", "BackSpace", "Delete", "Insert", "Home", "End", "Page_Up"),
    *("Page_Down", "Left", "Right", "Up", "Down", "Menu", "Print", "Pause", "Scroll_Lock"),
    *("Caps_Lock", "Num_Lock", "KP_Enter", "space"),
    *(f"F{n}" for n in range(1, 13)),
)
LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")
PUNCTUATION = tuple("0123456789!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _base_symbols() -> list[tuple[str, str]]:
    """(keysym used to find the key, its symbols in the keymap) of the fixed keys."""
    out = [(k, k) for k in NAMED_KEYS]
    out += [
        (keysym_for_char(c), f"{keysym_for_char(c)}, {keysym_for_char(c.upper())}") for c in LETTERS
    ]
    out += [(keysym_for_char(c), keysym_for_char(c)) for c in PUNCTUATION]
    return out


BASE = _base_symbols()


def _normal(name: str) -> str:
    """A key name of deskpilot's vocabulary (or a character) as a keysym of this keymap."""
    return keysym_for_char(name) if len(name) == 1 else RIGHT_MODIFIERS.get(name, name)


class Keymap:
    """deskpilot's keymap: the modifiers and the fixed keys, then one keycode per other keysym
    used so far."""

    def __init__(self) -> None:
        self.base = {sym: FIRST_FREE + i for i, (sym, _s) in enumerate(BASE)}
        self._first_extra = FIRST_FREE + len(BASE)
        self.codes: dict[str, int] = {}

    def ensure(self, keysyms: Iterable[str]) -> bool:
        """Give every keysym a keycode; True when the keymap changed (send it again)."""
        known = MODIFIER_KEYS.keys() | self.base.keys()
        wanted = [k for k in dict.fromkeys(keysyms) if k not in known]
        new = [k for k in wanted if k not in self.codes]
        if not new:
            return False
        room = LAST_CODE - self._first_extra + 1
        if len(self.codes) + len(new) > room:
            self.codes = {}  # start the extra keys over with what this request needs
            new = wanted
            if len(new) > room:
                raise WaylandError(f"too many distinct characters in one request ({len(new)})")
        for keysym in new:
            self.codes[keysym] = self._first_extra + len(self.codes)
        return True

    def code(self, keysym: str) -> int:
        if keysym in MODIFIER_KEYS:
            return MODIFIER_KEYS[keysym][0]
        if keysym in self.base:
            return self.base[keysym]
        return self.codes[keysym]

    def text(self) -> str:
        """The keymap in XKB's text format (the compositor compiles it with xkbcommon)."""
        symbols = [(c, sym) for sym, (c, _m) in MODIFIER_KEYS.items()]
        symbols += [(self.base[sym], syms) for sym, syms in BASE]
        symbols += [(c, sym) for sym, c in self.codes.items()]
        names = "\n".join(f"    <K{c}> = {c};" for c, _s in symbols)
        keys = "\n".join(f"    key <K{c}> {{ [ {syms} ] }};" for c, syms in symbols)
        mods = "\n".join(
            f"    modifier_map {_MODIFIER_MAP[k]} {{ <K{c}> }};"
            for k, (c, _m) in MODIFIER_KEYS.items()
        )
        return (
            "xkb_keymap {\n"
            f'  xkb_keycodes "deskpilot" {{\n    minimum = 8;\n    maximum = {LAST_CODE};\n'
            f"{names}\n  }};\n"
            '  xkb_types "deskpilot" { include "complete" };\n'
            '  xkb_compatibility "deskpilot" { include "complete" };\n'
            f'  xkb_symbols "deskpilot" {{\n{keys}\n{mods}\n  }};\n'
            "};\n"
        )


class VirtualInput:
    """A virtual keyboard and pointer on one wlroots seat, held open."""

    def __init__(self, conn: Connection, layout: tuple[int, int]) -> None:
        self.conn = conn
        self.layout = layout  # (width, height) of the compositor's layout
        self.keymap = Keymap()
        seat = conn.bind("wl_seat", 1)
        kb_manager = conn.bind(KEYBOARD_MANAGER, 1)
        ptr_manager = conn.bind(POINTER_MANAGER, 1)
        self.keyboard = conn.new_id()
        conn.send(kb_manager, 0, Args().uint(seat).uint(self.keyboard))
        self.pointer = conn.new_id()
        conn.send(ptr_manager, 0, Args().uint(seat).uint(self.pointer))
        self._held = 0  # modifiers down (key_event)
        self.position = (0, 0)  # where this pointer was last moved
        self._upload_keymap()
        conn.roundtrip()
        self._start = time.monotonic()

    @classmethod
    def open(cls, socket_path: str, layout: tuple[int, int]) -> VirtualInput:
        conn = Connection.connect(socket_path)
        missing = [i for i in (KEYBOARD_MANAGER, POINTER_MANAGER) if conn.find(i) is None]
        if missing:
            conn.close()
            raise WaylandError(
                f"this compositor offers no {' or '.join(missing)}: deskpilot cannot send keys "
                "or pointer input to it (wlroots compositors such as sway do)"
            )
        return cls(conn, layout)

    def close(self) -> None:
        self.conn.close()

    def _ms(self) -> int:
        return int((time.monotonic() - self._start) * 1000) & 0xFFFFFFFF

    def _upload_keymap(self) -> None:
        data = self.keymap.text().encode() + b"\0"
        fd = os.memfd_create("deskpilot-keymap", os.MFD_CLOEXEC)
        try:
            os.write(fd, data)
            self.conn.send(
                self.keyboard,
                KEYMAP,
                Args().uint(KEYMAP_FORMAT_XKB_V1).uint(len(data)),
                fds=[fd],
            )
        finally:
            os.close(fd)

    # -- keyboard --------------------------------------------------------------------------

    def _prepare(self, keysyms: Iterable[str]) -> None:
        if self.keymap.ensure(keysyms):
            self._upload_keymap()
            self.conn.roundtrip()

    def _key(self, keysym: str, state: int) -> None:
        self.conn.send(
            self.keyboard,
            KEY,
            Args().uint(self._ms()).uint(self.keymap.code(keysym) - 8).uint(state),
        )

    def _mods(self, mask: int) -> None:
        self.conn.send(self.keyboard, MODIFIERS, Args().uint(mask).uint(0).uint(0).uint(0))

    def key_event(self, names: Sequence[str], down: bool) -> None:
        """Press the keys named (in order), or release them (in reverse order); modifiers
        stay down between the two (a held Ctrl around a click)."""
        keysyms = [_normal(k) for k in names]
        self._prepare(keysyms)
        for keysym in keysyms if down else list(reversed(keysyms)):
            self._key(keysym, PRESSED if down else RELEASED)
            if keysym in MODIFIER_KEYS:
                bit = MODIFIER_KEYS[keysym][1]
                self._held = self._held | bit if down else self._held & ~bit
                self._mods(self._held)
        self.conn.roundtrip()

    def press(self, keysyms: Sequence[str]) -> None:
        """Press a combination (modifiers first, e.g. ``["Control_L", "a"]``) and release it.
        Each item is a keysym name (``Return``, ``Left``, ``F5``) or one character."""
        keysyms = [_normal(k) for k in keysyms]
        self._prepare(keysyms)
        mask = self._held
        for keysym in keysyms:
            self._key(keysym, PRESSED)
            if keysym in MODIFIER_KEYS:
                mask |= MODIFIER_KEYS[keysym][1]
                self._mods(mask)
        for keysym in reversed(keysyms):
            self._key(keysym, RELEASED)
            if keysym in MODIFIER_KEYS:
                mask &= ~MODIFIER_KEYS[keysym][1]
                self._mods(mask)
        self.conn.roundtrip()

    def type_text(self, text: str) -> None:
        """Type ``text`` character by character into the focused window."""
        syms = [keysym_for_char(c) for c in text]
        self._prepare(syms)
        for keysym in syms:
            self._key(keysym, PRESSED)
            self._key(keysym, RELEASED)
        self.conn.roundtrip()

    # -- pointer ---------------------------------------------------------------------------

    def move(self, x: int, y: int) -> None:
        width, height = self.layout
        if not (0 <= x < width and 0 <= y < height):
            raise WaylandError(f"point ({x}, {y}) is outside the screen ({width}x{height})")
        args = Args().uint(self._ms()).uint(x).uint(y).uint(width).uint(height)
        self.conn.send(self.pointer, MOTION_ABSOLUTE, args)
        self.conn.send(self.pointer, FRAME)
        self.position = (x, y)

    def button(self, name: str, pressed: bool) -> None:
        code = BUTTONS.get(name)
        if code is None:
            raise WaylandError(f"unknown mouse button {name!r} (one of {', '.join(BUTTONS)})")
        state = PRESSED if pressed else RELEASED
        self.conn.send(self.pointer, BUTTON, Args().uint(self._ms()).uint(code).uint(state))
        self.conn.send(self.pointer, FRAME)

    def click(self, x: int, y: int, name: str = "left", count: int = 1) -> None:
        self.move(x, y)
        for _ in range(count):
            self.button(name, True)
            self.button(name, False)
        self.conn.roundtrip()

    def scroll(self, x: int, y: int, dx: int, dy: int) -> None:
        """Scroll ``dy`` notches down (negative: up) and ``dx`` right at (x, y)."""
        self.move(x, y)
        for axis, steps in ((0, dy), (1, dx)):
            if not steps:
                continue
            self.conn.send(self.pointer, AXIS_SOURCE, Args().uint(0))  # wheel
            args = Args().uint(self._ms()).uint(axis).int(fixed(NOTCH * steps)).int(steps)
            self.conn.send(self.pointer, AXIS_DISCRETE, args)
            self.conn.send(self.pointer, FRAME)
        self.conn.roundtrip()
