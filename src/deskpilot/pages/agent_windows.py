"""One agent-browser window: ``open_urls`` puts new tabs into the window the session tracks
(or the agent browser's last focused window), instead of a new window per call.

The agent browser's own extension knows its windows (``chrome.windows``: bounds, tabs, which
was focused last) and opens tabs in a chosen one; the desktop knows the on-screen windows
(handles, geometry, titles). A Chromium window is matched to its desktop window by the
browser's process, its bounds and its title (the active tab's title). A new window is opened
only when asked, when no agent browser runs, or when it has no window — then the caller starts
one (:meth:`deskpilot.desktop.base.Desktop.open_urls`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.errors import DeskpilotError
from deskpilot.pages.link import maybe_page_browser
from deskpilot.pages.store import agent_profile

if TYPE_CHECKING:
    from deskpilot.desktop.base import WindowInfo
    from deskpilot.tools.context import ToolContext

log = logging.getLogger(__name__)

#: how long a shown document must stay empty to count as an empty page
EMPTY_PAGE_S = 1.5
#: how far (pixels, summed over the four edges) a Chromium window's bounds may be from its
#: desktop window's client area (a window manager's frame, Chromium's shadow insets)
BOUNDS_SLACK = 120


@dataclass(frozen=True)
class OpenedTabs:
    """Tabs opened in a window that was already there."""

    window: WindowInfo
    tabs: int
    tracked: bool  # the window was the session's tracked one (else the last focused)


def browser_pid(ctx: ToolContext) -> int | None:
    """The running agent browser's process (from its profile's lock)."""
    try:
        lock = os.readlink(agent_profile(ctx.settings) / "SingletonLock")
        return int(lock.rsplit("-", 1)[1])
    except (OSError, ValueError, IndexError):
        return None


def _score(chrome: dict[str, Any], window: WindowInfo) -> float:
    """How well a Chromium window's bounds and active tab fit a desktop window (lower is
    better; inf: not it)."""
    g = window.geometry
    try:
        gap = (
            abs(int(chrome["left"]) - g.x)
            + abs(int(chrome["top"]) - g.y)
            + abs(int(chrome["width"]) - g.width)
            + abs(int(chrome["height"]) - g.height)
        )
    except (KeyError, TypeError, ValueError):
        gap = 10 * BOUNDS_SLACK
    active: dict[str, Any] = next((t for t in chrome.get("tabs", []) if t.get("active")), {})
    title = str(active.get("title") or "")
    titled = bool(title) and window.title.startswith(title)
    if gap > BOUNDS_SLACK and not titled:
        return float("inf")
    return gap - (1000 if titled else 0)


def match_windows(
    chrome_windows: Sequence[dict[str, Any]], desktop_windows: Sequence[WindowInfo]
) -> dict[int, WindowInfo]:
    """Chromium window id → its desktop window (each paired once, best fits first)."""
    pairs = sorted(
        (_score(c, w), i, j)
        for i, c in enumerate(chrome_windows)
        for j, w in enumerate(desktop_windows)
    )
    out: dict[int, WindowInfo] = {}
    used: set[int] = set()
    for score, i, j in pairs:
        cid = int(chrome_windows[i]["id"])
        if score == float("inf") or cid in out or j in used:
            continue
        out[cid] = desktop_windows[j]
        used.add(j)
    if len(chrome_windows) == 1 and len(desktop_windows) == 1 and not out:
        out[int(chrome_windows[0]["id"])] = desktop_windows[0]  # one and one: they are a pair
    return out


async def open_in_agent_window(
    ctx: ToolContext, urls: Sequence[str], timeout: float = 30.0
) -> OpenedTabs | None:
    """Open ``urls`` as tabs in the agent browser's window the session tracks (else its last
    focused one); None when there is no running agent browser window to use (the caller opens
    a new window)."""
    pid = browser_pid(ctx)
    if pid is None:
        return None
    async with maybe_page_browser(ctx) as agent:
        if agent is None:
            return None
        try:
            windows = await agent.worker_call("windows()")
        except DeskpilotError as exc:
            log.info("the agent browser's windows could not be listed: %s", exc)
            return None
        if not windows:
            return None
        ours = [w for w in await ctx.desktop.list_windows() if w.pid == pid]
        pairs = match_windows(windows, ours)
        tracked_id = ctx.session.target
        target = next((cid for cid, w in pairs.items() if w.stable_id == tracked_id), None)
        tracked = target is not None
        if target is None:
            last = [w for w in windows if w.get("lastFocused")] or list(windows)
            target = int(last[0]["id"])
        made = await agent.worker_call(f"openTabs({target}, {json.dumps(list(urls))})")
        if not isinstance(made, list):
            return None
        with contextlib.suppress(WaitTimeout):
            await async_wait_for(
                lambda: agent.worker_call(f"tabsLoaded({json.dumps(made)})"),
                timeout=timeout,
                what="the new tabs to load",
                interval=0.1,
            )
        first = await agent.worker_call(f"chrome.tabs.get({int(made[0])})") if made else None
    window = await _desktop_window(ctx, pid, target, pairs, urls, timeout)
    if window is None:
        return None
    with contextlib.suppress(DeskpilotError):
        await ctx.desktop.activate(window)
    title = str((first or {}).get("title") or "")
    await _document_shown(ctx, window, title, timeout)
    return OpenedTabs(window, len(made), tracked)


async def _document_shown(ctx: ToolContext, window: WindowInfo, title: str, timeout: float) -> None:
    """Wait until the window's accessible tree shows the new tab's document (its title, with
    content): a read right after open_urls is of that page, as after a new window."""

    empty_since: list[float] = []  # an empty page (about:blank) never gets content

    async def shown() -> bool:
        snap = await ctx.desktop.snapshot(window, timeout=2.0, fresh=True)
        docs = [
            n
            for n in snap.nodes()
            if n.role == "document-web"
            and "showing" in n.states
            and "busy" not in n.states
            and (not title or n.name == title)
        ]
        if any(n.children for n in docs):
            return True
        if not docs:
            empty_since.clear()
            return False
        empty_since[:1] = empty_since[:1] or [time.monotonic()]
        return time.monotonic() - empty_since[0] >= EMPTY_PAGE_S

    try:
        await async_wait_for(shown, timeout=timeout, what="the new tab's page", interval=0.1)
    except (WaitTimeout, DeskpilotError) as exc:
        log.info("the new tab's page is not in the accessible tree yet: %s", exc)


async def _desktop_window(
    ctx: ToolContext,
    pid: int,
    target: int,
    pairs: dict[int, WindowInfo],
    urls: Sequence[str],
    timeout: float,
) -> WindowInfo | None:
    """The desktop window of Chromium window ``target`` now (its title shows the new tab)."""
    known = pairs.get(target)
    if known is not None:
        fresh = next(
            (w for w in await ctx.desktop.list_windows() if w.handle == known.handle), None
        )
        return fresh or known
    # not matched before the tabs opened: match again, the window now shows the first tab
    async with maybe_page_browser(ctx) as agent:
        if agent is None:
            return None
        windows = await agent.worker_call("windows()") or []
    ours = [w for w in await ctx.desktop.list_windows() if w.pid == pid]
    return match_windows(windows, ours).get(target)
