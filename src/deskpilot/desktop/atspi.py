"""AT-SPI reads and actions for windows: which app and frame belong to an X window, the
window's tree as :class:`~deskpilot.desktop.base.Node` objects, and element actions
(``DoAction``, ``SetTextContents``, ``GrabFocus``) that need no focus and no pointer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from dbus_fast import Message

from deskpilot.desktop.atspi_bus import AtspiBus
from deskpilot.desktop.atspi_cache import Located, TreeCache
from deskpilot.desktop.atspi_calls import AtspiCallError, AtspiTimeout
from deskpilot.desktop.atspi_consts import (
    ROOT_PATH,
    S_DEFUNCT,
    S_EDITABLE,
    role_name,
    state_bits,
    state_names,
)
from deskpilot.desktop.atspi_details import DetailReader
from deskpilot.desktop.atspi_model import AppTree, RawNode, wants_value
from deskpilot.desktop.atspi_tree import TreeReader
from deskpilot.desktop.base import LiveElement, Node, Rect, WindowInfo
from deskpilot.errors import ActionFailed, DesktopError

#: Toolkits whose AT-SPI events miss changes (Chromium: scrolling moves nothing it reports).
EVENTS_INCOMPLETE = {"chromium", "electron", "gecko", "mozilla", "firefox"}
INCOMPLETE_EXECUTABLES = {
    "chromium", "chrome", "google-chrome", "brave", "msedge", "vivaldi-bin", "firefox",
    "firefox-esr", "electron", "code", "slack", "discord",
}  # fmt: skip

#: Roles of top-level children of an app that can be a window's frame.
FRAME_ROLES = {"frame", "window", "dialog", "alert", "file-chooser", "color-chooser"}

#: Action names that activate an element, most preferred first ("" = Chromium's nameless).
ACTIVATE_ACTIONS = ("click", "press", "activate", "toggle", "jump", "open", "select", "")

#: Roles whose accessible name is often empty while a nearby label names them.
LABELLED_ROLES = {
    "entry", "password-text", "text", "combo-box", "spin-button", "slider", "calendar",
    "date-editor", "list", "list-box", "tree", "tree-table", "table", "check-box",
    "radio-button", "toggle-button", "switch", "push-button",
}  # fmt: skip

#: Roles whose text content is worth fetching (their name alone does not show their content).
TEXT_ROLES = {
    "text",
    "entry",
    "password-text",
    "paragraph",
    "heading",
    "label",
    "static",
    "document-text",
    "document-web",
    "terminal",
    "spin-button",
    "combo-box",
    "list-item",
    "table-cell",
    "section",
    "caption",
    "link",
    "block-quote",
}


@dataclass
class WindowTree:
    app: AppTree
    frame: str  # object path of the window's frame
    offset: tuple[int, int]  # added to extents (GTK4 reports window-relative coordinates)


class Accessibility:
    """The AT-SPI side of the desktop."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus
        self.reader = TreeReader(bus)
        self.details = DetailReader(bus)
        self._last_use: dict[tuple[str, str], float] = {}
        self.cache = TreeCache()
        self._locate_problem = ""
        bus.bus.add_message_handler(self._on_event)

    def _on_event(self, msg: Message) -> None:
        self.cache.on_message(msg)

    # -- apps and frames -------------------------------------------------------------------

    async def buses_for_pid(self, pid: int) -> list[str]:
        buses = await self.bus.app_buses()
        pids = await asyncio.gather(*(self.bus.pid_of(b) for b in buses))
        return [b for b, p in zip(buses, pids, strict=True) if p == pid]

    async def frames_of(self, bus_name: str) -> list[tuple[str, str, int, tuple[int, ...]]]:
        """(path, name, states, extents) of an app's top-level frames."""
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
            if role_name(int(role[0])) not in FRAME_ROLES:
                return None
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
        self._locate_problem = (
            ""
            if buses
            else "the app is not on the accessibility bus (it has no AT-SPI "
            "support, or accessibility is switched off for it)"
        )
        best: tuple[int, str, str, tuple[int, ...]] | None = None
        for bus_name in buses:
            try:
                frames = await self.frames_of(bus_name)
            except AtspiTimeout:
                self._locate_problem = "the app did not answer in time (it may be busy or hung)"
                continue
            except AtspiCallError as exc:
                self._locate_problem = f"the app refused to list its windows ({exc.error_name})"
                continue
            for path, name, _states, extents in frames:
                score = 0
                if name and name == window.title:
                    score += 4
                elif name and window.title and (name in window.title or window.title in name):
                    score += 2
                if extents and _close(extents, window.geometry):
                    score += 2
                if len(frames) == 1:
                    score += 1
                if score and (best is None or score > best[0]):
                    best = (score, bus_name, path, extents)
        if best is None:
            return None
        _, bus_name, path, extents = best
        offset = (0, 0)
        geo = window.geometry
        if extents and extents[0] == 0 and extents[1] == 0 and (geo.x, geo.y) != (0, 0):
            offset = (geo.x, geo.y)  # window-relative extents (GTK4): translate to the screen
        return bus_name, path, offset

    # -- reading ---------------------------------------------------------------------------

    async def read_window(
        self, window: WindowInfo, *, timeout: float = 5.0, fresh: bool = False
    ) -> tuple[Node | None, bool, list[str]]:
        """The window's tree as Nodes, whether it is partial, and what went wrong.

        The first read of an app is a full (cold) read; later reads apply only what AT-SPI
        events said changed (warm). ``fresh=True`` forces a full read."""
        deadline = time.monotonic() + timeout
        where = None if fresh else await self._cached_location(window)
        if where is None:
            located = await self.locate(window)
            if located is None:
                return None, True, [self._locate_problem or "no accessible frame found"]
            bus_name, frame, offset = located
            where = Located(bus_name, frame, offset, (window.geometry.x, window.geometry.y))
            self.cache.located[window.xid] = where
        self.cache.watch(where.bus)
        app = self.cache.trees.get(where.bus)
        dirty = self.cache.take(where.bus)
        if (window.geometry.x, window.geometry.y) != where.origin:
            dirty.all_extents = True  # the window moved: screen positions changed
            where.origin = (window.geometry.x, window.geometry.y)
        if app is None or fresh or dirty.full or app.partial or where.frame not in app.nodes:
            app = await self.reader.read_app(where.bus, deadline=deadline, lazy_hidden=True)
        else:
            await self.reader.refresh(app, dirty, deadline=deadline)
        if where.frame not in app.nodes:
            self.cache.drop(where.bus)
            return None, True, [*app.problems, "the window's frame vanished while reading"]
        self.cache.store(app)
        shown = [p for p in _rendered(app, where.frame) if app.shown(p)]
        await self.details.fill_extents(app, shown)
        textual = [p for p in shown if _wants_text(app.nodes[p])]
        await self.details.fill_text(app, textual)
        unnamed = [
            p for p in shown
            if not app.nodes[p].name and app.nodes[p].role_name in LABELLED_ROLES
        ]  # fmt: skip
        await self.details.fill_labels(app, unnamed)
        if app.partial:
            self.cache.drop(where.bus)  # do not build on an incomplete tree
        root = build_nodes(WindowTree(app, where.frame, where.offset), window)
        return root, app.partial, app.problems

    async def _cached_location(self, window: WindowInfo) -> Located | None:
        """Where a window read before lives, if that still holds (one liveness call)."""
        where = self.cache.located.get(window.xid)
        if where is None:
            return None
        dirty = self.cache.dirty.get(where.bus)
        if dirty is not None and dirty.frames:
            del self.cache.located[window.xid]
            return None
        try:
            await self.bus.call(where.bus, where.frame, "Accessible", "GetState", timeout=1.0)
        except (AtspiCallError, AtspiTimeout, DesktopError):
            self.cache.drop(where.bus)
            return None
        return where

    # -- live checks and actions ------------------------------------------------------------

    async def inspect(self, key: tuple[str, str], pid: int | None = None) -> LiveElement | None:
        bus_name, path = key
        try:
            role, name, state, parent = await asyncio.gather(
                self.bus.call(bus_name, path, "Accessible", "GetRole"),
                self.bus.get_property(bus_name, path, "Accessible", "Name"),
                self.bus.call(bus_name, path, "Accessible", "GetState"),
                self.bus.get_property(bus_name, path, "Accessible", "Parent"),
            )
        except AtspiCallError as exc:
            if exc.gone or exc.unsupported:
                return None
            raise
        bits = state_bits(state[0])
        if bits & S_DEFUNCT:
            return None
        real_pid = pid if pid is not None else (await self.bus.pid_of(bus_name) or 0)
        pbus, ppath = parent
        return LiveElement(
            key=key,
            pid=real_pid,
            role=role_name(int(role[0])),
            name=str(name),
            parent_key=(str(pbus), str(ppath)) if pbus else None,
            states=state_names(bits),
            bounds=None,
        )

    async def extents(self, key: tuple[str, str]) -> Rect | None:
        try:
            body = await self.bus.call(key[0], key[1], "Component", "GetExtents", "u", [0])
        except AtspiCallError:
            return None
        x, y, w, h = (int(v) for v in body[0])
        return Rect(x, y, w, h)

    async def interfaces(self, key: tuple[str, str]) -> frozenset[str]:
        body = await self.bus.call(key[0], key[1], "Accessible", "GetInterfaces")
        return frozenset(str(n).rsplit(".", 1)[-1] for n in body[0])

    async def activate(self, key: tuple[str, str]) -> str | None:
        """Run the element's activating action; the action's name, or None if it has none."""
        bus_name, path = key
        try:
            body = await self.bus.call(bus_name, path, "Action", "GetActions")
        except AtspiCallError as exc:
            if exc.unsupported:
                return None
            raise
        names = [str(a[0]).lower() for a in body[0]]
        if not names:
            return None
        index = next(
            (names.index(n) for n in ACTIVATE_ACTIONS if n in names),
            0,
        )
        await self._pace(key)
        ok = await self.bus.call(bus_name, path, "Action", "DoAction", "i", [index])
        if not ok[0]:
            # GTK ignores an activation while the previous one is still "pressed": retry once
            await asyncio.sleep(0.3)
            ok = await self.bus.call(bus_name, path, "Action", "DoAction", "i", [index])
            if not ok[0]:
                raise ActionFailed(f"the app refused the action {names[index]!r}")
        return names[index] or "default"

    async def _pace(self, key: tuple[str, str]) -> None:
        """GTK swallows a second activation of the same widget within ~250 ms: space them."""
        last = self._last_use.get(key)
        now = time.monotonic()
        if last is not None and now - last < 0.3:
            await asyncio.sleep(0.3 - (now - last))
        self._last_use[key] = time.monotonic()

    async def set_text(
        self, key: tuple[str, str], text: str, *, masked: bool = False
    ) -> str | None:
        """Replace the element's text through EditableText; how it was done, or None.

        Delete + insert first (it emits the same signals as typing, so dialogs that enable
        their buttons on input notice it), then SetTextContents; each checked by reading back.
        """
        bus_name, path = key
        try:
            count = await self.bus.get_property(bus_name, path, "Text", "CharacterCount")
            await self.bus.call(bus_name, path, "EditableText", "DeleteText", "ii", [0, int(count)])
            if text:
                await self.bus.call(
                    bus_name,
                    path,
                    "EditableText",
                    "InsertText",
                    "isi",
                    [0, text, len(text.encode())],
                )
            if shows(await self.read_text(key), text, masked):
                return "EditableText delete+insert"
        except AtspiCallError as exc:
            if exc.gone:
                raise
        try:
            body = await self.bus.call(
                bus_name, path, "EditableText", "SetTextContents", "s", [text]
            )
        except AtspiCallError as exc:
            if exc.unsupported:
                return None
            raise
        if body[0] and shows(await self.read_text(key), text, masked):
            return "EditableText.SetTextContents"
        return None

    async def read_text(self, key: tuple[str, str]) -> str | None:
        try:
            body = await self.bus.call(key[0], key[1], "Text", "GetText", "ii", [0, -1])
        except AtspiCallError:
            return None
        return str(body[0])

    async def grab_focus(self, key: tuple[str, str]) -> bool:
        try:
            body = await self.bus.call(key[0], key[1], "Component", "GrabFocus")
        except AtspiCallError:
            return False
        return bool(body[0])

    async def element_at(self, window: WindowInfo, x: int, y: int) -> LiveElement | None:
        """The deepest element of the window's frame at screen point (x, y)."""
        located = await self.locate(window)
        if located is None:
            return None
        bus_name, path, offset = located
        px, py = x - offset[0], y - offset[1]
        key = (bus_name, path)
        for _ in range(64):
            try:
                body = await self.bus.call(
                    bus_name, key[1], "Component", "GetAccessibleAtPoint", "iiu", [px, py, 0]
                )
            except (AtspiCallError, AtspiTimeout):
                break
            nbus, npath = body[0]
            if not nbus or npath in ("/org/a11y/atspi/null", key[1]):
                break
            key = (str(nbus), str(npath))
        return await self.inspect(key, window.pid)


def _wants_text(node: RawNode) -> bool:
    """Whether a shown node's text content is worth a call: fields always; other text roles
    only when their name does not already carry the text; ranges for their value."""
    if wants_value(node):
        return True
    if not node.has("Text"):
        return False
    if node.has("EditableText") or node.states & S_EDITABLE:
        return True
    return node.role_name in TEXT_ROLES and not node.name


def shows(shown: str | None, expected: str, masked: bool) -> bool:
    """Whether a field's text is ``expected`` (password fields show one mask per character)."""
    if shown is None:
        return False
    return len(shown) == len(expected) if masked else shown == expected


def _close(extents: tuple[int, ...], geo: Rect, slack: int = 40) -> bool:
    if len(extents) != 4:
        return False
    x, y, w, h = extents
    return (
        abs(w - geo.width) <= slack
        and abs(h - geo.height) <= slack
        and ((abs(x - geo.x) <= slack and abs(y - geo.y) <= slack) or (x, y) == (0, 0))
    )


def _rendered(app: AppTree, frame: str) -> list[str]:
    """The frame and the nodes a read can show under it: the walk of :func:`build_nodes`,
    which does not enter hidden subtrees (a warm read of Writer walks 190 of 1,600 nodes)."""
    out, seen, stack = [frame], {frame}, [frame]
    while stack:
        for kid in _shown_children(app, stack.pop()):
            if kid not in seen:
                seen.add(kid)
                out.append(kid)
                stack.append(kid)
    return out


def build_nodes(wt: WindowTree, window: WindowInfo) -> Node:
    """Turn the raw tree under the frame into Node objects (screen coordinates)."""
    app = wt.app
    dx, dy = wt.offset

    def make(raw: RawNode, parent: tuple[str, str] | None) -> Node:
        bounds = None
        if raw.extents is not None:
            x, y, w, h = raw.extents
            bounds = Rect(x + dx, y + dy, w, h)
        return Node(
            key=(app.bus, raw.path),
            role=raw.role_name,
            name=raw.name,
            description=raw.description,
            states=state_names(raw.states),
            bounds=bounds,
            text=raw.text,
            value=raw.value,
            interfaces=raw.interfaces,
            parent_key=parent,
            label=raw.label,
        )

    root = make(app.nodes[wt.frame], None)
    stack: list[tuple[Node, str]] = [(root, wt.frame)]
    seen = {wt.frame}
    while stack:
        node, path = stack.pop()
        for kid in _shown_children(app, path):
            if kid in seen:
                continue
            seen.add(kid)
            child = make(app.nodes[kid], node.key)
            node.children.append(child)
            stack.append((child, kid))
    return root


def _shown_children(app: AppTree, path: str, in_combo: bool = False) -> list[str]:
    """The children on screen; hidden subtrees are dropped, except inside a combo box, where
    the hidden popup's shown items (the selected one) are lifted into its place."""
    in_combo = in_combo or app.nodes[path].role_name == "combo-box"
    out: list[str] = []
    for kid in app.children_of(path):
        if app.shown(kid):
            out.append(kid)
        elif in_combo and not app.nodes[kid].stub and app.nodes[kid].children:
            out.extend(_shown_children(app, kid, in_combo=True))
    return out
