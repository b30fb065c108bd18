"""Which client window has the keyboard: the X server's input focus, with the window manager's
word (``_NET_ACTIVE_WINDOW``) where the focus is on no client.

The window manager's property lags the focus it moves. Openbox activates a window by setting
the X input focus, and updates ``_NET_ACTIVE_WINDOW`` only when the focus events come back:
between the two the property names the window keys no longer reach, and while focus passes
from one app to another it names none (measured on the sandbox: ~2 ms each, longer on a busy
machine). The input focus is where keys go at that moment; it is usually a window inside the
client (GTK's focus window, one level down), so it is followed up to the client that holds it.
"""

from __future__ import annotations

from collections.abc import Collection

from Xlib import X, error

from deskpilot.desktop.x11.display import X11

#: Deepest nesting followed from the focus window up to its client (GTK 3's focus window is one
#: level down).
MAX_DEPTH = 16


def focused_client(x: X11, clients: Collection[int]) -> int | None:
    """The client window (one of ``clients``) the X input focus is in, or None: focus on no
    window, on the pointer's root, or on a window outside every client (a popup of its own,
    the window manager's)."""
    try:
        focus = x.d.get_input_focus().focus
    except error.XError:
        return None
    xid = focus if isinstance(focus, int) else int(focus.id)
    root = int(x.root.id)
    for _ in range(MAX_DEPTH):
        if xid in (X.NONE, X.PointerRoot, root):
            return None
        if xid in clients:
            return xid
        try:
            xid = int(x.d.create_resource_object("window", xid).query_tree().parent.id)
        except (error.BadWindow, error.BadDrawable):
            return None  # destroyed meanwhile
    return None


def active_client(x: X11, clients: Collection[int]) -> int | None:
    """The active window: the client holding the input focus, else the one the window
    manager names (when it is still a client)."""
    focused = focused_client(x, clients)
    if focused is not None:
        return focused
    named = x.active_xid()
    return named if named in clients else None


def settled_on(x: X11, xid: int) -> bool:
    """Whether activating ``xid`` is over: the window manager names it and the focus is in
    it (the property alone may be from before a focus change still under way)."""
    return x.active_xid() == xid and focused_client(x, (xid,)) == xid
