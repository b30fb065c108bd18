"""Bars folded away until the pointer moves, read with their hidden content.

A media player's transport bar in a GTK 3 ``GtkRevealer`` (Parole's, Celluloid's) slides away
when the pointer rests: the revealer still shows, folded to a line one pixel thick, and its
content is VISIBLE but not SHOWING. A read walks only what shows, so the bar's controls were
not even in the tree, and nothing could tell they exist. :func:`folded` finds such folds among
the shown nodes (their extents fetched); the frame reader reads their content whole, so the
snapshot holds it (off screen, as it is: the renderer leaves it out) and the read tool can
bring the bar back with a hover (:mod:`deskpilot.tools.revealing`).
"""

from __future__ import annotations

from collections.abc import Iterable

from deskpilot.desktop.atspi.model import AppTree

#: A folded bar is at most this thick (px) ...
FOLDED = 2
#: ... and at least this long.
BAR_LENGTH = 40
#: Folds read per window read, at most.
MAX_FOLDS = 4


def folded(app: AppTree, shown: Iterable[str]) -> list[str]:
    """The shown containers folded to a line whose children are there but hidden: visible,
    not on screen."""
    out: list[str] = []
    for path in shown:
        ext = app.nodes[path].extents
        if ext is None or not app.shown(path) or not app.uses_showing:
            continue
        _x, _y, w, h = ext
        if not ((h <= FOLDED and w >= BAR_LENGTH) or (w <= FOLDED and h >= BAR_LENGTH)):
            continue
        kids = app.children_of(path)
        if any(app.nodes[k].displayed and not app.shown(k) for k in kids):
            out.append(path)
            if len(out) >= MAX_FOLDS:
                break
    return out
