"""How action results name elements and say how an action was carried out."""

from __future__ import annotations

from deskpilot.ax.roles import INTERACTIVE, TEXTUAL, clean_name
from deskpilot.desktop.base import ActionOutcome, LiveElement
from deskpilot.session import ElementRecord
from deskpilot.tools.context import ToolContext


def describe(live: LiveElement, record: ElementRecord | None = None) -> str:
    """``button "Send"``: the role and name a read showed for it (``record``), else the short
    role of the live element and its name."""
    if record is not None and record.shown_role:
        return f'{record.shown_role} "{record.label}"' if record.label else record.shown_role
    role = INTERACTIVE.get(live.role, TEXTUAL.get(live.role, live.role))
    name = clean_name(live.name)
    return f'{role} "{name}"' if name else role


def shown(ctx: ToolContext, eid: str, live: LiveElement) -> str:
    """How the read showed element ``eid`` (``clickable "START"``)."""
    return describe(live, ctx.session.elements.get(eid))


def how(outcome: ActionOutcome) -> str:
    """``via AT-SPI action 'click' (the window was not activated)``, or the raw input and
    its activation."""
    if outcome.method == "atspi":
        return f"via {outcome.detail} (the window was not activated)"
    text = f"via keyboard/pointer input ({outcome.detail})"
    if outcome.activated:
        text += "; the window was activated for it"
        if outcome.restored:
            text += f" and {outcome.restored} was re-activated afterwards"
    return text
