"""What a tool call runs with: the desktop, settings, session, approver, and where events go.

A ToolContext is made by :func:`deskpilot.runtime.open_session` (the one way in, which attaches
the audit log and the approver); surfaces derive per-client or per-run contexts from it with
``dataclasses.replace`` (another session, approver or run id), which keeps the audit log.

``ctx.resources`` holds what a session keeps between calls (the page tools' browser
connection); :func:`~deskpilot.runtime.open_session` closes it with the session. A context
made by hand has none: each call then opens and closes what it needs.

``ctx.emit(event)`` writes the event to the audit log first (``audit``) and then shows it to
whoever watches (``observe``: chips, JSON lines, a run's progress notes). An observer sees only
what was recorded, and nothing it does changes the record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from deskpilot.config import Settings
from deskpilot.desktop.base import Desktop
from deskpilot.events import Event, EventSink, discard
from deskpilot.policy import Approver, ConsequentialRules, NoApprover
from deskpilot.session import Session

_log = logging.getLogger(__name__)
T = TypeVar("T", bound="Closeable")


class Closeable(Protocol):
    async def close(self) -> None: ...


class SessionResources:
    """Things kept from one tool call to the next within a session, closed with it."""

    def __init__(self) -> None:
        self._items: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[], T]) -> T:
        """The item kept under ``key``, made by ``make`` the first time."""
        if key not in self._items:
            self._items[key] = make()
        return cast(T, self._items[key])

    async def close(self) -> None:
        items, self._items = list(self._items.values()), {}
        for item in items:
            try:
                await item.close()
            except Exception:  # one resource failing to close must not keep the others open
                _log.warning("could not close %r", item, exc_info=True)


@dataclass
class ToolContext:
    desktop: Desktop
    settings: Settings
    #: the audit log (every event is written here before anyone else sees it)
    audit: EventSink
    session: Session = field(default_factory=Session)
    #: who answers what needs a yes; the default asks nobody and so declines
    approver: Approver = field(default_factory=NoApprover)
    #: who else sees the events, after the log (chips, JSON lines, progress notes)
    observe: EventSink = discard
    #: which surface opened the session ("cli", "python", "run", "chat", "mcp", "demo", …)
    surface: str = "python"
    run_id: str = ""
    #: the window a background run is bound to (resolution step 3), if any
    fallback_window: str | None = None
    rules: ConsequentialRules = field(default_factory=ConsequentialRules)
    #: notes for the model gathered during one call (e.g. the target window changed)
    notices: list[str] = field(default_factory=list)
    #: what the session keeps between calls (None: nothing is kept; each call connects anew)
    resources: SessionResources | None = None
    #: record a small frame of the session's window after each call that took no picture
    #: (``tool.frame`` events: the console's replay; :mod:`deskpilot.tools.frames`)
    step_frames: bool = False

    def emit(self, event: Event) -> None:
        """Record ``event`` in the audit log, then show it to the observers."""
        self.audit(event)
        self.observe(event)
