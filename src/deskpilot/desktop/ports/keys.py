"""The key vocabulary: names of keys that mean the same key on every backend.

A key is named by its traditional X keysym spelling (``Return``, ``Escape``, ``Page_Down``,
``F5``, ``KP_0``, ``Control_L``, ``a``, ``eacute``; the full list is
:data:`~deskpilot.desktop.ports.keynames.NAMES`), or by the single character it types. That
is the spelling models emit (Anthropic's ``key`` action takes xdotool's names) and the one
audit logs and saved sessions already hold, so it is deskpilot's own vocabulary — owned here as
data, not borrowed from a platform library. Each backend maps a name to its own codes: X11 to
keysyms (:mod:`deskpilot.desktop.x11.keysyms`), a compositor's virtual keyboard to XKB
keysyms, macOS to ``CGKeyCode`` s, Windows to virtual-key codes; a name a backend cannot send is
its :class:`~deskpilot.errors.DesktopError` at the time of sending.

The shortcut grammar a model writes (``"ctrl+shift+t"``) is :mod:`deskpilot.desktop.keys`.
"""

from __future__ import annotations

from collections.abc import Sequence

from deskpilot.desktop.ports.keynames import CHAR_NAMES, NAMES
from deskpilot.errors import DesktopError

#: The modifier keys, as held by pointer actions and pressed first in combinations.
MODIFIER_KEYS = frozenset(
    {"Control_L", "Control_R", "Shift_L", "Shift_R", "Alt_L", "Alt_R", "Super_L", "Super_R",
     "Meta_L", "Meta_R", "Hyper_L", "Hyper_R", "ISO_Level3_Shift"}
)  # fmt: skip


def is_key_name(name: str) -> bool:
    """Whether ``name`` is a key of the vocabulary (not a character: see :func:`sendable`)."""
    return name in NAMES


def char_key(ch: str) -> str | None:
    """The name of the key that types the printable Latin-1 character ``ch`` (``"!"`` →
    ``"exclam"``), or None."""
    return CHAR_NAMES.get(ch)


def sendable(name: str) -> bool:
    """Whether a backend is asked to send ``name``: a key of the vocabulary, or one character
    (typed as that character, whatever key produces it)."""
    return name in NAMES or len(name) == 1


def check_keys(names: Sequence[str]) -> None:
    """Raise DesktopError for the first name that is neither a key nor one character."""
    for name in names:
        if not sendable(name):
            raise DesktopError(f"unknown key name {name!r}")
