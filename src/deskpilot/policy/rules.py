"""Consequential acts recognised by an element's name or a shortcut.

:class:`ConsequentialRules` holds the words (``[consequential] words`` in the config replaces
them) and the shortcuts that send or submit; the door asks them about every element a call
activates and every shortcut it presses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from deskpilot.desktop.keys import MODIFIERS, parse_shortcut
from deskpilot.errors import InvalidArguments

#: Element names whose activation is consequential (whole-word, case-insensitive).
DEFAULT_CONSEQUENTIAL_WORDS: tuple[str, ...] = (
    "Send",
    "Submit",
    "Buy",
    "Pay",
    "Purchase",
    "Order",
    "Checkout",
    "Delete",
    "Remove",
    "Erase",
    "Publish",
    "Post",
    "Confirm",
    "Transfer",
    "Sign",
    "Approve",
    "Accept",
    "Uninstall",
    "Format",
    "Empty Trash",
    "Reply",
    "Tweet",
    "Share",
    "Discard",
)

#: Shortcuts that send or submit in common apps (ctrl+enter sends mail/chat).
DEFAULT_CONSEQUENTIAL_SHORTCUTS: tuple[str, ...] = ("ctrl+return", "ctrl+enter", "alt+s")


class ConsequentialRules:
    """Recognise consequential acts by the name of the element or the shortcut."""

    def __init__(
        self,
        words: Iterable[str] | None = None,
        shortcuts: Iterable[str] | None = None,
    ) -> None:
        self.words = tuple(words) if words is not None else DEFAULT_CONSEQUENTIAL_WORDS
        given = shortcuts if shortcuts is not None else DEFAULT_CONSEQUENTIAL_SHORTCUTS
        # compared as parsed keys: "cmd+enter", "control+Return" and "ctrl+KP_Enter" are all
        # ctrl+Return
        self.shortcuts = {c for c in map(_parsed, given) if c is not None}
        alts = "|".join(re.escape(w) for w in sorted(self.words, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![\w])({alts})(?![\w])", re.IGNORECASE) if alts else None

    def element_reason(self, name: str) -> str | None:
        if self._pattern is None or not name:
            return None
        m = self._pattern.search(name)
        return f'activates "{name}" (matches "{m.group(1)}")' if m else None

    def shortcut_reason(self, shortcut: str) -> str | None:
        parsed = _parsed(shortcut)
        return self._reason(parsed, shortcut)

    def keys_reason(self, keysyms: Sequence[str], shown: str) -> str | None:
        """The same for keys already resolved to X keysyms (modifiers first)."""
        mods = frozenset(k for k in keysyms if k in _MODIFIER_SYMS)
        rest = [k for k in keysyms if k not in _MODIFIER_SYMS]
        parsed = (mods, _key(rest[0])) if len(rest) == 1 else None
        return self._reason(parsed, shown)

    def _reason(self, parsed: tuple[frozenset[str], str] | None, shown: str) -> str | None:
        if parsed is None or parsed not in self.shortcuts:
            return None
        return f"shortcut {shown} may send or submit"


_MODIFIER_SYMS = frozenset(MODIFIERS.values())


def _key(keysym: str) -> str:
    return "return" if keysym in ("Return", "KP_Enter") else keysym.lower()


def _parsed(shortcut: str) -> tuple[frozenset[str], str] | None:
    """A shortcut as (modifier keysyms, key) for comparison; None if it does not parse."""
    try:
        combo = parse_shortcut(shortcut)
    except InvalidArguments:
        return None
    return frozenset(combo.modifiers), _key(combo.key)
