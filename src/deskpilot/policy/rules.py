"""Consequential acts: the judge of effects, the user's words, and the shortcuts that send.

:class:`ConsequentialRules` holds the :class:`~deskpilot.policy.effects.Judge` (built-in
multilingual verbs, or the user's ``[consequential] words`` instead) and the shortcuts that
send or submit (ctrl+Enter, alt+s); the door asks them about every element a call activates
and every key it sends.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from deskpilot.desktop.keys import MODIFIERS, parse_shortcut
from deskpilot.errors import ConfigError, InvalidArguments
from deskpilot.policy.effects import Judge
from deskpilot.policy.vocabulary import DRAFTS, VERBS

#: The built-in verbs of every effect class, all languages (``[consequential] words``
#: replaces them; places and keys are judged either way).
DEFAULT_CONSEQUENTIAL_WORDS: tuple[str, ...] = (*(w for ws in VERBS.values() for w in ws), *DRAFTS)

#: Shortcuts that send or submit in common apps (ctrl+enter sends mail/chat).
DEFAULT_CONSEQUENTIAL_SHORTCUTS: tuple[str, ...] = ("ctrl+return", "ctrl+enter", "alt+s")


class ConsequentialRules:
    """Recognise consequential acts by effect (:attr:`judge`) and by shortcut."""

    def __init__(
        self,
        words: Iterable[str] | None = None,
        shortcuts: Iterable[str] | None = None,
    ) -> None:
        self.words = tuple(words) if words is not None else DEFAULT_CONSEQUENTIAL_WORDS
        self.judge = Judge(words)
        #: the user's own list (``[consequential] shortcuts``): asked about always; the
        #: defaults only where the focused element cannot be judged
        self.custom_shortcuts = shortcuts is not None
        given = tuple(shortcuts) if shortcuts is not None else DEFAULT_CONSEQUENTIAL_SHORTCUTS
        bad = [s for s in given if _parsed(s) is None]
        if bad:
            raise ConfigError(
                f"[consequential] shortcuts: {', '.join(map(repr, bad))} "
                f"{'is not a shortcut' if len(bad) == 1 else 'are not shortcuts'} (write them "
                "as deskpilot's shortcut action takes them: 'ctrl+return', 'alt+s')"
            )
        # compared as parsed keys: "cmd+enter", "control+Return" and "ctrl+KP_Enter" are all
        # ctrl+Return
        self.shortcuts = {c for c in map(_parsed, given) if c is not None}

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
