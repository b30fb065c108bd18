"""Pointer aiming: the screen point a person would click to hit an element.

The point is the centre of the element's visible part (inside its window and the areas of its
nearest ancestors: a half-scrolled item of a list is aimed at inside the list), or of its own text
when that is on it (a wide list item or a tab is clicked on its label, where its link is). An
element out of its page's or list's view is first scrolled into view by the app, as a person
scrolls before pointing. An element of a GTK 4 popover is aimed at where the popover's popup
window really is (:meth:`~deskpilot.desktop.skills.reading.Reading.popover_shift`), not where
GTK's extents put it. A point found is given again for the same element while no accessibility
event has come (the cover check's point is the click's: one aim per action).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import LiveElement, Rect, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey, WindowHandle
from deskpilot.desktop.skills.reading import Reading
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

#: Ancestors whose area cuts an element's visible part (scroll areas, clipping boxes).
CLIP_LEVELS = 8
#: How long an element scrolled into view is given to move there.
SCROLLED_IN_S = 1.0
#: How long a point found is reused, at most, while no event came (within one action).
FRESH_S = 1.0


def visible_center(rect: Rect, area: Rect) -> tuple[int, int] | None:
    """The centre of the part of ``rect`` inside ``area`` (None when they do not overlap)."""
    left, top = max(rect.x, area.x), max(rect.y, area.y)
    right = min(rect.x + rect.width, area.x + area.width)
    bottom = min(rect.y + rect.height, area.y + area.height)
    if right <= left or bottom <= top:
        return None
    return (left + right) // 2, (top + bottom) // 2


def overlap(a: Rect, b: Rect) -> Rect | None:
    left, top = max(a.x, b.x), max(a.y, b.y)
    right, bottom = min(a.x + a.width, b.x + b.width), min(a.y + a.height, b.y + b.height)
    return Rect(left, top, right - left, bottom - top) if right > left and bottom > top else None


def _mostly_cut(rect: Rect, area: Rect) -> bool:
    """Whether less than half of the element shows in the area though it would fit in it."""
    seen = overlap(rect, area)
    if seen is None or rect.width > area.width or rect.height > area.height:
        return False
    return seen.width * 2 < rect.width or seen.height * 2 < rect.height


class Aiming:
    """Where to point at an element (see the module docstring)."""

    def __init__(self, ports: Ports, reading: Reading) -> None:
        self.a11y = ports.a11y
        self.reading = reading
        #: the last point found: ((window, element), when, events seen then, point)
        self._last: tuple[tuple[WindowHandle, ElementKey], float, int, tuple[int, int]] | None = (
            None
        )
        #: ancestors walked: element → (when, events seen then, ancestors, whether complete)
        self._walked: dict[ElementKey, tuple[float, int, list[ElementKey], bool]] = {}

    async def ancestors(self, key: ElementKey, levels: int) -> list[ElementKey]:
        """The element's ancestors, innermost first, at most ``levels`` of them (fewer where
        the tree ends or an ancestor does not answer). Walked one question a level, once per
        action: the cover check, the aim and the click's hit-test all walk the same chain, so
        a walk is reused (and extended) while no accessibility event has come, within FRESH_S."""
        seen, now = self.a11y.events_seen(), time.monotonic()
        was = self._walked.get(key)
        if was is not None and was[1] == seen and now - was[0] < FRESH_S:
            when, _seen, chain, complete = was
        else:
            self._walked = {k: v for k, v in self._walked.items() if v[1] == seen}
            when, chain, complete = now, [], False
        while not complete and len(chain) < levels:
            try:
                up = await self.a11y.parent(chain[-1] if chain else key)
            except (ElementCallFailed, NotAnswering):
                up = None
            if up is None or up == key or up in chain:
                complete = True
            else:
                chain.append(up)
        # the events seen before the walk: one that came during it voids it
        self._walked[key] = (when, seen, chain, complete)
        return chain[:levels]

    async def element_point(self, window: WindowInfo, key: ElementKey) -> tuple[int, int]:
        """The point; the same answer again (the cover check's, then the click's) while no
        accessibility event has come since it was found, within FRESH_S."""
        seen = self.a11y.events_seen()
        if self._last is not None:
            was, when, events, point = self._last
            if was == (window.handle, key) and events == seen and time.monotonic() - when < FRESH_S:
                return point
        point = await self._aim(window, key)
        # the events seen before aiming: one that came meanwhile (a scroll) voids the answer
        self._last = ((window.handle, key), time.monotonic(), seen, point)
        return point

    async def _aim(self, window: WindowInfo, key: ElementKey) -> tuple[int, int]:
        live = await self.a11y.inspect(key)
        # a GTK 4 popover's element (a walk up the ancestors: ten questions for a page's)
        gtk = live is not None and not await self.a11y.web_engine(window)
        popover = await self.popover_of(live) if live is not None and gtk else None
        if popover is not None:
            return await self._in_popover(window, key, popover)
        hidden = live is not None and "showing" not in live.states and "visible" in live.states
        if hidden:
            # out of its page's or list's view (Chromium): let the app scroll it in, as a
            # person would scroll before pointing at it
            await self.a11y.scroll_into_view(key)
        rect, area, offset = await self._place(window, key)
        if not hidden and _mostly_cut(rect, area) and await self.a11y.scroll_into_view(key):
            # a sliver of it shows at a scroll area's edge: a person scrolls it in first (a
            # click on a few pixels' sliver hits the edge or what is beside it). The app
            # moves it in its own time (Chromium: after its next frame)
            before = rect

            async def moved() -> bool:
                now = await self.a11y.extents(key)
                return now is not None and now.offset(*offset) != before

            with contextlib.suppress(WaitTimeout):
                await async_wait_for(moved, timeout=SCROLLED_IN_S, what="the element to move")
            rect, area, offset = await self._place(window, key)
        text = await self.a11y.text_extents(key)
        if text is not None and text.offset(*offset).intersects(rect):
            # a wide item or tab: point at its text (where its link is), not at empty space
            point = visible_center(text.offset(*offset), overlap(rect, area) or area)
            if point is not None:
                return point
        point = visible_center(rect, area)
        if point is None:
            raise ActionFailed("the element is outside the window's visible area; scroll first")
        return point

    async def _place(
        self, window: WindowInfo, key: ElementKey
    ) -> tuple[Rect, Rect, tuple[int, int]]:
        """The element's box on screen, the area of the window it can be seen in, and the
        offset from the app's coordinates to the screen's."""
        rect = await self.a11y.extents(key)
        if rect is None or rect.empty:
            raise ActionFailed("the element has no on-screen position to point at")
        offset = await self.a11y.origin(window, fresh=True) or (0, 0)
        rect = rect.offset(*offset)
        return rect, await self._shown_in(key, rect, window.geometry, offset), offset

    async def _shown_in(
        self, key: ElementKey, rect: Rect, area: Rect, offset: tuple[int, int]
    ) -> Rect:
        """The part of the window where the element can be seen: the window's area cut by
        its ancestors' (a scroll area shows the part of a half-scrolled item inside it; the
        centre of the whole item lay under the area's edge, and the click hit what is below
        it). An ancestor that holds none of the element (a box of no size) is passed over."""
        ancestors = await self.ancestors(key, CLIP_LEVELS)
        # their boxes asked all at once (the calls pipelined), cut innermost first
        boxes = await asyncio.gather(
            *(self.a11y.extents(k) for k in ancestors), return_exceptions=True
        )
        for box in boxes:
            if isinstance(box, (ElementCallFailed, NotAnswering)):
                break
            if isinstance(box, BaseException):
                raise box
            if box is None or box.empty:
                continue
            cut = overlap(area, box.offset(*offset))
            if cut is not None and overlap(rect, cut) is not None:
                area = cut
        return area

    async def _in_popover(
        self, window: WindowInfo, key: ElementKey, popover: ElementKey
    ) -> tuple[int, int]:
        rect, box = await self.a11y.extents(key), await self.a11y.extents(popover)
        offset = await self.a11y.origin(window, fresh=True)
        if rect is None or rect.empty or box is None or offset is None:
            raise ActionFailed("the element has no on-screen position to point at")
        dx, dy = await self.reading.popover_shift(window, box.offset(*offset))
        return rect.offset(offset[0] + dx, offset[1] + dy).center

    async def in_popover(self, live: LiveElement) -> bool:
        """Whether the element lies in a GTK 4 popover (an ancestor named "GtkPopover" or
        "GtkPopoverMenu")."""
        return await self.popover_of(live) is not None

    async def popover_of(self, live: LiveElement, levels: int = 12) -> ElementKey | None:
        """The GTK 4 popover the element lies in, if any: its ancestors walked up (the
        parents the tree already knows), their names then asked all at once."""
        ancestors = await self.ancestors(live.key, levels)
        names = await asyncio.gather(
            *(self.a11y.name(k) for k in ancestors), return_exceptions=True
        )
        for up, name in zip(ancestors, names, strict=True):
            if isinstance(name, BaseException):
                if isinstance(name, (ElementCallFailed, NotAnswering)):
                    return None  # gone: nothing above it is known
                raise name
            if name in ("GtkPopover", "GtkPopoverMenu"):  # a menu button's is a PopoverMenu
                return up
        return None
