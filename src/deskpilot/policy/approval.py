"""What needs a person's yes: declared tool risk, consequential-action rules, injected approvers.

Risk is declared where a tool is defined (``@tool(risk=...)``); a tool may raise it for one call
(``perform`` on a button named "Send" is consequential). The confirm mode decides what is asked:
``all`` acting tools, ``consequential`` ones (the default), or ``none``. An :class:`Approver`
answers; with nobody to ask, what needs asking is denied: the default approver of a session
(:class:`NoApprover`) declines everything and says so. An approver declines by returning False,
or by raising :class:`~deskpilot.errors.ActionDeclined` with the text the model should read.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from deskpilot.config import ConfirmMode
from deskpilot.desktop.keys import MODIFIERS, parse_shortcut
from deskpilot.errors import ActionDeclined, InvalidArguments


class Risk(StrEnum):
    READ_ONLY = "read-only"  # only looks
    ACTS = "acts"  # changes the UI (clicks, typing) but nothing beyond it by itself
    CONSEQUENTIAL = "consequential"  # sends, pays, deletes, publishes…
    PERSISTS = "persists"  # writes something lasting (files, settings)

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Risk.READ_ONLY: 0, Risk.ACTS: 1, Risk.CONSEQUENTIAL: 2, Risk.PERSISTS: 2}

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


@dataclass(frozen=True)
class ApprovalRequest:
    tool: str
    args: Mapping[str, Any]
    risk: Risk
    reason: str  # why this needs a yes, in one line
    call_id: str = ""
    details: tuple[str, ...] = field(default=())  # extra lines to show (warnings, targets)


class Approver(Protocol):
    """Decides one request. Return True only on an explicit yes."""

    async def approve(self, request: ApprovalRequest) -> bool: ...


class AllowAll:
    """Approve everything (trusted sandboxes, or a person who typed the command themselves)."""

    async def approve(self, request: ApprovalRequest) -> bool:
        return True


class DenyAll:
    """Approve nothing: what needs a yes is declined."""

    async def approve(self, request: ApprovalRequest) -> bool:
        return False


class NoApprover:
    """The default: nobody is there to ask, so what needs a yes is declined (and says why)."""

    async def approve(self, request: ApprovalRequest) -> bool:
        raise ActionDeclined(
            f"Declined: {request.tool} needs a person's yes ({request.reason}) and nobody can be "
            "asked here (this session has no approver). Nothing was done. Do not retry it; "
            "continue without it or report that it needs the user's approval."
        )


class CallbackApprover:
    """Ask a callback (sync or async) for each request."""

    def __init__(self, callback: Callable[[ApprovalRequest], bool | Awaitable[bool]]) -> None:
        self.callback = callback

    async def approve(self, request: ApprovalRequest) -> bool:
        answer = self.callback(request)
        if not isinstance(answer, bool):
            answer = await answer
        return answer is True


def needs_confirmation(risk: Risk, mode: ConfirmMode) -> bool:
    if mode == "none" or risk is Risk.READ_ONLY:
        return False
    if mode == "all":
        return True
    return risk.rank >= Risk.CONSEQUENTIAL.rank


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
