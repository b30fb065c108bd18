"""The event-driven cache: keep each app's tree current from AT-SPI events.

A long-lived process (MCP server, agent run) reads a window many times. After the first (cold)
read, events tell which parts of the app's tree changed; the next read fetches only those parts
(children of nodes whose children changed, properties of nodes whose name/state changed, text
of nodes whose text changed, extents that moved) instead of the whole tree. With no event since
the last read a re-read costs one liveness call.

Events come from :meth:`AtspiBus.listen` (object:, window:, focus: registered on the bus).
"""

from __future__ import annotations

from dataclasses import dataclass

from dbus_fast import Message, MessageType

from deskpilot.desktop.atspi.model import AppTree, Dirty

#: More dirty nodes than this, or a structural event we cannot follow: re-read the whole app.
MAX_DIRTY = 400

_EXTENTS_EVENTS = {"BoundsChanged"}
_IGNORED = {
    "TextCaretMoved", "TextSelectionChanged", "AttributesChanged", "TextAttributesChanged",
    "Announcement", "LinkSelected", "TextBoundsChanged",
}  # fmt: skip
_CONTAINER_EVENTS = {
    "SelectionChanged", "ActiveDescendantChanged", "VisibleDataChanged", "ModelChanged",
    "RowInserted", "RowDeleted", "RowReordered", "ColumnInserted", "ColumnDeleted",
    "ColumnReordered",
}  # fmt: skip


@dataclass
class Located:
    bus: str
    frame: str
    offset: tuple[int, int]
    origin: tuple[int, int]  # the X window's position when its extents were read


class TreeCache:
    """Per-app trees plus the changes events have announced since."""

    def __init__(self) -> None:
        self.trees: dict[str, AppTree] = {}
        self.dirty: dict[str, Dirty] = {}
        self.located: dict[int, Located] = {}  # X window id → where its tree lives
        self.watching: set[str] = set()  # apps whose events are recorded (read at least once)

    def on_message(self, msg: Message) -> None:
        if msg.message_type != MessageType.SIGNAL:
            return
        iface = msg.interface or ""
        if not iface.startswith("org.a11y.atspi.Event."):
            return
        bus = msg.sender or ""
        if bus not in self.watching:
            return  # an app we have not read: nothing to keep current
        dirty = self.dirty.setdefault(bus, Dirty())
        dirty.events += 1
        member, path = msg.member or "", msg.path or ""
        kind = str(msg.body[0]) if msg.body else ""
        if iface.endswith(".Window"):
            dirty.frames = True
            if member in ("Move", "Resize", "Maximize", "Restore", "Minimize"):
                dirty.all_extents = True
        elif member in _CONTAINER_EVENTS:
            # a virtual container's selection, active cell or rows changed: its cells change
            # without events of their own (Calc): the read re-reads what it shows
            dirty.containers.add(path)
            if member == "VisibleDataChanged":
                dirty.all_extents = True
            return
        elif iface.endswith(".Focus") or member in _IGNORED:
            return
        elif member == "ChildrenChanged":
            dirty.children.add(path)
        elif member == "PropertyChange":
            if kind == "accessible-parent":
                dirty.full = True
            elif kind in ("accessible-value", "accessible-text"):
                dirty.text.add(path)
            else:
                dirty.props.add(path)
        elif member == "StateChanged":
            dirty.props.add(path)
            if kind in ("sensitive", "enabled"):
                dirty.sensitivity.add(path)
            if kind in ("showing", "visible", "iconified"):
                dirty.extents.add(path)
        elif member == "TextChanged":
            dirty.text.add(path)
        elif member in _EXTENTS_EVENTS:
            if path == "/org/a11y/atspi/accessible/root":
                dirty.all_extents = True
            else:
                dirty.extents.add(path)
        else:
            dirty.props.add(path)
        if dirty.size() > MAX_DIRTY:
            dirty.full = True

    def take(self, bus: str) -> Dirty:
        """The changes announced for ``bus`` since the last call (and forget them)."""
        return self.dirty.pop(bus, Dirty())

    def put_back(self, bus: str, rest: Dirty) -> None:
        """Keep changes a read did not apply (other windows') for a later read."""
        if not (rest.props or rest.children or rest.containers):
            return
        dirty = self.dirty.setdefault(bus, Dirty())
        dirty.props |= rest.props
        dirty.children |= rest.children
        dirty.containers |= rest.containers
        if dirty.size() > MAX_DIRTY:
            dirty.full = True

    def watch(self, bus: str) -> None:
        """Record ``bus``'s events from now on (call before reading it, so that nothing that
        happens during the read is lost)."""
        self.watching.add(bus)

    def store(self, tree: AppTree) -> None:
        self.trees[tree.bus] = tree

    def drop(self, bus: str) -> None:
        self.trees.pop(bus, None)
        self.dirty.pop(bus, None)
        self.watching.discard(bus)
        for xid in [x for x, loc in self.located.items() if loc.bus == bus]:
            del self.located[xid]
