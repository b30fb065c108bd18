"""A window's rendering, made once for the same nodes rendered alike.

A read of a window nothing changed hands out the same nodes as the read before, and says so
(``Snapshot.unchanged``, :mod:`deskpilot.desktop.skills.read_memo`); rendering them again gives
the same text (a Chromium page: ~9 ms of a warm read). The last rendering of each window is
kept with the nodes and the options it was made with, and given again — as a copy its caller
may change — for such a read of the same nodes with the same options. Any other read is
rendered (a backend may hand out nodes it changed in place: the in-memory fake does).
"""

from __future__ import annotations

from dataclasses import replace

from deskpilot.ax.render import Rendered, Renderer
from deskpilot.desktop.base import Node, Rect

#: Windows whose last rendering is kept at most (the oldest is let go first).
KEPT_WINDOWS = 16

_Options = tuple[Rect, int, bool, bool, str]


class RenderMemo:
    """The last rendering of each window (by its handle), keyed on its nodes and options."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[Node, _Options, Rendered]] = {}

    def render(
        self,
        window: str,
        root: Node,
        *,
        area: Rect,
        budget: int,
        chrome: bool,
        browser: bool,
        header: str,
        unchanged: bool,
    ) -> Rendered:
        """The window's whole tree rendered (never a zoomed part: that is made each time);
        ``unchanged``: the read says its nodes are the last read's, unchanged."""
        options: _Options = (area, budget, chrome, browser, header)
        kept = self._kept.pop(window, None)
        if unchanged and kept is not None and kept[0] is root and kept[1] == options:
            rendered = kept[2]
        else:
            rendered = Renderer(area, budget=budget, chrome=chrome, browser=browser).render(
                root, header=header
            )
        self._kept[window] = (root, options, rendered)  # the newest last
        while len(self._kept) > KEPT_WINDOWS:
            del self._kept[next(iter(self._kept))]
        return replace(
            rendered,
            ids=dict(rendered.ids),
            names=dict(rendered.names),
            roles=dict(rendered.roles),
            lines=dict(rendered.lines),
        )


#: The process's renderings (the same nodes render alike whoever asks).
RENDERINGS = RenderMemo()
