"""Element actions: click and focus an element by its key, its own action first.

Before a click the pointer goes where a person's would (:mod:`.aiming`), so that hover state
follows. A web page's element is then pressed with the pointer there (after the tools'
hit-test, :mod:`.covering`). So is a GTK button in a window with a known place on screen, when
the window is on top there, the toolkit's hit-test finds the button at that point and nothing
of the window is drawn over it: its action shows it pressed for 250 ms before it clicks
(GtkButton's ACTIVATE_TIMEOUT), a person's click clicks on release. So is a GTK 4 tree row whose
only actions expand or collapse it (a person's click selects the row); where it cannot be
pointed at, its action runs and the result says it expanded or collapsed the row. Any other
toolkit element is pressed by its activating action (no focus needed), and where it offers
none (an editable area a person clicks into) by a pointer click at that point. A selectable
table cell or tree row
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
from deskpilot.desktop.skills.covering import Covering
from deskpilot.desktop.skills.focus import take_focus
from deskpilot.desktop.skills.hits import HitTests
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.desktop.skills.tab_closers import tab_of
from deskpilot.desktop.skills.tab_closing import TabClosers
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

#: Roles of the items of a drop-down's list.
ITEMS = frozenset({"menu-item", "option", "list-item", "check-menu-item", "radio-menu-item"})
#: How long a drop-down's list is given to close after one of its items was chosen.
ITEM_CLOSE_S = 0.5
#: How long an icon view's item clicked has to say it is selected.
ITEM_SELECTED_S = 2.0

#: Fields an action focuses as a click would (their caret is their own business).
FIELDS = frozenset({"entry", "password-text", "spin-button", "combo-box", "terminal"})
#: GTK's buttons: their action (gtk_widget_activate) shows them pressed for 250 ms before they
#: click; a pointer's press and release clicks them at once.
GTK_BUTTONS = frozenset({"push-button", "toggle-button", "check-box", "radio-button"})
#: A GTK 4 tree expander's actions: a row whose actions are only these is expanded or
#: collapsed by them, where a person's click selects it.
EXPANDER_ACTIONS = frozenset({"listitem.toggle-expand", "listitem.expand", "listitem.collapse"})
#: How long a tree row expanded or collapsed by its action has to say so.
EXPANDED_S = 1.0


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
        closers: TabClosers,
        covering: Covering,
    ) -> None:
        self.a11y = ports.a11y
        self.windows = ports.windows
        self.input = ports.input
        self.raw = raw
        self.aiming = aiming
        self.cells = cells
        self.choosing = choosing
        self.hits = hits
        self.closers = closers
        self.covering = covering

    async def click_element(self, window: WindowInfo, key: ElementKey) -> ActionOutcome:
        if tab_of(key) is not None:  # a GTK 3 tab's close button, drawn only: checked by a hover
            return await self.closers.click(window, key)
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
        expander = live is not None and await self._expander_only(live.key)
        if (
            point is not None
            and live is not None
            and not area
            and (expander or live.role in GTK_BUTTONS)
            and await self._pointer_reaches(window, live, point)
        ):
            # clicked as a person clicks it, at the point the hit-test approved (GTK's button
            # clicks on the release; its action would show it pressed for 250 ms first). The
            # pointer is on it since the checks: pressed and released at once (GTK needs no
            # pause: see CLICK_GAP_S)
            async with self.raw.session(window) as outcome:
                await self.raw.click_at_once(*point)
            return outcome.done(f"pointer click at ({point[0]}, {point[1]})")
        if expander and live is not None:
            return await self._expand_row(live)
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

    async def _pointer_reaches(
        self, window: WindowInfo, live: LiveElement, point: tuple[int, int]
    ) -> bool:
        """Whether a pointer click at ``point`` is the truthful and faster way to click this
        toolkit element: a GTK one, in a window with a known place on screen (on GNOME's
        Wayland a window has none), on top at the point with no popup of the app open over
        it (a menu takes a click outside it to close itself), the toolkit's hit-test finding
        the element (or a part of it), and nothing of the window drawn over it (GTK's
        hit-test returns the first child holding the point, not the one on top)."""
        if not window.placed:
            return False
        try:
            kit = (await self.a11y.attributes(live.key)).get("toolkit", "")
        except (ElementCallFailed, NotAnswering):
            return False
        if kit.casefold() != "gtk":
            return False
        on_top = await self.windows.window_at(*point)
        if on_top is None or on_top.handle != window.handle:
            return False
        if await self.windows.popups(window):
            # a menu or popup of the app is open over the window (no window manager's
            # window: window_at does not see it): it may lie over the point, and an open menu
            # takes a click outside it to close itself
            return False
        # the pointer over it now, as a person's before the press: the checks below are the
        # pause an app needs between the move and the press
        await self.raw.hover(*point)
        if await self.input.pointer() != point:
            return False
        if not await self.covering.uncovered(window, live.key):
            return False
        if await self._hits(window, point, live.key):
            return True
        # GTK 3's hit-test gives the first child holding the point: one drawn under the
        # element is no neighbour hit (nothing is drawn over it: the cover check sees GTK 3's
        # "showing" elements). GTK 4 says no "showing": its hit-test alone is trusted
        hit = await self.hits.element_at(window, *point)
        return (
            hit is not None
            and "showing" in live.states
            and "showing" in hit.states
            and await self.covering.drawn_under(hit.key, live.key)
        )

    async def _expander_only(self, key: ElementKey) -> bool:
        """Whether the element's actions are only a GTK 4 tree expander's (expand, collapse)."""
        try:
            names = await self.a11y.action_names(key)
        except (ElementCallFailed, NotAnswering):
            return False
        return bool(names) and set(names) <= EXPANDER_ACTIONS

    async def _expand_row(self, live: LiveElement) -> ActionOutcome:
        """A GTK 4 tree row that cannot be pointed at: its toggle action expands or collapses
        it, and the result says which (it does not select it, as a person's click would)."""
        was = "expanded" in live.states
        if await self.a11y.activate(live.key) is None:
            raise ActionFailed("the row has no action that a click could run")

        async def toggled() -> bool:
            now = await self.a11y.inspect(live.key)
            return now is not None and ("expanded" in now.states) != was

        if not await _within(toggled, EXPANDED_S):
            raise ActionFailed(
                "the row could not be pointed at, and its only action (expand or collapse) "
                "changed nothing: it was not selected either. Select it with the arrow keys"
            )
        done = "collapsed the row" if was else "expanded the row"
        return ActionOutcome(
            "atspi",
            f"AT-SPI action 'listitem.toggle-expand': {done} (it could not be pointed at; a "
            "person's click would have selected it, this did not)",
        )

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
        return outer == inner or outer in await self.aiming.ancestors(inner, levels - 1)

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
