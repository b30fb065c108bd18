"""Element actions: click and focus an element by its key, its own action first.

Before a click the pointer goes where a person's would (:mod:`.aiming`), so that hover state
follows. A web page's element is then pressed with the pointer there (after the tools'
hit-test, :mod:`.covering`); a toolkit's element is pressed by its activating action (no focus
needed), and where it offers none (an editable area a person clicks into) by a pointer click
at that point. A selectable table cell or tree row
is selected first and checked (:mod:`.cells`), an icon view's item clicked with the pointer
(its action opens it) and checked selected; a row without an action in a GTK 4 popover is
reached with the arrow keys (:mod:`.choosing`). Filling is :mod:`.filling`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, LiveElement, WindowInfo
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.aiming import Aiming
from deskpilot.desktop.skills.cells import Cells, selects_first
from deskpilot.desktop.skills.choosing import Choosing
from deskpilot.desktop.skills.focus import take_focus
from deskpilot.desktop.skills.hits import HitTests
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

#: Roles of the items of a drop-down's list.
ITEMS = frozenset({"menu-item", "option", "list-item", "check-menu-item", "radio-menu-item"})
#: How long a drop-down's list is given to close after one of its items was chosen.
ITEM_CLOSE_S = 0.5
#: How long an icon view's item clicked has to say it is selected.
ITEM_SELECTED_S = 2.0

#: Fields an action focuses as a click would (their caret is their own business).
FIELDS = frozenset({"entry", "password-text", "spin-button", "combo-box", "terminal"})


async def _within(check: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    """Whether ``check`` holds within ``timeout`` seconds (polled, not slept on)."""
    try:
        await async_wait_for(check, timeout=timeout, what="a condition")
    except WaitTimeout:
        return False
    return True


class Elements:
    """Actions on elements of a window's tree."""

    def __init__(
        self,
        ports: Ports,
        raw: RawInput,
        aiming: Aiming,
        cells: Cells,
        choosing: Choosing,
        hits: HitTests,
    ) -> None:
        self.a11y = ports.a11y
        self.windows = ports.windows
        self.input = ports.input
        self.raw = raw
        self.aiming = aiming
        self.cells = cells
        self.choosing = choosing
        self.hits = hits

    async def click_element(self, window: WindowInfo, key: ElementKey) -> ActionOutcome:
        live = await self.a11y.inspect(key, window.pid)
        if live is not None and live.role == "icon" and "selectable" in live.states:
            return await self._click_view_item(window, live)
        if live is not None and selects_first(live):
            return await self.cells.click_cell(window, live)
        # an editable area (a contenteditable, a document's paragraph): a person's click puts
        # the caret where it lands; an action would leave the focus where it was, and the next
        # keys would go there
        area = live is not None and "editable" in live.states and live.role not in FIELDS
        point = await self._point(window, key) if live is not None else None
        if (
            point is not None
            and not area
            and await self._pressed_by_pointer(window, live)
            and await self._hits(window, point, key)
        ):
            # a page's element is clicked as a person clicks it: the pointer moves there
            # (the page's hover state follows: a hover-driven menu acts on the item under
            # the pointer) and presses at the point the hit-test approved. An action sent
            # beside a pointer move races it: pages handle moves once a frame
            async with self.raw.session(window) as outcome:
                if outcome.activated:  # as before: a window just activated gets the gaps
                    await self.raw.click(*point)
                else:
                    await self._web_click(point)
            return outcome.done(f"pointer click at ({point[0]}, {point[1]})")
        on_top = await self.windows.window_at(*point) if point is not None else None
        hovered: tuple[int, int] | None = None  # where the pointer is known to be, if on it
        if point is not None and (on_top is None or on_top.handle == window.handle):
            await self.input.move(*point)  # hover where the element is, as a person's would
            # said only when it is so: a backend with nowhere to aim (a window with no known
            # place behind the portal) leaves the pointer where it was
            hovered = point if await self.input.pointer() == point else None
        combo = await self._list_of(window, live) if live is not None and not area else None
        name = None if area else await self.a11y.activate(key)
        if name is not None:
            moved = f", the pointer on it at {hovered}" if hovered is not None else ""
            closed = await self._closed(combo) if combo is not None else ""
            return ActionOutcome("atspi", f"AT-SPI action '{name}'{moved}{closed}")
        if live is not None and await self.aiming.in_popover(live):
            return await self._click_popover_row(window, live)
        x, y = await self.aiming.element_point(window, key)
        async with self.raw.session(window) as outcome:
            await self.raw.click(x, y)
        return outcome.done(f"pointer click at ({x}, {y})")

    async def _web_click(self, point: tuple[int, int]) -> None:
        """A page's click in its active window: the move, the press and the release, each
        sent once the X server shows the one before done (the pointer there, the button
        down), no pause between them. Chromium handles them in order: the page's hover
        (``mouseover``, a move handled once a frame) is dispatched before the press."""
        await self.input.move(*point)
        await self.input.button("left", True)
        await self.input.button("left", False)

    async def _click_view_item(self, window: WindowInfo, live: LiveElement) -> ActionOutcome:
        """An icon view's item (a selectable ``icon``: GTK 3's GtkIconView). Its action opens
        it (a double-click's effect) and GrabFocus only moves the view's cursor to it; a
        person's click selects it: the pointer clicks it, and it must then say it is selected."""
        x, y = await self.aiming.element_point(window, live.key)
        async with self.raw.session(window) as outcome:
            await self.raw.click(x, y)

        async def selected() -> bool:
            now = await self.a11y.inspect(live.key)
            return now is not None and "selected" in now.states

        if not await _within(selected, ITEM_SELECTED_S):
            raise ActionFailed(
                f"clicked the item {live.name!r} at ({x}, {y}), but it does not say it is "
                "selected (something else may have taken the click)"
            )
        return outcome.done(f"pointer click at ({x}, {y}): the item is selected")

    async def _point(self, window: WindowInfo, key: ElementKey) -> tuple[int, int] | None:
        """Where a person's pointer would click the element; None when it has no place on
        screen (its action is then the only way, and no neighbour can be hit)."""
        try:
            return await self.aiming.element_point(window, key)
        except (ActionFailed, ElementCallFailed):
            return None

    async def _hits(self, window: WindowInfo, point: tuple[int, int], key: ElementKey) -> bool:
        """Whether the page's hit-test at ``point`` finds the element (or a part of it, or
        one of its ancestors): else something covers it there and only its action reaches it
        (a click that was forced: unforced ones were refused before)."""
        hit = await self.hits.element_at(window, *point)  # the cover check's, when it asked here
        if hit is None:
            return False
        return await self._above(hit.key, key) or await self._above(key, hit.key)

    async def _above(self, inner: ElementKey, outer: ElementKey, levels: int = 10) -> bool:
        """Whether ``outer`` is ``inner`` or one of its nearest ancestors."""
        key: ElementKey | None = inner
        for _ in range(levels):
            if key is None:
                return False
            if key == outer:
                return True
            try:
                key = await self.a11y.parent(key)
            except (ElementCallFailed, NotAnswering):
                return False
        return False

    async def _pressed_by_pointer(self, window: WindowInfo, live: LiveElement | None) -> bool:
        """Whether the element is a web page's, clicked with the pointer: not an item of a
        ``<select>``'s popup (drawn outside the page, chosen by its action; its items sit in
        a menu inside the combo box). A page's own menu (``role="menu"``, often driven by
        hover) is clicked with the pointer like the rest of the page."""
        if live is None or not await self.a11y.web_engine(window) or live.role == "option":
            return False
        key = live.parent_key
        for _ in range(3):
            up = await self.a11y.inspect(key) if key is not None else None
            if up is None:
                break
            if up.role == "combo-box":
                return False
            key = up.parent_key
        return True

    async def _list_of(self, window: WindowInfo, live: LiveElement) -> ElementKey | None:
        """The page's drop-down whose open list holds this item (its combo box, expanded), if
        any (toolkits close their lists themselves when an item is chosen)."""
        if live.role not in ITEMS or not await self.a11y.web_engine(window):
            return None
        key = live.parent_key
        for _ in range(3):
            up = await self.a11y.inspect(key) if key is not None else None
            if up is None:
                return None
            if up.role == "combo-box":
                return up.key if "expanded" in up.states else None
            key = up.parent_key
        return None

    async def _closed(self, combo: ElementKey) -> str:
        """After an item of a drop-down's list was chosen by its action: the list closed, as
        a person's click closes it. Chromium's ``<select>`` keeps its list open after the
        action (the value is set), drawn over the page: the next pointer click landed in it.
        Its combo box's action closes it (Chromium toggles the list); a list that stays open
        is said."""

        async def shut() -> bool:
            now = await self.a11y.inspect(combo)
            return now is None or "expanded" not in now.states

        if await _within(shut, ITEM_CLOSE_S):
            return ""
        await self.a11y.activate(combo)
        if await _within(shut, ITEM_CLOSE_S):
            return "; its list closed (the combo box's action, as a click would close it)"
        return "; its list is still open (press Escape or click elsewhere to close it)"

    async def _click_popover_row(self, window: WindowInfo, live: LiveElement) -> ActionOutcome:
        """A row without an action in a GTK 4 popover (a drop-down's open list): GTK reports
        its position relative to the popover, not the screen, so a pointer click would hit
        another row; it is reached with the arrow keys from the focused row and Enter."""
        rows: list[tuple[ElementKey, str, frozenset[str]]] = []
        if live.role in ("list-item", "tree-item") and live.parent_key is not None:
            parts = await self.choosing.parts_of(live.parent_key)
            rows = [(k, "", frozenset()) for k, role in parts if role == live.role]
        keyed = await self.choosing.key_to_item(window, rows, live.key) if rows else None
        if keyed is None:
            raise ActionFailed(
                "it is in a GTK 4 popup without an action of its own, and GTK does not report "
                "where the popup is on screen: a pointer click would hit something else. For a "
                "drop-down, use fill on it with the item's name; else use the arrow keys and "
                "Enter (shortcut)"
            )
        how, outcome = keyed
        return outcome.done(how)

    async def focus_element(self, window: WindowInfo, key: ElementKey) -> bool:
        return await take_focus(self.a11y, key)
