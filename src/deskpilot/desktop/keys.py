"""Shortcut grammar: ``"ctrl+shift+t"``, ``"cmd+k"``, ``"escape"``, ``"shift+enter"`` → key names.

Rules: parts joined by ``+`` (a trailing ``+`` is the plus key: ``ctrl++``), case-insensitive,
modifiers first and in any order, exactly one non-modifier key (or a lone modifier). ``cmd`` /
``command`` / ``meta`` mean Control on Linux; ``option``/``opt`` mean Alt; ``win``/``windows``
/``super`` mean Super. Key names accept the key vocabulary's names
(:mod:`deskpilot.desktop.ports.keys`: X keysym spellings such as ``Return``, ``KP_0``,
``Page_Down``), common aliases (``enter``, ``esc``, ``pgdn``, ``arrowdown``, ``del``) and single
characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deskpilot.desktop.ports.keys import char_key, is_key_name
from deskpilot.errors import InvalidArguments

MODIFIERS: dict[str, str] = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "ctl": "Control_L",
    "cmd": "Control_L",
    "command": "Control_L",
    "meta": "Control_L",
    "shift": "Shift_L",
    "alt": "Alt_L",
    "option": "Alt_L",
    "opt": "Alt_L",
    "super": "Super_L",
    "win": "Super_L",
    "windows": "Super_L",
    "altgr": "ISO_Level3_Shift",
}

ALIASES: dict[str, str] = {
    "enter": "Return",
    "return": "Return",
    "ret": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "space": "space",
    "spacebar": "space",
    "backspace": "BackSpace",
    "bksp": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "ins": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "Page_Up",
    "page_up": "Page_Up",
    "pgup": "Page_Up",
    "pagedown": "Page_Down",
    "page_down": "Page_Down",
    "pgdn": "Page_Down",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "arrowup": "Up",
    "arrowdown": "Down",
    "arrowleft": "Left",
    "arrowright": "Right",
    "plus": "plus",
    "minus": "minus",
    "comma": "comma",
    "period": "period",
    "dot": "period",
    "slash": "slash",
    "backslash": "backslash",
    "semicolon": "semicolon",
    "quote": "apostrophe",
    "apostrophe": "apostrophe",
    "grave": "grave",
    "backtick": "grave",
    "equal": "equal",
    "equals": "equal",
    "bracketleft": "bracketleft",
    "bracketright": "bracketright",
    "capslock": "Caps_Lock",
    "menu": "Menu",
    "printscreen": "Print",
    "print": "Print",
    "pause": "Pause",
    "numlock": "Num_Lock",
    "scrolllock": "Scroll_Lock",
    "volumeup": "XF86AudioRaiseVolume",
    "volumedown": "XF86AudioLowerVolume",
    "mute": "XF86AudioMute",
}

_FKEY = re.compile(r"f([1-9]|1[0-9]|2[0-4])")


@dataclass(frozen=True)
class Combo:
    """A parsed key combination: key names, modifiers first."""

    modifiers: tuple[str, ...]
    key: str

    @property
    def keysyms(self) -> tuple[str, ...]:
        return (*self.modifiers, self.key)

    def __str__(self) -> str:
        return "+".join(self.keysyms)


def key_name(part: str) -> str | None:
    """The key name for one key (no modifiers), or None if unknown."""
    raw = part.strip()
    if not raw:
        return None
    low = raw.lower()
    if low in ALIASES:
        return ALIASES[low]
    if _FKEY.fullmatch(low):
        return low.upper()
    if len(raw) == 1:
        return raw.lower() if raw.isalnum() else char_key(raw)
    if is_key_name(raw):  # exact name, e.g. KP_0, Page_Down
        return raw
    for candidate in (raw.capitalize(), raw.upper(), low):
        if is_key_name(candidate):
            return candidate
    return None


def parse_shortcut(text: str) -> Combo:
    """Parse ``text`` or raise InvalidArguments naming the problem."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidArguments("shortcut is empty: use e.g. 'ctrl+s', 'escape' or 'shift+enter'")
    src = text.strip()
    if src == "+":
        parts = ["plus"]
    elif src.endswith("++"):  # "ctrl++" is ctrl and the plus key
        parts = [*src[:-2].split("+"), "plus"]
    else:
        parts = src.split("+")
    if any(not p.strip() for p in parts):
        raise InvalidArguments(
            f"malformed shortcut {text!r}: empty part between '+' signs (use e.g. 'ctrl+shift+t')"
        )
    mods: list[str] = []
    keys: list[str] = []
    for part in parts:
        low = part.strip().lower()
        if low in MODIFIERS and not keys:
            sym = MODIFIERS[low]
            if sym not in mods:
                mods.append(sym)
            continue
        name = key_name(part)
        if name is None:
            raise InvalidArguments(
                f"malformed shortcut {text!r}: unknown key {part.strip()!r} (known: letters, "
                "digits, F1-F24, enter, escape, tab, space, backspace, delete, home, end, "
                "pageup, pagedown, up, down, left, right, or an X keysym name)"
            )
        keys.append(name)
    if len(keys) > 1:
        raise InvalidArguments(
            f"malformed shortcut {text!r}: more than one non-modifier key "
            f"({', '.join(keys)}); send them as separate shortcuts"
        )
    if not keys:
        # a lone modifier ("shift") or modifiers only: press the last one as the key
        return Combo(tuple(mods[:-1]), mods[-1])
    return Combo(tuple(mods), keys[0])
