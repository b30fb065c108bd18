"""How action results name elements and say how an action was carried out."""

from __future__ import annotations

from deskpilot.ax.roles import INTERACTIVE, TEXTUAL, clean_name
from deskpilot.desktop.base import ActionOutcome, LiveElement


def describe(live: LiveElement) -> str:
    """``button "Send"``: the short role a read shows and the element's name."""
    role = INTERACTIVE.get(live.role, TEXTUAL.get(live.role, live.role))
    name = clean_name(live.name)
    return f'{role} "{name}"' if name else role


def how(outcome: ActionOutcome) -> str:
    """``via AT-SPI action 'click' (no focus change)``, or the raw input and its activation."""
    if outcome.method == "atspi":
        return f"via {outcome.detail} (no focus change)"
    text = f"via keyboard/pointer input ({outcome.detail})"
    if outcome.activated:
        text += "; the window was activated for it"
        if outcome.restored:
            text += f" and {outcome.restored} was re-activated afterwards"
    return text
