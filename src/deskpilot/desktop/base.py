"""The ``Desktop`` seam: everything deskpilot needs from a machine, as one async interface.

:class:`~deskpilot.desktop.facade.DesktopFacade` implements it by composing a backend's ports
(:mod:`deskpilot.desktop.ports`) with the skills every backend gets
(:mod:`deskpilot.desktop.skills`); :func:`deskpilot.desktop.registry.open_desktop` opens the one
the settings choose. ``FakeDesktop`` (desktop/fake.py) implements it in memory for unit tests of
the layers above. Tools, the agent loop, the MCP server and the native computer-use executor
only ever talk to this interface. This module also holds the values that cross it (windows,
nodes, snapshots, outcomes); windows are named by backend-neutral handles and elements by
backend-neutral keys (:mod:`deskpilot.desktop.ports.identity`).

Coordinates are screen pixels unless a name says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from deskpilot.desktop.caret import Caret
from deskpilot.desktop.grid import Grid
from deskpilot.desktop.ports.identity import ElementKey, WindowHandle

MouseButton = Literal["left", "right", "middle", "back", "forward"]
ScrollDirection = Literal["up", "down", "left", "right"]
#: Pointer input at one point, aimed at a window (see Desktop.point_at).
PointerAction = Literal["click", "double_click", "right_click", "hover"]


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    width: int
    height: int

    @property
    def center(self) -> tuple[int, int]:
        return (self.x + self.width // 2, self.y + self.height // 2)

    @property
    def empty(self) -> bool:
        return self.width <= 0 or self.height <= 0

    def contains(self, x: int, y: int) -> bool:
        return self.x <= x < self.x + self.width and self.y <= y < self.y + self.height

    def intersects(self, other: Rect) -> bool:
        return not (
            self.empty
            or other.empty
            or self.x >= other.x + other.width
            or other.x >= self.x + self.width
            or self.y >= other.y + other.height
            or other.y >= self.y + self.height
        )

    def offset(self, dx: int, dy: int) -> Rect:
        return Rect(self.x + dx, self.y + dy, self.width, self.height)


@dataclass(frozen=True)
class AppIdentity:
    """Who owns a window: everything a blocklist entry may match."""

    name: str  # human name: desktop-file Name, else WM_CLASS class, else executable
    app_id: str  # desktop-file id without ".desktop", else WM_CLASS class, else executable
    wm_class: tuple[str, ...] = ()  # (instance, class)
    executable: str = ""  # basename of /proc/PID/exe (or argv[0])

    def match_keys(self) -> set[str]:
        keys = {self.name, self.app_id, self.executable, *self.wm_class}
        return {k.casefold() for k in keys if k}


@dataclass(frozen=True)
class WindowInfo:
    """A top-level window, named by its backend's handle (X11: the X window id)."""

    handle: WindowHandle
    pid: int
    title: str
    app: AppIdentity
    geometry: Rect  # client area, root coordinates
    active: bool = False
    hidden: bool = False  # minimized / iconic (_NET_WM_STATE_HIDDEN)
    desktop: int = 0
    #: False where the compositor does not say where windows are (GNOME on Wayland):
    #: ``geometry`` is then the window's own, at (0, 0), and a capture of it shows it alone
    placed: bool = True

    @property
    def window_id(self) -> str:
        """The readable form: ``pid/title``."""
        return f"{self.pid}/{self.title}"

    @property
    def stable_id(self) -> str:
        """The stable form: ``pid/handle`` (in decimal; X11: the X window id)."""
        return f"{self.pid}/{self.handle}"


@dataclass(frozen=True)
class AppEntry:
    """An installed app, from a desktop file."""

    app_id: str  # desktop-file id without ".desktop", e.g. org.gnome.Calculator
    name: str
    generic_name: str = ""
    exec_argv: tuple[str, ...] = ()
    wm_class: str = ""  # StartupWMClass
    keywords: tuple[str, ...] = ()
    path: str = ""
    no_display: bool = False  # hidden from menus (helpers, settings dialogs)

    @property
    def executable(self) -> str:
        return self.exec_argv[0].rsplit("/", 1)[-1] if self.exec_argv else ""


@dataclass
class OpenedDocument:
    """The window a document opened in, and what the caller should know about it."""

    window: WindowInfo
    note: str = ""


@dataclass
class Node:
    """One accessible object as read from the tree.

    ``key`` identifies it (:data:`~deskpilot.desktop.ports.identity.ElementKey`: AT-SPI's bus
    name and object path); element IDs are derived from it. ``text`` is the content of
    text-bearing nodes (entries, documents, labels whose name is empty), ``value`` the current
    value of ranges (sliders, spin buttons).
    """

    key: ElementKey
    role: str
    name: str = ""
    description: str = ""
    states: frozenset[str] = frozenset()
    bounds: Rect | None = None
    text: str | None = None
    value: str | None = None
    actions: tuple[str, ...] = ()
    interfaces: frozenset[str] = frozenset()
    children: list[Node] = field(default_factory=list)
    parent_key: ElementKey | None = None
    label: str = ""  # the name of the element labelling it, when its own name is empty
    #: for a nameless element with nothing to read: what it is in the page ("span.retweet")
    hint: str = ""
    #: for a scrollable area whose content is clipped: where more is ("below", "above",
    #: "above and below")
    more: str = ""
    #: for a virtual table or list: the part of it read (its children are that part)
    grid: Grid | None = None
    #: for a cell of a virtual table: its (row, column)
    cell: tuple[int, int] | None = None

    @property
    def primary_action(self) -> str:
        """The first (default) action's name, lower-cased ("" when it offers none)."""
        return self.actions[0].lower() if self.actions else ""

    def walk(self) -> list[Node]:
        out: list[Node] = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    @property
    def editable(self) -> bool:
        return "editable" in self.states


#: Roles of the parts inside a control (a button's label or icon, a cell's text): a press on
#: one of them is a press on the control, so whoever judges or aims at a press looks at their
#: parents too (the pointer tools, the native computer tools and the policy's places).
WRAPPER_ROLES = frozenset({"label", "text", "icon", "image", "static", "filler", "panel"})

#: The problem a snapshot names when the app did not answer at all (busy, frozen or hung).
NOT_ANSWERING = "the app did not answer in time (it may be busy or hung)"
#: The problem a snapshot names when the window's app is not on the accessibility bus (never
#: was, or has left it: an app exiting, its window listed a moment longer).
OFF_THE_BUS = (
    "the app is not on the accessibility bus (it has no AT-SPI support, or accessibility is "
    "switched off for it)"
)


@dataclass
class Snapshot:
    """A read of one window's accessibility tree."""

    window: WindowInfo
    root: Node | None
    partial: bool = False  # some calls timed out or failed: the tree may be incomplete
    problems: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0
    #: the window's last read handed out again: nothing changed since (the same nodes)
    unchanged: bool = False

    @property
    def unanswered(self) -> bool:
        """Nothing could be read because the app did not answer (:data:`NOT_ANSWERING`)."""
        return self.root is None and NOT_ANSWERING in self.problems

    @property
    def off_the_bus(self) -> bool:
        """Nothing could be read because the app is not on the bus (:data:`OFF_THE_BUS`)."""
        return self.root is None and OFF_THE_BUS in self.problems

    def nodes(self) -> list[Node]:
        return self.root.walk() if self.root is not None else []

    def find(self, key: tuple[str, str]) -> Node | None:
        for node in self.nodes():
            if node.key == key:
                return node
        return None


@dataclass(frozen=True)
class LiveElement:
    """What the element behind a key is *now* (checked before acting on it)."""

    key: tuple[str, str]
    pid: int
    role: str
    name: str
    parent_key: tuple[str, str] | None
    states: frozenset[str]
    bounds: Rect | None


@dataclass(frozen=True)
class ActionOutcome:
    """How an action was carried out."""

    method: Literal["atspi", "input"]
    detail: str = ""
    activated: bool = False  # the target window was activated for raw input
    restored: str | None = None  # the window ID re-activated afterwards, if any


@dataclass(frozen=True)
class Typed:
    """What typing into a named element did: how many characters were sent while it held
    the focus (all of them unless ``stopped``), and where the focus was when typing stopped
    (None: unknown)."""

    outcome: ActionOutcome
    reached: int
    stopped: bool = False
    focus: tuple[str, str] | None = None
    #: characters sent after the focus left (a chunk's rest): they went where it went
    spilled: int = 0
    #: False when how many of the last chunk reached the element cannot be told: ``spilled``
    #: is then the whole chunk, some of which may have reached it
    spill_known: bool = True


@runtime_checkable
class Desktop(Protocol):
    """The machine deskpilot works on. All methods are coroutines; none reads os.environ."""

    #: Whether a window an action opens may reach the screen only after its app went quiet (a
    #: dialog LibreOffice builds after its events stop): then an action that may open one
    #: (Enter, ctrl+s…) waits a moment for it. False where an action's windows are there when
    #: it returns (the in-memory fakes).
    late_windows: bool

    # windows and apps ---------------------------------------------------------------------
    async def list_windows(self) -> list[WindowInfo]: ...

    async def active_window(self) -> WindowInfo | None: ...

    async def activate(self, window: WindowInfo) -> bool: ...

    async def apps(self) -> list[AppEntry]: ...

    async def launch(self, app: AppEntry, *, timeout: float = 30.0) -> WindowInfo: ...

    async def open_document(
        self, app: AppEntry, document: str, *, timeout: float = 60.0
    ) -> OpenedDocument:
        """Open a file (a path, or a URL) in the app and wait for the window showing it (a
        single-instance app's running instance may own it). InvalidArguments for a missing
        file; a note when the window that came is not the document's (a dialog)."""
        ...

    async def open_urls(
        self, urls: Sequence[str], *, browser: str = "agent", timeout: float = 30.0
    ) -> WindowInfo: ...

    # accessibility ------------------------------------------------------------------------
    async def snapshot(
        self,
        window: WindowInfo,
        *,
        timeout: float = 5.0,
        fresh: bool = False,
        whole: tuple[str, str] | None = None,
    ) -> Snapshot:
        """Read the window's tree. Long-lived desktops keep it current from AT-SPI events and
        re-read only what changed; ``fresh=True`` forces a full read. ``whole``: an element
        whose subtree is read in full, what is scrolled out of view too (a zoomed read)."""
        ...

    async def inspect(self, key: tuple[str, str]) -> LiveElement | None:
        """The element behind ``key`` now, or None when it no longer exists."""
        ...

    async def click_element(self, window: WindowInfo, key: tuple[str, str]) -> ActionOutcome: ...

    async def fill_element(
        self, window: WindowInfo, key: tuple[str, str], text: str
    ) -> ActionOutcome: ...

    async def select_text(
        self,
        window: WindowInfo,
        key: tuple[str, str],
        *,
        text: str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> Caret:
        """Select ``text`` (in the element or one of its parts) or characters ``start``..
        ``end`` of its own text; the caret and selection the app shows after it (the
        selection's element is ``Caret.key``). Raises ActionFailed when the text is not there,
        is there more than once, or the app did not take the selection."""
        ...

    async def read_text(self, key: tuple[str, str]) -> str | None: ...

    async def cell_at(self, key: tuple[str, str], row: int, col: int) -> tuple[str, str] | None:
        """The key of a table's cell (row, column: 0-based), on screen or not; None if the
        element is not a table or has no such cell."""
        ...

    async def read_cells(
        self,
        window: WindowInfo,
        key: tuple[str, str],
        first: tuple[int, int],
        last: tuple[int, int],
    ) -> tuple[Node | None, list[str]]:
        """A table (its ``grid`` set) with the cells of the range first..last (inclusive
        (row, column) corners, cut to the reader's cell limit) as children; and what went
        wrong (None when it is not a table)."""
        ...

    async def focus_element(self, window: WindowInfo, key: tuple[str, str]) -> bool:
        """Give the element keyboard focus (no pointer); False if it cannot take focus."""
        ...

    async def focused_element(self, window: WindowInfo) -> tuple[str, str] | None:
        """The key of the element the window's app last said has the keyboard focus (None
        when it has said nothing since this desktop opened)."""
        ...

    async def text_caret(self, key: tuple[str, str]) -> Caret | None:
        """The caret and selections in the element's text (None: it has no text caret)."""
        ...

    async def covering(self, window: WindowInfo, key: tuple[str, str]) -> str | None:
        """What covers the element where a person would click it (an overlay or modal of
        the same page), described; None when nothing does or it cannot be told."""
        ...

    async def settle(self, window: WindowInfo, since: float) -> bool:
        """Wait (briefly) until the window's app has reacted to what was done since ``since``
        (a ``time.monotonic()`` value) and gone quiet. False if it reported nothing."""
        ...

    def events_seen(self) -> int:
        """How many accessibility events (of any app) have come so far: whether anything
        changed while a read was taken."""
        ...

    # keyboard and pointer, aimed at a window (activated for the duration) ------------------
    async def type_text(self, window: WindowInfo, text: str) -> ActionOutcome: ...

    async def type_into(self, window: WindowInfo, key: tuple[str, str], text: str) -> Typed:
        """Type into the element (which has the focus), checking as the keys go that it
        still has it; stop where it does not (the rest would go to another control)."""
        ...

    async def press_keys(self, window: WindowInfo, keys: Sequence[str]) -> ActionOutcome:
        """Press a combination (key names of :mod:`~deskpilot.desktop.ports.keys`, modifiers
        first) together, then release."""
        ...

    async def scroll(
        self,
        window: WindowInfo,
        direction: ScrollDirection,
        steps: int,
        key: tuple[str, str] | None = None,
    ) -> tuple[ActionOutcome, bool]:
        """Scroll the element ``key`` (else the window's main area) by ``steps`` wheel notches
        or the like; returns (outcome, whether its content moved)."""
        ...

    # pointer input aimed at a window (activated for the duration, like the keyboard) -------
    async def element_point(self, window: WindowInfo, key: tuple[str, str]) -> tuple[int, int]:
        """A screen point on the element's visible part (its centre), for pointer input;
        ActionFailed when no part of it is inside the window."""
        ...

    async def point_at(
        self, window: WindowInfo, x: int, y: int, action: PointerAction = "click"
    ) -> ActionOutcome:
        """Click, double-click, right-click or move the pointer (hover) at screen point (x, y)
        of ``window``; the pointer stays there."""
        ...

    async def drag_in(
        self, window: WindowInfo, start: tuple[int, int], end: tuple[int, int]
    ) -> ActionOutcome:
        """Press the left button at ``start``, move to ``end`` in small steps, release."""
        ...

    # pixels -------------------------------------------------------------------------------
    async def screen_size(self) -> tuple[int, int]: ...

    async def capture(self, window: WindowInfo | None = None) -> bytes:
        """PNG of one window (client area) or, with None, of the whole screen."""
        ...

    async def pointer_click(
        self,
        x: int,
        y: int,
        *,
        button: MouseButton = "left",
        count: int = 1,
        modifiers: Sequence[str] = (),
    ) -> None: ...

    async def pointer_move(self, x: int, y: int) -> None: ...

    async def pointer_button(self, button: MouseButton, down: bool) -> None: ...

    async def pointer_position(self) -> tuple[int, int]: ...

    async def pointer_drag(
        self, path: Sequence[tuple[int, int]], *, modifiers: Sequence[str] = ()
    ) -> None: ...

    async def wheel(
        self, x: int, y: int, dx: int, dy: int, *, modifiers: Sequence[str] = ()
    ) -> None:
        """Wheel notches at (x, y): dy > 0 scrolls down, dx > 0 scrolls right."""
        ...

    async def key_event(self, keysym_names: Sequence[str], down: bool) -> None:
        """Press or release keys named in the key vocabulary."""
        ...

    async def type_raw(self, text: str) -> None:
        """Type into whatever has focus now (no activation)."""
        ...

    async def window_at(self, x: int, y: int) -> WindowInfo | None: ...

    async def element_at(
        self, x: int, y: int, window: WindowInfo | None = None
    ) -> LiveElement | None:
        """The deepest element at screen point (x, y): of ``window`` when given (whatever
        covers it there), else of the window on top at the point."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class OpenedDesktop(Desktop, Protocol):
    """A desktop a surface opened itself (:func:`deskpilot.desktop.registry.open_desktop`):
    besides the Desktop, what its owner may ask of it."""

    @property
    def backend(self) -> str:
        """The name of the backend it was built from ("x11", …)."""
        ...

    def lost(self) -> str | None:
        """Why it can no longer be used (the display or its accessibility is gone)."""
        ...

    def launched_pids(self) -> list[int]:
        """The apps it started that still run."""
        ...

    async def window_handles(self) -> dict[WindowHandle, int]:
        """Each window's handle with its pid, cheaply: to tell new windows later
        (:func:`~deskpilot.desktop.ports.identity.is_new`)."""
        ...

    async def wait_tree_ready(self, window: WindowInfo, timeout: float = 20.0) -> None:
        """Wait until the window's accessible tree is there and stable."""
        ...

    async def minimize(self, window: WindowInfo) -> None: ...

    async def close_window(self, window: WindowInfo) -> None: ...

    def agent_browser_profile(self) -> Path:
        """The agent browser's profile directory."""
        ...
