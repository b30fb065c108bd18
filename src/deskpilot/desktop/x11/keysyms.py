"""The key vocabulary (:mod:`deskpilot.desktop.ports.keys`) as X keysyms.

A key name is its keysym's name (python-xlib's default keysym groups, which the vocabulary
equals); a single character is typed as its own keysym (Latin-1 keysyms equal their code
points; any other character is its Unicode keysym, ``0x01000000 | code point``).
"""

from __future__ import annotations

from Xlib import XK, X

from deskpilot.errors import DesktopError


def keysym(name: str) -> int:
    """The keysym of a key name (or of one character); DesktopError for an unknown name."""
    sym = XK.string_to_keysym(name)
    if sym == X.NoSymbol and len(name) == 1:
        sym = char_keysym(name)
    if sym == X.NoSymbol:
        raise DesktopError(f"unknown key name {name!r}")
    return int(sym)


def char_keysym(ch: str) -> int:
    """The X keysym that types ``ch``."""
    if ch == "\n":
        return int(XK.XK_Return)
    if ch == "\t":
        return int(XK.XK_Tab)
    if ch == "\b":
        return int(XK.XK_BackSpace)
    code = ord(ch)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code  # Latin-1 keysyms equal their code points
    return 0x01000000 | code
