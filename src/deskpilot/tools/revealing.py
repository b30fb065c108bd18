"""A read brings back bars that hide until the pointer moves (ax/revealers.py), and says so.

A media player's transport bar folds away when the pointer rests: a read then showed none of
its controls. When a read finds such a fold, the pointer is moved onto its line, as a person
does to see the controls: from a point of the window outside the bar's parent (the video), so
that it enters it (Parole shows its bar on entry, not on a move inside), else from where it is
(a few pixels along the line when it is there already: toolkits compress motion to its last
place, so a move that ends where it started is none), and the window is read
again once the bar shows. The read says what was done, and that the bar will hide again. A
fold that a hover did not open is not hovered again in the session (it is something else: a
collapsed notification), so reads of its window stay quick. Where another window covers the
fold, nothing is hovered. A bar not brought back is listed with its controls marked
``hidden`` (ax/render.py): they exist and act by ID.
"""

from __future__ import annotations

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.ax.revealers import hidden_bars, hover_point
from deskpilot.desktop.base import Node, Snapshot, WindowInfo
from deskpilot.errors import DesktopError
from deskpilot.tools.context import ToolContext

#: How long a bar is given to slide in after the hover (GTK's revealer: 250 ms by default).
SHOW_WAIT_S = 1.5
#: How far along the bar the pointer goes when it is already at the bar's hover point.
NUDGE_PX = 3


def _outside(area: Node, window: WindowInfo) -> tuple[int, int] | None:
    """A point of the window outside ``area`` (the bar's parent: the video), where the
    pointer's move onto the bar starts, so that it enters the area (Parole shows its bar when
    the pointer enters the video, not when it moves inside it); None when the area fills the
    window."""
    g, b = window.geometry, area.bounds
    if b is None:
        return None
    for x, y in ((g.x + 1, g.y + 1), (g.x + g.width - 2, g.y + 1), (g.x + 1, g.y + g.height - 2)):
        if not b.contains(x, y):
            return x, y
    return None


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
        hit = await ctx.desktop.window_at(x, y)
        if hit is not None and hit.handle != window.handle:
            return snap, ""  # another window covers it: no hover over another app
        outside = _outside(parent, window)
        if outside is not None:  # the pointer comes in: some players show their bar on entry
            await ctx.desktop.pointer_move(*outside)
        elif await ctx.desktop.pointer_position() == (x, y):
            # toolkits compress motion to its last place: ending where the pointer already
            # is would be no move at all
            x = x - NUDGE_PX if x - NUDGE_PX > window.geometry.x else x + NUDGE_PX
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
