"""The accessibility port: apps' trees, live elements, their actions, text, values and tables.

Three kinds of members:

* **Windows' trees** — ``read_window`` reads a window's tree as
  :class:`~deskpilot.desktop.base.Node` s (long-lived backends keep it current from events and
  re-read only what changed; ``fresh`` forces a full read); ``read_cells`` a range of a virtual
  table; ``element_at`` the deepest element at a screen point; ``origin`` how far the app's
  element coordinates are from the screen's (GTK 4 reports them window-relative); ``web_engine``
  whether a web engine draws the window (its events miss scrolls, its pages put overlays over
  their content; None before the window was first read); ``focused`` the element the window's
  app last said has the focus; ``settle`` waits until the app went quiet after something was
  done; ``unreadable`` why an app whose window is up can never be read here, when that is
  certain already (a launch then says so at once instead of waiting for a tree).
* **Element checks and actions** with their own judgement (they swallow what they can answer
  with None/False): ``inspect`` (None once gone), ``extents``, ``text_extents``,
  ``read_text``/``deep_text``, ``caret``, ``select_text``, ``action_names``, ``activate``
  (the activating action's name; None when the element has none of its own), ``set_text``
  (replace the text without the keyboard, checked; None when it cannot), ``editable_parts``,
  ``grab_focus``,
  ``scroll_into_view``, ``cell_at``, ``cell_place``.
* **Element primitives** — ``children``, ``child_count``, ``child_at``, ``parent``, ``role``,
  ``name``, ``states``, ``attributes``, ``interfaces``, ``value``, ``selected_child``,
  ``do_action``: one question each, raising :class:`~deskpilot.errors.ElementCallFailed` when
  the app refuses it (the element is gone, or lacks that ability) and
  :class:`~deskpilot.errors.NotAnswering` when it does not answer in time. The skills walk
  elements with these.

The vocabulary is AT-SPI's, because AT-SPI is the richest of the platform APIs: roles are its
role names (``push-button``, ``document-web``), states its state names (``focused``,
``editable``), interfaces its interface names (``Text``, ``EditableText``, ``Value``,
``Action``, ``Table``, ``Selection``, ``Component``). A backend on another API maps to them
(docs/backends.md has the tables for UI Automation and macOS's AX API).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from deskpilot.desktop.base import LiveElement, Node, Rect, WindowInfo
from deskpilot.desktop.caret import Caret
from deskpilot.desktop.cell_refs import Place
from deskpilot.desktop.ports.identity import ElementKey


@dataclass(frozen=True)
class TreeRead:
    """A window's tree as read: its root (None when nothing could be read), whether some of
    it is missing, and what went wrong."""

    root: Node | None
    partial: bool
    problems: list[str]


@dataclass(frozen=True)
class Settled:
    """What :meth:`Accessibility.settle` saw: whether the app reported anything (and went
    quiet), and whether it announced another window (a dialog it opened) meanwhile."""

    reacted: bool
    new_window: bool = False


def shows(shown: str | None, expected: str, masked: bool) -> bool:
    """Whether a field's text is ``expected`` (password fields show one mask per character):
    how :meth:`Accessibility.set_text` and the skills check a field after filling it."""
    if shown is None:
        return False
    return len(shown) == len(expected) if masked else shown == expected


@runtime_checkable
class Accessibility(Protocol):
    # -- windows' trees ---------------------------------------------------------------------
    async def read_window(
        self,
        window: WindowInfo,
        *,
        timeout: float = 5.0,
        fresh: bool = False,
        whole: ElementKey | None = None,
        popups: Sequence[Rect] = (),
    ) -> TreeRead:
        """The window's tree; ``whole``: an element whose subtree is read in full, what is off
        screen too (a zoomed read), where a read otherwise leaves hidden parts unread;
        ``popups``: where the app's popup windows over it are (:meth:`WindowSystem.popups`):
        what the app shows there (a context menu outside the window's tree) is read too, as
        children of the root."""
        ...

    async def read_cells(
        self, window: WindowInfo, key: ElementKey, first: Place, last: Place
    ) -> tuple[Node | None, list[str]]:
        """A table (its ``grid`` set) with the cells of the range first..last as children, in
        screen coordinates; and what went wrong (None when it is not a table)."""
        ...

    async def element_at(self, window: WindowInfo, x: int, y: int) -> LiveElement | None: ...

    async def origin(self, window: WindowInfo, *, fresh: bool = False) -> tuple[int, int] | None:
        """What to add to an element's extents for screen coordinates; from the last read
        (``fresh``: found again now); None when the window's tree cannot be found."""
        ...

    async def web_engine(self, window: WindowInfo) -> bool | None: ...

    async def focused(self, window: WindowInfo) -> ElementKey | None: ...

    async def settle(self, window: WindowInfo, since: float) -> Settled:
        """Wait (briefly) until the window's app has reacted to what was done since ``since``
        (a ``time.monotonic()`` value) and gone quiet."""
        ...

    def events_seen(self) -> int:
        """How many accessibility events (of any app) have come so far."""
        ...

    async def next_event(self, seen: int, timeout: float) -> int:
        """Return once more than ``seen`` events have come (at once if they have), or after
        ``timeout`` seconds; the count then. What a wait for an app's reaction (a field
        showing typed text, the focus arriving) checks again on, instead of on a timer."""
        ...

    async def unreadable(self, pids: Sequence[int]) -> str | None:
        """Why an app (these processes; its window is up) can never be read here, with what to
        install or set — when that is certain already (a toolkit with no accessibility
        support, a bridge that did not load); None while it may yet be read."""
        ...

    # -- element checks and actions ---------------------------------------------------------
    async def inspect(self, key: ElementKey, pid: int | None = None) -> LiveElement | None:
        """Role, name, states and parent now (``bounds`` None); None once it is gone."""
        ...

    async def extents(self, key: ElementKey) -> Rect | None:
        """The element's box in the app's coordinates (see :meth:`origin`)."""
        ...

    async def text_extents(self, key: ElementKey) -> Rect | None:
        """Where the element's own text is, in the app's coordinates (None: it has none)."""
        ...

    async def read_text(self, key: ElementKey) -> str | None: ...

    async def deep_text(self, key: ElementKey, limit: int = 200) -> str | None:
        """The text with each embedded child replaced by its own text (a web editable area's
        paragraphs, one per line)."""
        ...

    async def caret(self, key: ElementKey) -> Caret | None: ...

    async def select_text(self, key: ElementKey, start: int, end: int) -> bool:
        """Select characters ``start``..``end`` of the element's own text (its first
        selection; the caret at ``end``); whether the app took it (read back with
        :meth:`caret`)."""
        ...

    async def action_names(self, key: ElementKey) -> list[str]:
        """The element's action names, lower-cased."""
        ...

    async def activate(self, key: ElementKey) -> str | None: ...

    async def set_text(self, key: ElementKey, text: str, *, masked: bool = False) -> str | None:
        """Replace the element's text without the keyboard; how it was done (checked by
        reading back), or None."""
        ...

    async def editable_parts(self, key: ElementKey, limit: int = 24) -> list[ElementKey]: ...

    async def grab_focus(self, key: ElementKey) -> bool: ...

    async def scroll_into_view(self, key: ElementKey) -> bool: ...

    async def cell_at(self, key: ElementKey, row: int, col: int) -> ElementKey | None: ...

    async def cell_place(self, table: ElementKey, cell: ElementKey) -> Place | None:
        """The cell's (row, column) as its table reports it; None when it cannot say."""
        ...

    # -- element primitives (raise ElementCallFailed / NotAnswering) ------------------------
    async def children(self, key: ElementKey) -> list[ElementKey]: ...

    async def child_count(self, key: ElementKey) -> int: ...

    async def child_at(self, key: ElementKey, index: int) -> ElementKey: ...

    async def parent(self, key: ElementKey) -> ElementKey | None: ...

    async def role(self, key: ElementKey) -> str: ...

    async def name(self, key: ElementKey) -> str: ...

    async def states(self, key: ElementKey) -> frozenset[str]: ...

    async def attributes(self, key: ElementKey) -> dict[str, str]: ...

    async def labels(self, key: ElementKey) -> list[ElementKey]:
        """The elements that label this one (its LABELLED_BY relation: a ``<label for>``, an
        ``aria-labelledby`` target, a toolkit's mnemonic label)."""
        ...

    async def interfaces(self, key: ElementKey) -> frozenset[str]: ...

    async def value(self, key: ElementKey) -> float: ...

    async def set_value(self, key: ElementKey, value: float) -> None:
        """Set the element's Value (a spin button, a slider): no key, no activation."""
        ...

    async def selected_child(self, key: ElementKey) -> ElementKey | None: ...

    async def do_action(self, key: ElementKey, index: int) -> bool: ...

    # -- the connection ---------------------------------------------------------------------
    def lost(self) -> str | None: ...

    async def close(self) -> None: ...
