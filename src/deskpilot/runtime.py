"""Wiring for one process: open the desktop, load the session, build the ToolContext."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from deskpilot.config import Settings, resolve_desktop
from deskpilot.desktop.base import Desktop
from deskpilot.events import EventSink, discard
from deskpilot.policy import AllowAll, Approver, ConsequentialRules
from deskpilot.session import Session
from deskpilot.tools.context import ToolContext


async def open_desktop(settings: Settings) -> Desktop:
    """The real desktop named by the settings, or found where they name none
    (:func:`~deskpilot.config.resolve_desktop`)."""
    from deskpilot.desktop.linux import LinuxDesktop

    return await LinuxDesktop.open(resolve_desktop(settings))


def rules_for(settings: Settings) -> ConsequentialRules:
    return ConsequentialRules(settings.consequential_words)


@contextlib.asynccontextmanager
async def tool_context(
    settings: Settings,
    *,
    approver: Approver | None = None,
    emit: EventSink = discard,
    persist_session: bool = True,
    desktop: Desktop | None = None,
) -> AsyncIterator[ToolContext]:
    """A ToolContext on the configured desktop with the named session; saved on exit."""
    session = (
        Session.load(settings.state_dir, settings.session)
        if persist_session
        else Session(name=settings.session)
    )
    own = desktop is None
    desk = desktop if desktop is not None else await open_desktop(settings)
    ctx = ToolContext(
        desktop=desk,
        settings=settings,
        session=session,
        approver=approver or AllowAll(),
        emit=emit,
        rules=rules_for(settings),
    )
    try:
        yield ctx
    finally:
        try:
            session.save()
        finally:
            if own:
                await desk.close()
