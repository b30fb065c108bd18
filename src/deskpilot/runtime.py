"""The door's front: :func:`open_session` is the one way to get a working :class:`ToolContext`.

::

    async with open_session(settings, surface="python") as ctx:
        result = await computer_use_tools().call("list_windows", {}, ctx)

Every surface opens its context here — ``deskpilot tool`` (``surface="cli"``), ``deskpilot run``
(``"run"``, also for native runs), ``deskpilot chat`` (``"chat"``), the MCP server (``"mcp"``, one
session per server, per-client contexts derived from it), the demo (``"demo"``) and Python
programs (``"python"``). What it guarantees, whichever surface asks:

* **the audit log is attached**: every event of every call goes to ``settings.audit_db`` first,
  then to ``observe`` (chips, JSON lines); no surface can forget the log;
* **the approver is the one given**; without one, :class:`~deskpilot.policy.NoApprover`
  declines whatever needs a person's yes (and says so) — the library never allows silently;
* calls made outside a run (a CLI tool call, a script) are grouped under one run of their own,
  started lazily with the first event and labelled ``label`` in ``deskpilot log list``;
* the named session (tracked target, element IDs) is loaded and saved on exit, unless a
  ``session`` is passed (then it is the caller's);
* the desktop is opened from the settings and closed on exit, unless a ``desktop`` is passed;
* what calls keep between them (``ctx.resources``: one browser connection for the page tools)
  lasts as long as the session and is closed with it.

Derived contexts (``dataclasses.replace(ctx, session=…, approver=…, run_id=…)``) keep the log.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from deskpilot.audit import AuditLog
from deskpilot.audit.chain import new_run_id
from deskpilot.config import Settings
from deskpilot.desktop.base import Desktop, OpenedDesktop
from deskpilot.events import Event, EventSink, discard
from deskpilot.policy import Approver, ConsequentialRules, NoApprover
from deskpilot.session import Session
from deskpilot.tools.context import SessionResources, ToolContext

__all__ = ["SessionLog", "open_desktop", "open_session", "rules_for"]


async def open_desktop(settings: Settings) -> OpenedDesktop:
    """The real desktop named by the settings, or found where they name none, through the
    backend the settings choose (:mod:`deskpilot.desktop.place`, the place every surface
    gets its desktop from)."""
    from deskpilot.desktop.place import open_here

    _here, desktop = await open_here(settings)
    return desktop


def rules_for(settings: Settings) -> ConsequentialRules:
    """The ``[consequential]`` section: the person's own verbs and shortcuts, else the
    defaults."""
    return ConsequentialRules(settings.consequential_words, settings.consequential_shortcuts)


class SessionLog:
    """The audit sink of one session: events outside a run join the session's own run.

    That run is started (``run.started`` with the label and surface) by its first event and
    finished when the session closes; a session whose events all belong to runs (``deskpilot
    run``) records no run of its own.
    """

    def __init__(self, audit: AuditLog, surface: str, label: str) -> None:
        self.audit = audit
        self.surface = surface
        self.label = label
        self.run_id = ""
        self.events = 0

    def __call__(self, event: Event) -> None:
        if not event.run_id:
            if not self.run_id:
                self.run_id = new_run_id()
                self.audit.record(
                    Event(
                        "run.started",
                        {
                            "goal": self.label,
                            "model": self.surface,
                            "window": None,
                            "surface": self.surface,
                        },
                        run_id=self.run_id,
                    )
                )
            event = Event(event.kind, event.data, self.run_id, event.images, event.ts)
            self.events += 1
        self.audit.record(event)

    def close(self) -> None:
        if self.run_id:
            self.audit.record(
                Event(
                    "run.finished",
                    {"outcome": "done", "answer": "", "steps": self.events, "reason": "closed"},
                    run_id=self.run_id,
                )
            )


@contextlib.asynccontextmanager
async def open_session(
    settings: Settings,
    *,
    surface: str,
    approver: Approver | None = None,
    observe: EventSink = discard,
    desktop: Desktop | None = None,
    session: Session | None = None,
    label: str = "",
) -> AsyncIterator[ToolContext]:
    """A ToolContext with the audit log and the approver attached (see the module docstring)."""
    own_session = session is None
    state = Session.load(settings.state_dir, settings.session) if session is None else session
    with AuditLog(settings.audit_db) as audit:
        log = SessionLog(audit, surface, label or f"{surface} session")
        own_desktop = desktop is None
        resources = SessionResources()
        desk = desktop if desktop is not None else await open_desktop(settings)
        ctx = ToolContext(
            desktop=desk,
            settings=settings,
            audit=log,
            session=state,
            approver=approver if approver is not None else NoApprover(),
            observe=observe,
            surface=surface,
            rules=rules_for(settings),
            resources=resources,
            step_frames=settings.step_frames,
        )
        try:
            yield ctx
        finally:
            try:
                try:
                    await resources.close()
                finally:
                    if own_session:
                        state.save()
            finally:
                try:
                    log.close()
                finally:
                    if own_desktop:
                        await desk.close()
