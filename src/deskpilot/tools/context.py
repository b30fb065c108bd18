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

``ctx.grants`` are the grants of the task the context runs; :func:`persons_goal` begins a task
with the person's own goal (a run's goal, a chat turn, a console session's goal, an eval task's
instruction) and ends it: what the goal names is allowed without asking while it runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from deskpilot.config import Settings
from deskpilot.desktop.base import Desktop
from deskpilot.events import Event, EventSink, discard
from deskpilot.policy import Approver, ConsequentialRules, NoApprover, TaskGrants
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
    #: the grants of the task this context runs (the person's goal, a yes for the task); a
    #: derived context shares them (give one its own for another task: a new TaskGrants)
    grants: TaskGrants = field(default_factory=TaskGrants)
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


@contextlib.contextmanager
def persons_goal(ctx: ToolContext, goal: str) -> Iterator[ToolContext]:
    """Run a task on ``goal``, the person's own words: its grants hold until the block ends
    (``policy.grants``, recorded under the task's run id — made here when ``ctx`` has none —
    right after the run's ``run.started``, else with its first decision). Never for a goal a
    model wrote: that grants nothing by itself."""
    if not ctx.run_id:
        ctx = dataclasses.replace(ctx, run_id=uuid.uuid4().hex[:16])
    run_id = ctx.run_id

    def record(kind: str, data: dict[str, Any]) -> None:
        ctx.emit(Event(kind, data, run_id=run_id))

    ctx.grants.begin(
        goal,
        source=ctx.surface,
        record=record,
        announce=False,
        custom_words=ctx.settings.consequential_words,
    )
    try:
        yield ctx
    finally:
        ctx.grants.end()
