"""AT-SPI for windows: which app and frame belong to a window, and the window's tree.

:class:`WindowTrees` locates a window's accessible frame (by title, extents and PID), reads
its tree (a cold read of the app first, then only what events said changed) and turns it into
:class:`~deskpilot.desktop.base.Node` objects (:mod:`.nodes`). Element checks and actions
(``DoAction``, ``SetTextContents``, ``GrabFocus``) that need no focus and no pointer are
:class:`~deskpilot.desktop.atspi.elements.ElementActions`; both serve the accessibility port
(:mod:`.port`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence

from dbus_fast import Message

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.atspi.actions import ActionReader
from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.cache import Located, TreeCache
from deskpilot.desktop.atspi.calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi.consts import ROOT_PATH, S_ACTIVE, role_name, state_bits
from deskpilot.desktop.atspi.details import DetailReader
from deskpilot.desktop.atspi.elements import ElementActions
from deskpilot.desktop.atspi.focus import FocusTracker
from deskpilot.desktop.atspi.folds import folded
from deskpilot.desktop.atspi.model import AppTree
from deskpilot.desktop.atspi.nodes import WindowTree, build_nodes, rendered, wants_text
from deskpilot.desktop.atspi.point_hits import PointHits
from deskpilot.desktop.atspi.range import read_range
from deskpilot.desktop.atspi.tree import TreeReader
from deskpilot.desktop.base import (
    NOT_ANSWERING,
    OFF_THE_BUS,
    LiveElement,
    Node,
    Rect,
    WindowInfo,
)
from deskpilot.desktop.cell_refs import Place
from deskpilot.desktop.ports.identity import WindowHandle
from deskpilot.desktop.toolkit_names import is_class_name
from deskpilot.errors import DesktopError

#: Toolkits whose AT-SPI events miss changes (Chromium: scrolling moves nothing it reports).
EVENTS_INCOMPLETE = {"chromium", "electron", "gecko", "mozilla", "firefox"}

#: How long a web toolkit's answer of a hidden element is asked again: Chromium's guess at a
#: collapsed <select> is its last option (hidden, in the select's box), and on a loaded
#: machine its renderer answers later than it is waited for (:mod:`.point_hits`).
HIDDEN_HIT_S = 1.0
HIDDEN_HIT_POLL_S = 0.05
#: States of an element a person can see, and so hit.
DISPLAYED = frozenset({"showing", "visible"})

#: Roles of top-level children of an app that can be a window's frame.
FRAME_ROLES = {"frame", "window", "dialog", "alert", "file-chooser", "color-chooser"}

#: Roles whose accessible name is often empty while a nearby label names them.
LABELLED_ROLES = {
    "entry", "password-text", "text", "combo-box", "spin-button", "slider", "calendar",
    "date-editor", "list", "list-box", "tree", "tree-table", "table", "check-box",
    "radio-button", "toggle-button", "switch", "push-button",
}  # fmt: skip


class WindowTrees:
    """Windows' frames and trees on one accessibility bus."""

    def __init__(self, bus: AtspiBus, elements: ElementActions) -> None:
        self.bus = bus
        self.elements = elements
        self.reader = TreeReader(bus)
        self.details = DetailReader(bus)
        self.actions = ActionReader(bus)
        self.cache = TreeCache()
        self.focus = FocusTracker()
        self._locate_problem = ""
        #: the point (in the app's coordinates) each window was last hit-tested at
        self._hit_points: dict[WindowHandle, tuple[int, int]] = {}
        self.hits = PointHits(bus)
        bus.bus.add_message_handler(self._on_event)

    def _on_event(self, msg: Message) -> None:
        self.cache.on_message(msg)
        self.focus.on_message(msg)

    # -- apps and frames -------------------------------------------------------------------

    async def buses_for_pid(self, pid: int) -> list[str]:
        buses = await self.bus.app_buses()
        pids = await asyncio.gather(*(self.bus.pid_of(b) for b in buses))
        return [b for b, p in zip(buses, pids, strict=True) if p == pid]

    async def frames_of(self, bus_name: str) -> list[tuple[str, str, int, tuple[int, ...]]]:
        """(path, name, states, extents) of an app's top-level frames: children of a frame's
        role, and named children of any role (GTK 4.8 gives its file chooser dialog the role
        'widget': it is still a window)."""
        body = await self.bus.call(bus_name, ROOT_PATH, "Accessible", "GetChildren")
        paths = [str(p) for b, p in body[0] if b == bus_name]

        async def describe(path: str) -> tuple[str, str, int, tuple[int, ...]] | None:
            try:
                role, name, state = await asyncio.gather(
                    self.bus.call(bus_name, path, "Accessible", "GetRole"),
                    self.bus.get_property(bus_name, path, "Accessible", "Name"),
                    self.bus.call(bus_name, path, "Accessible", "GetState"),
                )
            except (AtspiCallError, AtspiTimeout):
                return None
            if role_name(int(role[0])) not in FRAME_ROLES and not str(name):
                return None  # an unnamed top-level child of another role is no window
            try:
                ext = await self.bus.call(bus_name, path, "Component", "GetExtents", "u", [0])
                extents = tuple(int(v) for v in ext[0])
            except (AtspiCallError, AtspiTimeout):
                extents = ()
            return (path, str(name), state_bits(state[0]), extents)

        found = await asyncio.gather(*(describe(p) for p in paths))
        return [f for f in found if f is not None]

    async def locate(self, window: WindowInfo) -> tuple[str, str, tuple[int, int]] | None:
        """(bus, frame path, coordinate offset) of an X window's accessible frame, if any."""
        buses = await self.buses_for_pid(window.pid)
        self._locate_problem = "" if buses else OFF_THE_BUS
        # frames other windows were matched to: two windows with the same title (two
        # browser windows on one page) must never resolve to the same tree
        taken = {(w.bus, w.frame) for x, w in self.cache.located.items() if x != window.handle}
        best: tuple[int, str, str, tuple[int, ...]] | None = None
        for bus_name in buses:
            try:
                frames = await self.frames_of(bus_name)
            except AtspiTimeout:
                self._locate_problem = NOT_ANSWERING
                continue
            except AtspiCallError as exc:
                self._locate_problem = f"the app refused to list its windows ({exc.error_name})"
                continue
            for path, name, states, extents in frames:
                if (bus_name, path) in taken:
                    continue
                score = _frame_score(window, name, states, extents, single=len(frames) == 1)
                if score and (best is None or score > best[0]):
                    best = (score, bus_name, path, extents)
        if best is None:
            return None
        _, bus_name, path, extents = best
        return bus_name, path, frame_offset(extents, window.geometry)

    # -- reading ---------------------------------------------------------------------------

    async def read_window(
        self,
        window: WindowInfo,
        *,
        timeout: float = 5.0,
        fresh: bool = False,
        whole: tuple[str, str] | None = None,
        popups: Sequence[Rect] = (),
    ) -> tuple[Node | None, bool, list[str]]:
        """The window's tree as Nodes, whether it is partial, and what went wrong.

        The first read of an app is a full (cold) read; later reads apply only what AT-SPI
        events said changed (warm). ``fresh=True`` forces a full read. ``whole``: an element
        whose subtree is read in full, what is off screen too (a zoomed read). ``popups``:
        where the app's popup windows over this window are on screen (a context menu); the
        app's top-level accessibles at those places are read too, as children of the root."""
        deadline = time.monotonic() + timeout
        try:
            where = None if fresh else await self._cached_location(window)
        except AtspiTimeout:  # it answered before and now does not: looking again cannot help
            return None, True, [NOT_ANSWERING]
        if where is None:
            located = await self.locate(window)
            if located is None:
                return None, True, [self._locate_problem or "no accessible frame found"]
            bus_name, frame, offset = located
            where = Located(bus_name, frame, offset, (window.geometry.x, window.geometry.y))
            self.cache.located[window.handle] = where
        self.cache.watch(where.bus)
        app = self.cache.trees.get(where.bus)
        dirty = self.cache.take(where.bus)
        if (window.geometry.x, window.geometry.y) != where.origin:
            dirty.all_extents = True  # the window moved: screen positions changed
            where.origin = (window.geometry.x, window.geometry.y)
        if app is None or fresh or dirty.full or app.partial or where.frame not in app.nodes:
            app = await self.reader.read_app(
                where.bus, frame=where.frame, deadline=deadline, lazy_hidden=True
            )
        else:
            # only this window: what changed in the app's other windows waits for their reads
            rest = await self.reader.refresh(app, dirty, frame=where.frame, deadline=deadline)
            self.cache.put_back(where.bus, rest)
            if where.frame not in app.frames:
                await self.reader.read_frame(app, where.frame, deadline=deadline)
        if where.frame not in app.nodes:
            self.cache.drop(where.bus)
            return None, True, [*app.problems, "the window's frame vanished while reading"]
        self.cache.store(app)
        inside: frozenset[str] = frozenset()
        if whole is not None and whole[0] == where.bus and whole[1] in app.nodes:
            await self.reader.read_whole(app, whole[1], deadline=deadline)
            inside = frozenset(app.subtree(whole[1]))
        shown = [p for p in rendered(app, where.frame, inside) if p != where.frame or app.shown(p)]
        over = await self._popups_of(app, where, popups, deadline) if popups else []
        known = set(shown)
        over = [(p, o) for p, o in over if not known & set(app.subtree(p))]  # a combo's list
        for popup, _ in over:
            shown += rendered(app, popup)
        await self.details.fill_extents(app, shown, deadline=deadline)
        for fold in folded(app, shown):  # a bar folded away: its hidden content read too
            await self.reader.read_whole(app, fold, deadline=deadline)
            inside = inside | frozenset(app.subtree(fold))
            hidden = [p for p in app.subtree(fold) if p not in known]
            known.update(hidden)
            shown += hidden
            await self.details.fill_extents(app, hidden, deadline=deadline)
        textual = [p for p in shown if wants_text(app.nodes[p])]
        await self.details.fill_text(app, textual, deadline=deadline)
        unnamed = [
            p
            for p in shown
            if (not app.nodes[p].name or is_class_name(app.nodes[p].name))
            and app.nodes[p].role_name in LABELLED_ROLES
        ]
        await self.details.fill_labels(app, unnamed, deadline=deadline)
        await self.actions.fill_actions(app, shown)
        await self.actions.fill_hints(app, shown)
        if app.partial:
            self.cache.drop(where.bus)  # do not build on an incomplete tree
        root = build_nodes(WindowTree(app, where.frame, where.offset, inside), window)
        for popup, offset in reversed(over):  # first: on top of the window, and never cut
            node = build_nodes(WindowTree(app, popup, offset), window)
            node.parent_key = root.key
            root.children.insert(0, node)
        return root, app.partial, app.problems

    async def _popups_of(
        self, app: AppTree, where: Located, rects: Sequence[Rect], deadline: float
    ) -> list[tuple[str, tuple[int, int]]]:
        """The app's top-level accessibles (not the window's frame) that show where its popup
        windows are: a GTK 3 or LibreOffice context menu is a ``window`` child of the
        application, outside every frame's tree, in an override-redirect X window no window
        list has. They are read (their subtrees too) into ``app``; their paths are returned,
        each with the offset its extents need: none when they are already where the popup is
        (LibreOffice places its popups on the screen, though its frame's extents leave out
        the window manager's title bar), else the frame's."""
        try:
            body = await self.bus.call(where.bus, ROOT_PATH, "Accessible", "GetChildren")
        except (AtspiCallError, AtspiTimeout):
            return []
        paths = [str(p) for b, p in body[0] if b == where.bus and str(p) != where.frame]
        taken = {w.frame for w in self.cache.located.values() if w.bus == where.bus}
        found: list[tuple[str, tuple[int, int]]] = []
        for path in paths:
            if path in taken:
                continue  # another listed window's frame
            try:
                ext = await self.bus.call(where.bus, path, "Component", "GetExtents", "u", [0])
            except (AtspiCallError, AtspiTimeout):
                continue
            x, y, w, h = (int(v) for v in ext[0])
            offset = next(
                (
                    (dx, dy)
                    for dx, dy in ((0, 0), where.offset)
                    if any(_same_place(Rect(x + dx, y + dy, w, h), r) for r in rects)
                ),
                None,
            )
            if offset is None or w <= 0 or h <= 0:
                continue
            await self.reader.read_frame(app, path, deadline=deadline)
            if path in app.nodes and app.shown(path):
                found.append((path, offset))
        return found

    async def _cached_location(self, window: WindowInfo) -> Located | None:
        """Where a window read before lives, if that still holds (one liveness call); raises
        AtspiTimeout when the app no longer answers."""
        where = self.cache.located.get(window.handle)
        if where is None:
            return None
        dirty = self.cache.dirty.get(where.bus)
        if dirty is not None and dirty.frames:
            del self.cache.located[window.handle]
            return None
        try:
            # as long as a call may take: a busy app that answers in time is not frozen
            await self.bus.call(where.bus, where.frame, "Accessible", "GetState")
        except AtspiTimeout:
            self.cache.drop(where.bus)
            raise
        except (AtspiCallError, DesktopError):
            self.cache.drop(where.bus)
            return None
        return where

    async def read_cells(
        self, window: WindowInfo, key: tuple[str, str], first: Place, last: Place
    ) -> tuple[Node | None, list[str]]:
        """A range of a table's cells (see :mod:`.range`), in screen coordinates."""
        where = self.cache.located.get(window.handle)
        node, problems = await read_range(self.reader, key[0], key[1], first, last)
        if node is not None and where is not None and where.offset != (0, 0):
            for n in node.walk():
                if n.bounds is not None:
                    n.bounds = n.bounds.offset(*where.offset)
        return node, problems

    def document_of(self, window: WindowInfo) -> tuple[str, str, tuple[int, int]] | None:
        """The web document a read of the window showed (its bus, path and a point inside it,
        in the app's coordinates), from the cached tree; None when there is none."""
        where = self.cache.located.get(window.handle)
        app = self.cache.trees.get(where.bus) if where is not None else None
        if where is None or app is None or where.frame not in app.nodes:
            return None
        todo = [where.frame]  # breadth first, not into a page: its document is near the top
        while todo:
            path = todo.pop(0)
            node = app.nodes[path]
            if node.role_name != "document-web":
                todo += app.children_of(path)
            elif node.extents and node.extents[2] > 0 < node.extents[3] and app.shown(path):
                x, y, w, h = node.extents
                return where.bus, path, (x + w // 2, y + h // 2)
        return None

    async def flush(self, window: WindowInfo) -> float | None:
        """Make the window's web engine send the changes it holds back: Blink sends a page's
        changes that no input caused in batches at most every 150 ms, and everything it holds
        at once when asked a hit-test (an accessible hit-test's answer is a renderer's event,
        sent with them). Nothing happens on the page. Returns how long the renderer's answer
        may take (its hit-tests' :meth:`~.point_hits.PointHits.patience`); None when there is
        no page to ask."""
        doc = self.document_of(window)
        if doc is None:
            return None
        bus_name, path, point = doc
        # at the point last hit-tested in the window: Chromium answers a hit-test inside the
        # last answer's box with that answer until the renderer's comes, so a flush at the
        # page's centre made the next click's first answer the page (one more 50 ms gap)
        point = self._hit_points.get(window.handle, point)
        with contextlib.suppress(AtspiCallError, AtspiTimeout):
            await self.bus.call(
                bus_name, path, "Component", "GetAccessibleAtPoint", "iiu", [*point, 0]
            )
        return self.hits.patience(bus_name)

    async def element_at(self, window: WindowInfo, x: int, y: int) -> LiveElement | None:
        """The deepest element of the window's frame at screen point (x, y).

        A web toolkit's first answer is a guess: its renderer's is waited for
        (:meth:`.point_hits.PointHits.renderers`)."""
        where = self.cache.located.get(window.handle)  # the window's last read found it ...
        if where is not None and where.origin == (window.geometry.x, window.geometry.y):
            located: tuple[str, str, tuple[int, int]] | None = (
                where.bus,
                where.frame,
                where.offset,
            )
        else:  # ... not read yet, or moved since (its offset may be another)
            located = await self.locate(window)
        if located is None:
            return None
        bus_name, path, offset = located
        point = (x - offset[0], y - offset[1])
        self._hit_points[window.handle] = point  # where a flush asks (see flush)
        web = (await self.bus.toolkit(bus_name)).casefold() in EVENTS_INCOMPLETE
        if web:
            key = await self.hits.renderers(bus_name, path, point)
        else:
            key = await self.hits.deepest(bus_name, path, point)
        element = await self.elements.inspect(key, window.pid)
        if web and element is not None and not element.states & DISPLAYED:
            return await self._displayed(bus_name, path, point, element, window.pid)
        return element

    async def _displayed(
        self, bus_name: str, frame: str, point: tuple[int, int], hidden: LiveElement, pid: int
    ) -> LiveElement:
        """What a person hits at ``point`` where a web toolkit answered with a hidden element
        (its guess, the renderer's answer not in yet: measured, 10 of 18 first answers at a
        collapsed <select> were its hidden last option): the renderer's answer, asked for
        until it comes; else the nearest ancestor shown (the select, not its option)."""

        async def shown() -> LiveElement | None:
            found = await self.elements.inspect(
                await self.hits.deepest(bus_name, frame, point), pid
            )
            return found if found is not None and found.states & DISPLAYED else None

        with contextlib.suppress(WaitTimeout):
            return await async_wait_for(
                shown,
                timeout=HIDDEN_HIT_S,
                what="the renderer's hit-test",
                interval=HIDDEN_HIT_POLL_S,
            )
        element = hidden
        for _ in range(8):  # a hidden popup's item sits a few levels under its control
            parent = (
                await self.elements.inspect(element.parent_key, pid) if element.parent_key else None
            )
            if parent is None:
                break
            if parent.states & DISPLAYED:
                return parent
            element = parent
        return hidden


def _frame_score(
    window: WindowInfo, name: str, states: int, extents: tuple[int, ...], *, single: bool
) -> int:
    """How well an accessible frame matches a window: title, then position and size (exact
    beats close), then the active state; 0 for no match at all.

    A frame whose name contradicts the window's title matches only by its exact extents, and
    being the app's only frame never makes up for a contradicting title: a dialog the app does
    not expose must read as unreadable, never as the app's main window."""
    score = 0
    titled = bool(name and window.title)
    if name and name == window.title:
        score += 4
    elif titled and (name in window.title or window.title in name):
        score += 2
    contradicts = titled and score == 0
    geo = window.geometry
    if extents and (
        tuple(extents) == (geo.x, geo.y, geo.width, geo.height) or _shadow(extents, geo) is not None
    ):
        score += 3
    elif extents and _close(extents, geo) and not contradicts:
        score += 2
    if contradicts and score == 0:
        return 0
    if single and not contradicts:
        score += 1
    if score and window.active == bool(states & S_ACTIVE):
        score += 1
    return score


#: The widest client-side shadow (px, each edge) a window-relative frame has around its window.
MAX_SHADOW = 32


def _shadow(extents: tuple[int, ...], geo: Rect) -> int | None:
    """The client-side shadow of a window-relative frame (at 0,0) around its window, when the
    frame is exactly the window or the window with an even margin on every edge; None
    otherwise. On Wayland a frame's extents are its surface's, and a floating GTK 3 window's
    surface includes its shadow (measured on sway 1.7: LibreOffice's "Confirm File Format"
    dialog, 588x243 in sway's tree, is a 608x263 frame named "Question")."""
    if len(extents) != 4 or extents[0] != 0 or extents[1] != 0:
        return None
    dw, dh = extents[2] - geo.width, extents[3] - geo.height
    if dw != dh or dw % 2 or not 0 <= dw <= 2 * MAX_SHADOW or geo.width <= 0:
        return None
    return dw // 2


def frame_offset(extents: tuple[int, ...], geo: Rect) -> tuple[int, int]:
    """What to add to a frame's extents to put them on the screen: (0, 0) for screen extents,
    the window's place (less the frame's client-side shadow) for window-relative ones (GTK 4;
    every toolkit on Wayland), which put the frame at (0, 0) wherever the window is.

    A frame at (0, 0) may also truly be at the screen's corner: a GTK 3 window there reports
    its frame with the window manager's decorations (measured: Mousepad's frame at (0, 0),
    its window at (1, 20) inside it, every element 20 px off when taken for relative). Such a
    frame holds the whole window where it is; a window-relative frame is the window's size,
    so it can hold the window at its place only near the corner, where both readings agree
    to within the shadow."""
    if len(extents) != 4 or extents[0] != 0 or extents[1] != 0 or (geo.x, geo.y) == (0, 0):
        return (0, 0)
    margin = _shadow(extents, geo)
    if margin is None and _holds(extents, geo):
        return (0, 0)
    margin = margin or 0
    return (geo.x - margin, geo.y - margin)


def _holds(extents: tuple[int, ...], geo: Rect) -> bool:
    """Whether the screen rectangle ``extents`` holds the window ``geo`` where it is."""
    x, y, w, h = extents
    return x <= geo.x and y <= geo.y and geo.x + geo.width <= x + w and geo.y + geo.height <= y + h


#: How far (px, each edge) a popup's accessible may lie from its X window and still be it.
POPUP_SLACK = 4


def _same_place(a: Rect, b: Rect) -> bool:
    return all(
        abs(p - q) <= POPUP_SLACK
        for p, q in zip((a.x, a.y, a.width, a.height), (b.x, b.y, b.width, b.height), strict=True)
    )


def _close(extents: tuple[int, ...], geo: Rect, slack: int = 40) -> bool:
    if len(extents) != 4:
        return False
    x, y, w, h = extents
    return (
        abs(w - geo.width) <= slack
        and abs(h - geo.height) <= slack
        and ((abs(x - geo.x) <= slack and abs(y - geo.y) <= slack) or (x, y) == (0, 0))
    )
