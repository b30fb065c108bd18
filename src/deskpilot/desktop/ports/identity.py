"""Backend-neutral identity: how a window and an accessible element are named.

* A **window handle** is an ``int`` the backend gives each top-level window, unique among the
  windows that exist at one time (X11: the X window id; a compositor: its own window or
  container id; macOS: the CGWindowID). Window IDs a model sees are made of it:
  ``pid/handle`` (stable) and ``pid/title`` (readable). A handle may be reused once its window
  is gone, so "is this window new?" also compares the owning process (:func:`is_new`).
* An **element key** is a pair of strings ``(app, path)``: which app's accessibility connection
  the element belongs to, and its address there (AT-SPI: the bus name and the object path;
  UI Automation: the process and the runtime id; macOS: the pid and an element token). Element
  IDs (:mod:`deskpilot.ax.ids`) are derived from it: short for AT-SPI's numbered paths, hashed
  otherwise, never reused within a read.

Nothing here knows a platform. Imports: the standard library only.
"""

from __future__ import annotations

#: A top-level window's handle (see the module docstring).
WindowHandle = int
#: An accessible element's key: (the app's connection, the element's address in it).
ElementKey = tuple[str, str]


def is_new(before: dict[WindowHandle, int], handle: WindowHandle, pid: int) -> bool:
    """Whether a window was not there in ``before`` (handle → pid, from
    :meth:`~deskpilot.desktop.ports.windows.WindowSystem.handles`): its handle is new, or
    another process owns that handle now (handles are reused: an app restarted right after its
    last window closed may get the same one)."""
    return handle not in before or pid not in (0, before[handle])
