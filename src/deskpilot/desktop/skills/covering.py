"""What covers an element of a web page where a person would click it (a modal, an overlay).

A toolkit's element can be drawn under another of the same window (overlapping shapes in a
presentation, a placeholder under a box, an overlaid widget): the later sibling — of it or of
an ancestor — that shows and holds the point a person would click covers it (toolkits draw
children in order; their hit-tests return the first child holding the point, not the one on
top). On a page, the element is hit-tested at the centre of its visible part and of its text;
when the element hit there is neither the element, nor inside it, nor one of its ancestors,
the outermost ancestor of the hit that the element does not share is what covers it, and it is
described by its tag, classes, id and words (``div.modal#consent "Accept cookies"``). A
``<select>``'s items pop up over the page, outside its hit test: they are never covered. A
field's own label drawn over it (a floating label: ``<label for>``, ``aria-labelledby``) is no
cover either.
"""

from __future__ import annotations

import asyncio
import itertools
import time

from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey, WindowHandle
from deskpilot.desktop.skills.aiming import Aiming, overlap, visible_center
from deskpilot.desktop.skills.hits import HitTests
from deskpilot.desktop.skills.tab_closers import tab_of
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

#: Roles of the boxes that only hold others: drawn over a widget, they do not take its clicks.
CONTAINERS = frozenset({
    "panel", "filler", "layered-pane", "scroll-pane", "viewport", "grouping", "section",
    "split-pane", "root-pane", "glass-pane", "redundant-object", "unknown", "invalid", "frame",
    "window", "form", "tool-bar", "status-bar", "page-tab-list", "page-tab", "internal-frame",
    "desktop-frame", "option-pane", "scroll-bar", "separator", "label", "static", "image",
    "icon", "tooltip", "notification", "embedded", "document-frame",
})  # fmt: skip
#: Ancestors whose later siblings are looked at; more siblings than this: laid out apart.
MAX_LEVELS = 16
MAX_SIBLINGS = 64
#: How deep a bare GTK box drawn over the element is looked into for a control there, and
#: the roles of such boxes (GtkBox, GtkGrid, GtkOverlay's children).
INSIDE_LEVELS = 3
BOXES = frozenset({"filler", "panel"})
#: Roles, and GTK 4's names, of what is drawn in a surface of its own above its window.
POPUPS = frozenset({"menu", "popup-menu", "window", "dialog", "alert", "frame", "tool-tip"})
POPOVERS = frozenset({"GtkPopover", "GtkPopoverMenu"})
#: How long a toolkit element found uncovered stays so, at most, while no event came (the
#: cover check's answer is the click's, within one action).
FRESH_S = 1.0


class Covering:
    """Finding and describing what covers an element (see the module docstring)."""

    def __init__(self, ports: Ports, aiming: Aiming, hits: HitTests) -> None:
        self.a11y = ports.a11y
        self.aiming = aiming
        self.hits = hits
        #: the last toolkit element found uncovered: ((window, element), when, events seen)
        self._clear: tuple[tuple[WindowHandle, ElementKey], float, int] | None = None

    async def covering(self, window: WindowInfo, key: ElementKey) -> str | None:
        key = tab_of(key) or key  # a GTK 3 tab's drawn close button: its tab, on the bus
        if not await self.a11y.web_engine(window):
            seen = self.a11y.events_seen()
            over = await self._drawn_over(window, key)
            # the events seen before the check: one that came during it voids the answer
            self._clear = ((window.handle, key), time.monotonic(), seen) if over is None else None
            return over
        origin = await self.a11y.origin(window)
        rect = await self.a11y.extents(key)
        if origin is None or rect is None or rect.empty:
            return None
        rect = rect.offset(*origin)
        points = [visible_center(rect, window.geometry)]
        text = await self.a11y.text_extents(key)
        if text is not None:
            # its text first: where the click aims (:mod:`.aiming`), so the click reuses the
            # answer (:mod:`.hits`)
            points.insert(
                0, visible_center(text.offset(*origin), overlap(rect, window.geometry) or rect)
            )
        # the target's ancestors are asked only when a hit is not the target or inside it
        # (one question a level): the common case, nothing over it, costs no walk
        mine: list[ElementKey] | None = None
        cover: ElementKey | None = None
        for point in dict.fromkeys(p for p in points if p is not None):
            hit = await self.hits.element_at(window, *point)  # the click's, when it is there
            if hit is None:
                return None
            chain = await self._lineage(hit.key, until=key)
            if key in chain:
                return None  # the target, or inside it: a person reaches it at this point
            if mine is None:
                mine = await self._lineage(key)
                if await self._in_popup(mine[1:3]):
                    return None  # a <select>'s list pops up over the page, outside its hit test
            top = self._coverer(hit.key, chain, mine)
            if top is None:
                return None  # one of its ancestors: a person reaches it at this point
            if await self._own_label(key, chain[: chain.index(top) + 1]):
                return None  # its own label drawn over it (a floating label): no cover
            cover = cover or top
        return await self._describe(cover) if cover is not None else None

    async def uncovered(self, window: WindowInfo, key: ElementKey) -> bool:
        """Whether nothing of its window is drawn over the toolkit element where a person
        would click it: the cover check's answer when it found none and nothing happened
        since (no accessibility event, within FRESH_S), else asked now."""
        if self._clear is not None:
            was, when, events = self._clear
            if (
                was == (window.handle, key)
                and events == self.a11y.events_seen()
                and time.monotonic() - when < FRESH_S
            ):
                return True
        return await self.covering(window, key) is None

    async def drawn_under(self, hit: ElementKey, key: ElementKey) -> bool:
        """Whether ``hit`` (what a toolkit's hit-test found at the element's point) is drawn
        before ``key``: in an earlier branch at their nearest common ancestor. GTK 3's
        hit-test returns the first child holding the point, so an element laid over another
        is found as the one under it."""
        mine, theirs = await self._lineage(key), await self._lineage(hit)
        common = next((k for k in theirs if k in mine), None)
        if common is None or common in (key, hit):
            return False
        ours, other = mine[mine.index(common) - 1], theirs[theirs.index(common) - 1]
        try:
            siblings = await self.a11y.children(common)
        except (ElementCallFailed, NotAnswering):
            return False
        return (
            ours in siblings and other in siblings and siblings.index(other) < siblings.index(ours)
        )

    async def _drawn_over(self, window: WindowInfo, key: ElementKey) -> str | None:
        """A toolkit's element under another one at the point a person would click it
        (overlapping shapes, a placeholder under another box, a widget overlaid): the
        element drawn later — a later sibling of it or of one of its ancestors, or a control
        inside such a sibling that is a bare box (a GtkOverlay's) — that shows and holds the
        point. Toolkits' own hit-tests (GTK's returns the first child holding
        the point, not the one on top) cannot tell it."""
        try:
            point = await self.aiming.element_point(window, key)
        except (ActionFailed, ElementCallFailed, NotAnswering):
            return None  # no place on screen: nothing can be over it there
        origin = await self.a11y.origin(window) or (0, 0)
        shifted = (point[0] - origin[0], point[1] - origin[1])  # as the extents give it
        mine = await self._popup_cut(await self._lineage(key, limit=MAX_LEVELS))
        pairs = list(itertools.pairwise(mine))
        # every level asked together (the calls pipelined), judged innermost first and in
        # drawing order: one round of questions for all levels, not one a level
        laters = await asyncio.gather(*(self._later(child, parent) for child, parent in pairs))
        flat = [k for later in laters for k in later or ()]
        held = dict(
            zip(
                flat,
                await asyncio.gather(
                    *(self._holds(k, shifted) for k in flat), return_exceptions=True
                ),
                strict=True,
            )
        )
        for later in laters:
            if later is None:
                return None  # this level did not answer: nothing is known to be over it
            for sibling in later:
                over = held[sibling]
                if isinstance(over, BaseException):
                    raise over
                if over is not None:
                    return await self._describe(over)
        return None

    async def _popup_cut(self, mine: list[ElementKey]) -> list[ElementKey]:
        """The lineage up to the popup the element is drawn in, if any: a menu (a combo box's
        list, a menu bar's or a button's menu), a GTK 4 popover or a window of its own is
        drawn in its own surface over its window, so what the tree lays after its ancestors
        (a dialog's buttons after a combo box) is under it, not over it. Every ancestor's
        role and name asked together."""
        ups = mine[1:]
        found = await asyncio.gather(
            *(self.a11y.role(k) for k in ups),
            *(self.a11y.name(k) for k in ups),
            return_exceptions=True,
        )
        roles, names = found[: len(ups)], found[len(ups) :]
        for i, (role, name) in enumerate(zip(roles, names, strict=True)):
            if role in POPUPS or name in POPOVERS:
                return mine[: i + 2]  # the element's side of the popup, the popup itself
        return mine

    async def _later(self, child: ElementKey, parent: ElementKey) -> list[ElementKey] | None:
        """The siblings of ``child`` drawn after it (none when ``parent`` has more than
        MAX_SIBLINGS children: a table's cells, a long list, laid out side by side); None when
        the parent does not answer."""
        try:
            if await self.a11y.child_count(parent) > MAX_SIBLINGS:
                return []
            siblings = await self.a11y.children(parent)
        except (ElementCallFailed, NotAnswering):
            return None
        return siblings[siblings.index(child) + 1 :] if child in siblings else []

    async def _holds(
        self, key: ElementKey, point: tuple[int, int], depth: int = INSIDE_LEVELS
    ) -> ElementKey | None:
        """What covers the screen point in this element drawn over the target: the element
        when it shows, holds the point and can be pressed (no bare container); in a bare
        GTK box that holds it (a GtkOverlay's box laid over a widget), the topmost of its
        children, ``depth`` levels down, that does. None when nothing there covers it."""
        # where it is first (one call; most of the siblings asked are laid out beside it),
        # what it is only for one that holds the point
        rect = await self.a11y.extents(key)
        if rect is None or rect.empty or not rect.contains(*point):
            return None
        live = await self.a11y.inspect(key)
        if live is None or not {"showing", "visible"} <= live.states:
            return None
        if live.role not in CONTAINERS or "focusable" in live.states:
            return key
        if depth <= 0 or live.role not in BOXES or not await self._gtk(key):
            return None
        try:
            if await self.a11y.child_count(key) > MAX_SIBLINGS:
                return None  # a table's cells, a long list: laid out side by side
            inside = await self.a11y.children(key)
        except (ElementCallFailed, NotAnswering):
            return None
        found = await asyncio.gather(*(self._holds(k, point, depth - 1) for k in inside))
        return next((k for k in reversed(found) if k is not None), None)  # the last drawn

    async def _gtk(self, key: ElementKey) -> bool:
        """Whether the element is a GTK widget (GTK 3 and 4 say so in its attributes): only
        GTK's boxes are looked into (LibreOffice's tool bars report boxes that do not match
        what is drawn)."""
        try:
            return (await self.a11y.attributes(key)).get("toolkit", "").casefold() == "gtk"
        except (ElementCallFailed, NotAnswering):
            return False

    async def _lineage(
        self, key: ElementKey, limit: int = 40, *, until: ElementKey | None = None
    ) -> list[ElementKey]:
        """``key`` and its ancestors, innermost first (one question a level, the walk shared
        with the aim: :meth:`~.aiming.Aiming.ancestors`); the walk ends at ``until`` when it
        meets it."""
        if until is None:
            return [key, *await self.aiming.ancestors(key, limit)]
        out = [key]
        while out[-1] != until and len(out) <= limit:
            chain = await self.aiming.ancestors(key, len(out))
            if len(chain) < len(out):
                break  # the tree ends here
            out.append(chain[len(out) - 1])
        return out

    async def _own_label(self, key: ElementKey, over: list[ElementKey]) -> bool:
        """Whether one of ``over`` (the hit and its ancestors up to what covers the element)
        labels the element: a ``<label for>`` or an ``aria-labelledby`` label laid over its
        field. A press there reaches the field (a label's click focuses it), and its text is
        the field's name: it is no cover."""
        try:
            labels = await self.a11y.labels(key)
        except (ElementCallFailed, NotAnswering):
            return False
        return any(k in labels for k in over)

    async def _in_popup(self, ancestors: list[ElementKey]) -> bool:
        """Whether these (the nearest ancestors of an element) include a combo box: its
        items are in a popup drawn over the page."""
        for key in ancestors:
            try:
                role = await self.a11y.role(key)
            except (ElementCallFailed, NotAnswering):
                return False
            if role == "combo-box":
                return True
        return False

    @staticmethod
    def _coverer(
        hit: ElementKey, chain: list[ElementKey], mine: list[ElementKey]
    ) -> ElementKey | None:
        """For a hit outside the target (``chain``: the hit and its ancestors; ``mine``: the
        target's): None when the hit is one of the target's ancestors; else the outermost
        element above the hit that is not shared with the target (the overlay)."""
        if hit in mine:
            return None
        shared = next((i for i, k in enumerate(chain) if k in mine), len(chain))
        return chain[max(0, shared - 1)]

    async def _describe(self, key: ElementKey) -> str:
        live = await self.a11y.inspect(key)
        role = live.role if live is not None else "element"
        try:
            attrs = await self.a11y.attributes(key)
        except (ElementCallFailed, NotAnswering):
            attrs = {}
        tag = attrs.get("tag", role)
        what = tag + "".join(f".{c}" for c in attrs.get("class", "").split()[:2])
        if "id" in attrs:
            what += f"#{attrs['id']}"
        words = await self.a11y.read_text(key)
        words = " ".join((words or "").replace("\ufffc", " ").split())
        if live is not None and live.name:
            words = live.name
        return f'{what} "{words[:60]}"' if words else what
