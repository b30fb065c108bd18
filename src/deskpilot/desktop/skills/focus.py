"""Keyboard focus, checked: give an element the focus and wait until it says it has it.

Apps take the focus asynchronously (Chromium does): typing right after asking would go to the
previous field, so every skill that types into an element first waits for its ``focused``
state.
"""

from __future__ import annotations

from deskpilot.desktop.ports.accessibility import Accessibility
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.settle import until


async def has_focus(a11y: Accessibility, key: ElementKey, timeout: float = 1.5) -> bool:
    """Whether the element reports FOCUSED within ``timeout`` seconds."""

    async def has() -> bool:
        now = await a11y.inspect(key)
        return now is not None and "focused" in now.states

    return await until(a11y, has, timeout)  # checked again at each event the app sends


async def take_focus(a11y: Accessibility, key: ElementKey) -> bool:
    """Give the element the focus (no pointer), then wait until it reports FOCUSED. An
    element that has it already is not asked; the answer of the ask is not trusted either way
    (GTK 4 answers False and focuses): the element's FOCUSED state is."""
    now = await a11y.inspect(key)
    if now is not None and "focused" in now.states:
        return True
    asked = await a11y.grab_focus(key)
    return await has_focus(a11y, key, timeout=1.5 if asked else 0.5)
