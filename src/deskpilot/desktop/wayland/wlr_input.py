"""Keyboard and pointer input on wlroots compositors: the virtual keyboard and virtual pointer
protocols (``zwp_virtual_keyboard_manager_v1``, ``zwlr_virtual_pointer_manager_v1``).

The devices are made once and held for the life of the connection: a headless sway has no
input device at all (its seat's capabilities are 0), and a keyboard that appears just before its
keys and vanishes after them loses keys (measured: ``wtype`` into a GTK 4 calculator typed
nothing until given a delay). Keys go to the focused window, as on any desktop.

The keyboard carries deskpilot's own keymap (as ``wtype`` does): modifiers, named keys,
letters, digits and ASCII punctuation on fixed keycodes, plus one keycode per other keysym
needed so far, so any Unicode character types without layout tricks. The keymap grows when a
new symbol is needed and is sent again (clients receive it); a text with more distinct other
characters than it holds is typed in parts. Which keycode carries what matters to Chromium,
which takes a key's meaning from its code (``_layout``); no code exceeds 255, which X11 clients
on Xwayland cannot go beyond.
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
#: modifier keysym → (keycode, real-modifier mask) in deskpilot's keymap: where a keyboard has
#: them (XKB keycode = evdev code + 8)
MODIFIER_KEYS: dict[str, tuple[int, int]] = {
    "Shift_L": (42 + 8, 1 << 0),
    "Control_L": (29 + 8, 1 << 2),
    "Alt_L": (56 + 8, 1 << 3),
    "Super_L": (125 + 8, 1 << 6),
}
#: right-hand and alias modifiers → the one deskpilot's keymap has
RIGHT_MODIFIERS = {
    "Control_R": "Control_L",
    "Shift_R": "Shift_L",
    "Alt_R": "Alt_L",
    "Super_R": "Super_L",
    "Meta_L": "Alt_L",
    "Meta_R": "Alt_L",
}
_MODIFIER_MAP = {"Shift_L": "Shift", "Control_L": "Control", "Alt_L": "Mod1", "Super_L": "Mod4"}
LAST_CODE = 255
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
        return "space"  # the fixed space key
    cp = ord(char)
    if 0x20 <= cp <= 0x7E or 0xA0 <= cp <= 0xFF:
        return f"0x{cp:08x}"
    return f"0x{0x01000000 + cp:08x}"


#: Named keys on the evdev codes a keyboard has them on (XKB keycode = evdev + 8).
NAMED_KEYS: dict[str, int] = {
    "Escape": 1, "BackSpace": 14, "Tab": 15, "Return": 28, "space": 57, "Caps_Lock": 58,
    "Num_Lock": 69, "Scroll_Lock": 70, "KP_Enter": 96, "Print": 99, "Home": 102, "Up": 103,
    "Page_Up": 104, "Left": 105, "Right": 106, "End": 107, "Down": 108, "Page_Down": 109,
    "Insert": 110, "Delete": 111, "Pause": 119, "Menu": 127,
    **{f"F{n}": 58 + n for n in range(1, 11)}, "F11": 87, "F12": 88,
}  # fmt: skip
#: evdev codes of the keys that print a character on a keyboard (the letter, digit and
#: punctuation block, the international keys, the keypad). Chromium (ozone-wayland) takes a
#: key's physical meaning from its code: a character other than a letter or digit on another
#: key's code (End, Down, a browser key) is dropped, or runs that key's command (measured with
#: Chromium 120 on sway 1.7: a space typed on Down's code vanished, ü on End's, one character
#: opened a new tab); on these 68 codes every character arrived.
PRINTABLE_CODES = (
    *range(2, 14), *range(16, 28), *range(30, 42), *range(43, 54), 86, 89, 124, 121,
    *range(71, 84), 55, 98, 117,
)  # fmt: skip
#: evdev codes the letters sit on: keys that print nothing on a keyboard (the printable ones
#: are needed for other characters) but that Chromium knows, so it types the letter a key
#: sends (measured with Chromium 120 on sway 1.7: a letter on a code Chromium does not know —
#: 84, 95, 101, 112, 130, 139, 141, 145-148 — never arrived; on these it did)
LETTER_CODES = (
    85, 90, 91, 92, 93, 94, 113, 114, 115, 118, 120, 122, 123, 128, 129, 131, 132, 133, 134,
    135, 136, 137, 138, 140, 144, 183,
)  # fmt: skip
LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")
#: digits where a keyboard has them (evdev 2-11)
DIGIT_CODES = dict(zip("1234567890", range(2, 12), strict=True))
PUNCTUATION = tuple("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _layout() -> tuple[list[tuple[str, str, int]], tuple[int, ...]]:
    """The fixed keys — (keysym used to find the key, its symbols in the keymap, keycode) —
    and the keycodes left for other characters.

    Every deskpilot keymap has them on the same keycodes: GTK 3 matches its key bindings
    (Return in a dialog, Escape, Ctrl+A) by keycode, and a keymap that only grew the key after
    the app had read it left those bindings dead (measured: a zenity entry typed text but
    ignored Return and Escape). Named keys, modifiers and digits sit where a keyboard has them;
    letters (their capital on level 2) on ``LETTER_CODES``; punctuation and the characters
    added later on the printable codes left (Chromium, above)."""
    fixed = [(k, k, code + 8) for k, code in NAMED_KEYS.items()]
    fixed += [(keysym_for_char(d), keysym_for_char(d), code + 8) for d, code in DIGIT_CODES.items()]
    for char, code in zip(LETTERS, LETTER_CODES, strict=True):
        syms = f"{keysym_for_char(char)}, {keysym_for_char(char.upper())}"
        fixed.append((keysym_for_char(char), syms, code + 8))
    used = {code for _k, _s, code in fixed} | {c for c, _m in MODIFIER_KEYS.values()}
    printable = [c + 8 for c in PRINTABLE_CODES if c + 8 not in used]
    for char in PUNCTUATION:
        fixed.append((keysym_for_char(char), keysym_for_char(char), printable.pop(0)))
    return fixed, tuple(printable)


BASE, EXTRA_CODES = _layout()


def _normal(name: str) -> str:
    """A key name of deskpilot's vocabulary (or a character) as a keysym of this keymap."""
    return keysym_for_char(name) if len(name) == 1 else RIGHT_MODIFIERS.get(name, name)


class Keymap:
    """deskpilot's keymap: the modifiers and the fixed keys, then one keycode per other keysym
    used so far (on the printable codes left: ``EXTRA_CODES``)."""

    def __init__(self) -> None:
        self.base = {sym: code for sym, _s, code in BASE}
        self.codes: dict[str, int] = {}

    @property
    def room(self) -> int:
        """How many other characters one keymap holds."""
        return len(EXTRA_CODES)

    def ensure(self, keysyms: Iterable[str]) -> bool:
        """Give every keysym a keycode; True when the keymap changed (send it again)."""
        known = MODIFIER_KEYS.keys() | self.base.keys()
        wanted = [k for k in dict.fromkeys(keysyms) if k not in known]
        new = [k for k in wanted if k not in self.codes]
        if not new:
            return False
        if len(self.codes) + len(new) > self.room:
            self.codes = {}  # start the extra keys over with what this request needs
            new = wanted
            if len(new) > self.room:
                raise WaylandError(f"too many distinct characters in one request ({len(new)})")
        for keysym in new:
            self.codes[keysym] = EXTRA_CODES[len(self.codes)]
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
        symbols += [(code, syms) for _sym, syms, code in BASE]
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
        """Type ``text`` character by character into the focused window: in parts, when it has
        more distinct characters than one keymap holds (the keymap is sent again between)."""
        syms = [keysym_for_char(c) for c in text]
        while syms:
            part = _fitting(syms, self.keymap)
            self._prepare(part)
            for keysym in part:
                self._key(keysym, PRESSED)
                self._key(keysym, RELEASED)
            self.conn.roundtrip()
            syms = syms[len(part) :]

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


def _fitting(keysyms: Sequence[str], keymap: Keymap) -> list[str]:
    """The longest start of ``keysyms`` whose characters one keymap holds (at least one)."""
    fixed = MODIFIER_KEYS.keys() | keymap.base.keys()
    others: set[str] = set()
    for i, keysym in enumerate(keysyms):
        if keysym not in fixed:
            others.add(keysym)
            if len(others) > keymap.room:
                return list(keysyms[: max(i, 1)])
    return list(keysyms)
