"""What an action did to the app's windows: the dialogs it opened (followed as the target),
the window it closed, and — after Enter in a dialog — whether that dialog closed or stayed.

Issue 10 (item 6): without this, a model learned of a dialog only by listing windows, and a
path typed into a Save As dialog with a newline answered "Typed 64 characters" while the
dialog stayed open.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import LiveElement, WindowInfo
from deskpilot.errors import AppGone, DeskpilotError, NotAnswering
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import first_held_key
from deskpilot.tools.steps import Step

ENTER_KEYS = frozenset({"enter", "return", "kp_enter"})


#: Modifier and key names of a shortcut that commonly opens a window (ctrl+s, alt+f4, f12).
OPENERS = frozenset({"ctrl", "control", "alt", "super", "cmd", "meta"})
#: Keys that with ctrl (and shift) edit or move, never open a window: no wait after them.
EDITING = frozenset({
    "a", "c", "x", "v", "z", "y", "b", "i", "u", "d", "home", "end", "left", "right", "up",
    "down", "backspace", "delete", "tab", "page_up", "page_down", "prior", "next", "space",
})  # fmt: skip
#: How long, after the app went quiet, such a shortcut is given to open a window (a dialog
#: LibreOffice builds after its events stop, on a loaded machine: Save As seen 1 in 4).
OPEN_GRACE_S = 1.0
#: How long it is given in all while the app is still at work on it — it answers slowly
#: (BUSY_S), or its keyboard focus has left the element that had it and gone nowhere else —
#: and its window is still the active one: it is building a window (Calc's Format Cells after
#: ctrl+1 came after the grace on a loaded CI machine, 3 December, and here with soffice
#: starved of CPU, its focus not yet moved when the grace ended).
LATE_WINDOW_S = 6.0
#: An app that takes longer than this to answer a question about its focused element is busy
#: (an idle one answers in a few milliseconds; LibreOffice answers on its main thread).
BUSY_S = 0.2


def may_open_window(steps: list[Step]) -> bool:
    """Whether the last step is a shortcut that commonly opens a window (with a modifier, or
    a function key), or a press of Enter."""
    last = steps[-1] if steps else None
    if last is None or last.action != "shortcut":
        return presses_enter(steps)
    parts = {p.strip().casefold() for p in (last.shortcut or "").split("+")}
    keys = parts - OPENERS - {"shift"}
    if parts & OPENERS <= {"ctrl", "control", "cmd"} and keys <= EDITING:
        return presses_enter(steps)  # ctrl+c, ctrl+shift+right: editing, not a window
    fkey = any(len(p) in (2, 3) and p.startswith("f") and p[1:].isdigit() for p in keys)
    return bool(parts & OPENERS) or fkey or presses_enter(steps)


#: How a control's name says it opens a window (a dialog): "Settings…", "Save As...".
OPENS_DIALOG = ("…", "...")


def opens_dialog(name: str) -> bool:
    """Whether a control's name ends with an ellipsis: by every toolkit's convention, it
    opens a dialog (which may come after the app went quiet, on a loaded machine)."""
    return name.rstrip().endswith(OPENS_DIALOG)


def presses_enter(steps: list[Step]) -> bool:
    """Whether the last step typed a newline or pressed Enter (what submits a dialog)."""
    last = steps[-1] if steps else None
    if last is None:
        return False
    if last.action == "type":
        return (last.text or "").endswith("\n")
    return last.action == "shortcut" and (last.shortcut or "").strip().casefold() in ENTER_KEYS


async def window_changes(
    ctx: ToolContext,
    window: WindowInfo,
    before: dict[int, WindowInfo],
    *,
    enter: bool = False,
    grace: bool = False,
    focus: tuple[str, str] | None = None,
) -> str:
    """Describe windows the action opened or closed; follow a new dialog as the target. After
    Enter, say so when nothing opened or closed (a dialog that stayed open). With ``grace``
    (a shortcut that may open a window), a window still coming is waited for briefly, on a
    desktop whose windows may come late (:attr:`~deskpilot.desktop.base.Desktop.late_windows`);
    longer while the app is still at work on it (:func:`_late_window`: it answers slowly about
    ``focus``, the element it reported focused before the action; its focus left and went
    nowhere, or went into a window not listed yet; it left the accessibility bus)."""
    after = {w.handle: w for w in await ctx.desktop.list_windows()}
    late = grace and ctx.desktop.late_windows  # a fake desktop's windows are never late
    if late and window.handle in after and not _new(after, before, window):
        came = await _late_window(ctx, window, before, focus)
        after = after if came is None else came
    notes = []
    opened = _new(after, before, window)
    for w in opened:
        notes.append(f'A new window opened: "{w.title}" (windowID {w.stable_id}).')
    if opened:
        target = next((w for w in opened if w.active), opened[-1])
        ctx.session.track(target.stable_id)
        notes.append("It is now the tracked target; read it with read_screen_ax.")
    if window.handle not in after:
        notes.append(closed_line(window))
    elif enter and not notes and await _is_dialog(ctx, window):
        # Enter in a dialog: give it a moment to close (saving may come first), then say
        # whether it did
        if await closes(ctx, window):
            notes.append(closed_line(window))
        else:
            notes.append(f'No window opened or closed: the dialog "{window.title}" is still open.')
    return (" " + " ".join(notes)) if notes else ""


#: Roles of a window's accessible root that make it a dialog.
DIALOG_ROLES = frozenset({"dialog", "file-chooser", "alert", "color-chooser", "font-chooser"})
#: How long a window Enter was pressed in is given to close before it is said to stay open;
#: and a window whose app left the accessibility bus, to leave the window list (the window
#: server hears of an app's exit after the bus does: a moment later on a loaded machine).
CLOSE_WAIT_S = 2.0


def _new(
    after: dict[int, WindowInfo], before: dict[int, WindowInfo], window: WindowInfo
) -> list[WindowInfo]:
    return [w for x, w in after.items() if x not in before and w.pid == window.pid]


async def _late_window(
    ctx: ToolContext,
    window: WindowInfo,
    before: dict[int, WindowInfo],
    focus: tuple[str, str] | None = None,
) -> dict[int, WindowInfo] | None:
    """The windows once one of the app's opened (or the window closed) within OPEN_GRACE_S,
    else None; within LATE_WINDOW_S while the app is still at work (:func:`_at_work`: asked
    about ``focus``, the element it reported focused before the action, else one the model
    holds an ID for) and its window the active one — for signs that pass on their own, at most
    their own wait (WAITS) from when they were first seen."""
    grace_ends = time.monotonic() + OPEN_GRACE_S
    asked = focus or first_held_key(ctx, window)
    first_seen: dict[str, float] = {}
    tops: dict[tuple[str, str], tuple[LiveElement, LiveElement] | None] = {}

    async def coming() -> list[dict[int, WindowInfo]] | None:
        """[the windows] once one opened or the window closed (the list may then be empty:
        it was the desktop's only one); [] to end the wait with no news; None: wait on."""
        now = {w.handle: w for w in await ctx.desktop.list_windows()}
        if _new(now, before, window) or window.handle not in now:
            return [now]
        if time.monotonic() < grace_ends:
            return None
        if asked is None or not now[window.handle].active or any(x not in before for x in now):
            # no news: nothing to ask the app about, another window is active (the one input
            # restored), or another app's opened
            return []
        # no news also when the app is idle, its focus where it was or elsewhere in it
        why = await _at_work(ctx, window, asked, focus, tops)
        if not why:
            return []
        seen = first_seen.setdefault(why, time.monotonic())
        return [] if time.monotonic() - seen >= WAITS.get(why, LATE_WINDOW_S) else None

    try:
        found = await async_wait_for(coming, timeout=LATE_WINDOW_S, what="a window", interval=0.02)
    except WaitTimeout:
        return None
    return found[0] if found else None


#: Signs that the app is at work on a window that end by themselves, and how long each is
#: waited on once seen: an app gone from the bus is exiting (its window leaves the list within
#: CLOSE_WAIT_S), and a window whose element took the focus is listed within WINDOW_LAG_S.
WINDOW_LAG_S = 1.0
WAITS = {"left": CLOSE_WAIT_S, "elsewhere": WINDOW_LAG_S}


async def _at_work(
    ctx: ToolContext,
    window: WindowInfo,
    asked: tuple[str, str],
    focus: tuple[str, str] | None,
    tops: dict[tuple[str, str], tuple[LiveElement, LiveElement] | None],
) -> str:
    """Why the app is still at work on the action, "" if it is not: it answers a question
    about ``asked`` (one of its elements) slowly or not at all ("busy"), it left the bus
    ("left"), the ``focus`` it reported before the action has left and gone nowhere ("away"),
    or the focus went into another top-level window than ``asked``'s ("elsewhere": one its
    toolkit focused before the window list showed it). ``tops``: the top-level windows of
    elements, as found so far."""
    start = time.monotonic()
    try:
        await ctx.desktop.inspect(asked)
    except NotAnswering:
        return "busy"
    except AppGone:
        return "left"  # exiting: its window about to go
    except DeskpilotError:
        return ""  # the element is gone: the next listing tells
    if time.monotonic() - start > BUSY_S:
        return "busy"
    now = await ctx.desktop.focused_element(window)
    if now is not None and now != focus:
        # a dialog mapped on a loaded machine: its first focus event came before it was listed
        return "elsewhere" if await _in_another_window(ctx, asked, now, tops) else ""
    return "away" if focus is not None and now is None else ""


#: Roles of a top-level element that is no window the window list shows (a popup menu, a
#: tooltip) or of a focused element in one: the focus there is no window coming.
NOT_LISTED = frozenset({"window", "menu", "popup-menu", "menu-item", "check-menu-item",
                        "radio-menu-item", "tool-tip"})  # fmt: skip


async def _in_another_window(
    ctx: ToolContext,
    here: tuple[str, str],
    key: tuple[str, str],
    tops: dict[tuple[str, str], tuple[LiveElement, LiveElement] | None],
) -> bool:
    """Whether ``key`` is in another top-level window of the app than ``here``, one the window
    list would show (not a popup menu); False when that cannot be told. (A page's own modal,
    role "dialog" inside the browser's window, is the same window: no window is coming.)"""
    for k in (here, key):
        if k not in tops:
            tops[k] = await _top_level(ctx, k)
    mine, theirs = tops[here], tops[key]
    if mine is None or theirs is None or mine[1].key == theirs[1].key:
        return False
    focused, top = theirs
    return top.role not in NOT_LISTED and focused.role not in NOT_LISTED


#: How far up from an element its top-level window is looked for (a web page's deep DOM).
TOP_LEVELS = 96


async def _climb(
    ctx: ToolContext, key: tuple[str, str] | None, levels: int
) -> AsyncIterator[LiveElement]:
    """The element ``key`` names, then its ancestors, nearest first, at most ``levels``; the
    climb stops where one is gone or does not answer."""
    try:
        for _ in range(levels):
            live = await ctx.desktop.inspect(key) if key is not None else None
            if live is None:
                return
            yield live
            key = live.parent_key
    except DeskpilotError:
        return


async def _top_level(
    ctx: ToolContext, key: tuple[str, str]
) -> tuple[LiveElement, LiveElement] | None:
    """The element ``key`` names and the app's top-level element (its window) it is in: the
    ancestor that is a child of the app's root (or has no parent); None when that cannot be
    told."""
    first: LiveElement | None = None
    below: LiveElement | None = None
    async for live in _climb(ctx, key, TOP_LEVELS):
        first = first or live
        if live.role == "application":
            return None if below is None else (first, below)
        if live.parent_key is None:
            return (first, live)
        below = live
    return None


#: Roles of a main window's accessible root, and how far up from an element one is looked for.
WINDOW_ROLES = frozenset({"frame", "window", "application"})
MAX_LEVELS = 24


async def window_like(ctx: ToolContext, key: tuple[str, str] | None) -> LiveElement | None:
    """The nearest ancestor of ``key`` (or itself) whose role is a window's or a dialog's, None
    when that cannot be told (gone, or deeper than MAX_LEVELS)."""
    async for live in _climb(ctx, key, MAX_LEVELS):
        if live.role in DIALOG_ROLES or live.role in WINDOW_ROLES:
            return live
    return None


def closed_line(window: WindowInfo) -> str:
    """How a result says the window closed."""
    return f"The window {window.stable_id} closed."


async def _is_dialog(ctx: ToolContext, window: WindowInfo) -> bool:
    try:
        snap = await ctx.desktop.snapshot(window)
    except DeskpilotError:
        return False  # it closed meanwhile, or does not answer: nothing to say here
    return snap.root is not None and snap.root.role in DIALOG_ROLES


async def closes(ctx: ToolContext, window: WindowInfo) -> bool:
    """Whether the window leaves the window list within CLOSE_WAIT_S (at once if it has)."""

    async def gone() -> bool:
        return all(w.handle != window.handle for w in await ctx.desktop.list_windows())

    try:
        await async_wait_for(gone, timeout=CLOSE_WAIT_S, what="the window to close")
    except WaitTimeout:
        return False
    return True
