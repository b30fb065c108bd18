"""What a frozen or vanished app means, said to the model in the app's name.

A stopped or hung app answers no AT-SPI call: each call gives up after its timeout
(:class:`~deskpilot.errors.NotAnswering`), and a read finds nothing. An app killed mid-call
leaves the bus: the call fails at once and its window is gone. Inside :func:`answering` both
become tool errors that name the app and say what was done and what to do —
:class:`~deskpilot.errors.AppNotResponding` and :class:`~deskpilot.errors.AppClosed` — instead
of a D-Bus error name.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from deskpilot.desktop.base import Snapshot, WindowInfo
from deskpilot.errors import (
    ActionCutOff,
    AppClosed,
    AppGone,
    AppNotResponding,
    DesktopError,
    ElementGone,
    NotAnswering,
)
from deskpilot.tools.context import ToolContext


@contextlib.asynccontextmanager
async def answering(
    ctx: ToolContext, window: WindowInfo, then: str = AppNotResponding.NOTHING_DONE
) -> AsyncIterator[None]:
    """Turn "the app does not answer" and "the app went away" into the errors above; ``then``
    is what the model is told became of the call when the app did not answer."""
    try:
        yield
    except NotAnswering as exc:
        raise AppNotResponding(window.app.name, window.stable_id, then) from exc
    except AppGone as exc:
        cut = isinstance(exc, ActionCutOff)
        raise AppClosed(window.app.name, window.stable_id, cut_off=cut) from exc
    except (DesktopError, ElementGone) as exc:
        if not any(w.handle == window.handle for w in await ctx.desktop.list_windows()):
            raise AppClosed(window.app.name, window.stable_id) from exc
        raise


@contextlib.asynccontextmanager
async def before_sending(window: WindowInfo) -> AsyncIterator[None]:
    """The checks made before an action is sent (the element looked up, its cover tested): an
    app that leaves the bus here did nothing of the action, and its window's closing is not
    the action's effect (:class:`~deskpilot.errors.ActionCutOff`)."""
    try:
        yield
    except ActionCutOff:
        raise
    except AppGone as exc:
        raise ActionCutOff(f"{window.app.name} left before the action was sent") from exc


def check_answered(snap: Snapshot) -> None:
    """Raise NotAnswering when a read found nothing because the app did not answer."""
    if snap.unanswered:
        raise NotAnswering(f"{snap.window.app.name} did not answer its accessibility calls")
