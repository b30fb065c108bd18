"""A read brings back bars that hide until the pointer moves (ax/revealers.py), and says so.

A media player's transport bar folds away when the pointer rests: a read then showed none of
its controls. When a read finds such a fold, the pointer is moved onto its line (from a few
pixels away: a move to where it already is sends no motion), as a person does to see the
controls, and the window is read again once the bar shows. The read says what was done, and
that the bar will hide again. A fold that a hover did not open is not hovered again in the
session (it is something else: a collapsed notification), so reads of its window stay quick.
"""

from __future__ import annotations

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.ax.revealers import hidden_bars, hover_point
from deskpilot.desktop.base import Node, Snapshot, WindowInfo
from deskpilot.errors import DesktopError
from deskpilot.tools.context import ToolContext

#: How long a bar is given to slide in after the hover (GTK's revealer: 250 ms by default).
SHOW_WAIT_S = 1.5
#: How far away the pointer starts its move onto the bar.
APPROACH_PX = 8


def _key(node: Node) -> str:
    return f"{node.key[0]} {node.key[1]}"


async def reveal_bars(ctx: ToolContext, window: WindowInfo, snap: Snapshot) -> tuple[Snapshot, str]:
    """The snapshot to render (read again when a hover showed a hidden bar) and the note the
    read carries about it ("" when nothing was done)."""
    if snap.root is None:
        return snap, ""
    tried = ctx.session.unrevealed
    bars = [(bar, up) for bar, up in hidden_bars(snap.root) if _key(bar) not in tried]
    if not bars:
        return snap, ""
    bar, parent = bars[0]
    point = hover_point(bar, parent, window.geometry)
    if point is None:
        tried.add(_key(bar))
        return snap, ""
    x, y = point
    try:
        await ctx.desktop.pointer_move(x, y - APPROACH_PX if y - APPROACH_PX > 0 else y + 1)
        await ctx.desktop.pointer_move(x, y)
    except DesktopError:
        return snap, ""

    async def shown() -> Snapshot | None:
        again = await ctx.desktop.snapshot(window)
        node = again.find(bar.key)
        if node is None or node.bounds is None:
            return None
        b = node.bounds
        return again if b.height > 2 and b.width > 2 else None

    try:
        again = await async_wait_for(shown, timeout=SHOW_WAIT_S, what="the hidden bar to show")
    except WaitTimeout:
        tried.add(_key(bar))
        return snap, ""
    note = (
        f"(a bar that hides while the pointer rests was shown by moving the pointer to "
        f"({x}, {y}); it hides again when the pointer rests: act on its controls now, or "
        f"move the pointer there again (perform hover) and read)"
    )
    return again, note
