"""Window IDs as the tools speak them — the one place that parses and resolves them.

A window ID names one window of :meth:`~deskpilot.desktop.base.Desktop.list_windows`:

* ``pid/handle`` — the stable form (``WindowInfo.stable_id``): the process and the backend's
  window handle in decimal (X11: the X window id; sway: the container id);
* ``pid/title`` — the readable form (``WindowInfo.window_id``); a title may hold ``/``;
* a bare handle, decimal or ``0x…`` hex (as ``xwininfo`` and ``wmctrl`` print X ids).

The pid comes first and never holds ``/``, so everything after the first ``/`` is the handle
or the title: ``12/a/b`` is pid 12 and title ``a/b``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from deskpilot.desktop.base import WindowInfo


@dataclass(frozen=True)
class WindowRef:
    """A parsed window ID: a pid with a handle or a title, or a bare handle (pid None)."""

    pid: int | None
    handle: int | None
    title: str | None

    def matches(self, window: WindowInfo) -> bool:
        if self.pid is not None and window.pid != self.pid:
            return False
        if self.handle is not None and window.handle == self.handle:
            return True
        return self.title is not None and window.title == self.title


def parse_window_id(text: str | None) -> WindowRef | None:
    """The window ``text`` names, parsed; None when it is no window ID at all."""
    wid = (text or "").strip()
    if not wid:
        return None
    if "/" in wid:
        pid_text, rest = wid.split("/", 1)
        if not pid_text.strip().isdigit():
            return None
        # a digits-only rest is a handle, and also a title that happens to be digits
        handle = int(rest) if rest.isdigit() else None
        return WindowRef(int(pid_text), handle, rest)
    try:
        return WindowRef(None, int(wid, 16) if wid.lower().startswith("0x") else int(wid), None)
    except ValueError:
        return None


def find_window(windows: Iterable[WindowInfo], window_id: str | None) -> WindowInfo | None:
    """The window ``window_id`` names among ``windows``: by handle first, then by title."""
    ref = parse_window_id(window_id)
    if ref is None:
        return None
    found = list(windows)
    if ref.handle is not None:
        by_handle = WindowRef(ref.pid, ref.handle, None)
        hit = next((w for w in found if by_handle.matches(w)), None)
        if hit is not None:
            return hit
    if ref.title is not None:
        by_title = WindowRef(ref.pid, None, ref.title)
        return next((w for w in found if by_title.matches(w)), None)
    return None


def handle_of(window_id: str | None) -> int | None:
    """The handle in a ``pid/handle`` ID (None for a title or anything else)."""
    ref = parse_window_id(window_id)
    return ref.handle if ref is not None and ref.pid is not None else None


def pid_of(window_id: str | None) -> int | None:
    """The pid in a ``pid/…`` ID."""
    ref = parse_window_id(window_id)
    return ref.pid if ref is not None else None
