"""What a tool call runs with: the desktop, settings, session, approver and event sink."""

from __future__ import annotations

from dataclasses import dataclass, field

from deskpilot.config import Settings
from deskpilot.desktop.base import Desktop
from deskpilot.events import EventSink, discard
from deskpilot.policy import AllowAll, Approver, ConsequentialRules
from deskpilot.session import Session


@dataclass
class ToolContext:
    desktop: Desktop
    settings: Settings
    session: Session = field(default_factory=Session)
    approver: Approver = field(default_factory=AllowAll)
    emit: EventSink = discard
    run_id: str = ""
    #: the window a background run is bound to (resolution step 3), if any
    fallback_window: str | None = None
    rules: ConsequentialRules = field(default_factory=ConsequentialRules)
    #: notes for the model gathered during one call (e.g. the target window changed)
    notices: list[str] = field(default_factory=list)
