"""Window titles for checkers, over an X11 connection of their own (EWMH client list)."""

from __future__ import annotations

from Xlib import X, display, error

from deskpilot.errors import CheckBroken


def window_titles(name: str) -> list[str]:
    """Titles of the managed windows on display ``name`` (``_NET_WM_NAME``, else ``WM_NAME``)."""
    try:
        conn = display.Display(name)
    except (error.DisplayError, OSError) as exc:
        raise CheckBroken(f"cannot open the X display {name}: {exc}") from exc
    try:
        root = conn.screen().root
        clients = root.get_full_property(conn.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        utf8, net_name = conn.intern_atom("UTF8_STRING"), conn.intern_atom("_NET_WM_NAME")
        titles = []
        for xid in clients.value if clients is not None else []:
            win = conn.create_resource_object("window", int(xid))
            try:
                prop = win.get_full_property(net_name, utf8)
                if prop is not None and prop.value:
                    raw = prop.value
                    titles.append(raw.decode() if isinstance(raw, bytes) else str(raw))
                    continue
                wm_name = win.get_wm_name()
            except error.XError:  # the window went away while listing
                continue
            if wm_name:
                titles.append(wm_name.decode() if isinstance(wm_name, bytes) else str(wm_name))
        return titles
    finally:
        conn.close()
