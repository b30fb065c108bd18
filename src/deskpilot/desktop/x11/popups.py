"""An app's popups over its window: the override-redirect windows a person sees on top of it.

Menus, combo-box lists, tooltips and command-search popups are separate top-level X windows
that bypass the window manager (override-redirect): a capture of the app's window alone never
shows them. These are found by stacking order — mapped override-redirect children of the root
above the window's frame — and by owner: windows created by the same X client share the high
bits of their ids (the client's resource base), so another app's popup is never taken for this
one's.
"""

from __future__ import annotations

from typing import Any

from Xlib import X, error

from deskpilot.desktop.base import Rect


def client_base(d: Any, xid: int) -> int:
    """The resource base of the X client that created window ``xid``."""
    mask = int(d.display.info.resource_id_mask)
    return xid & ~mask


def _top_level(d: Any, root: Any, xid: int) -> int | None:
    """The root's child that holds window ``xid`` (its frame, once the WM reparented it)."""
    win = d.create_resource_object("window", xid)
    for _ in range(16):
        try:
            tree = win.query_tree()
        except (error.BadWindow, error.BadDrawable):
            return None
        if tree.parent.id == root.id or tree.parent.id == 0:
            return int(win.id)
        win = tree.parent
    return None


def popups_over(d: Any, root: Any, xid: int) -> list[tuple[int, Rect]]:
    """(id, screen rectangle) of the mapped override-redirect windows of ``xid``'s client
    stacked above it, bottom to top."""
    top = _top_level(d, root, xid)
    if top is None:
        return []
    base = client_base(d, xid)
    try:
        children = root.query_tree().children  # bottom to top
    except error.XError:
        return []
    ids = [int(c.id) for c in children]
    if top not in ids:
        return []
    out: list[tuple[int, Rect]] = []
    for child in children[ids.index(top) + 1 :]:
        if client_base(d, int(child.id)) != base:
            continue
        try:
            attrs = child.get_attributes()
            if not attrs.override_redirect or attrs.map_state != X.IsViewable:
                continue
            geo = child.get_geometry()
        except (error.BadWindow, error.BadDrawable, error.BadMatch):
            continue  # it went away meanwhile
        rect = Rect(int(geo.x), int(geo.y), int(geo.width), int(geo.height))
        if not rect.empty:
            out.append((int(child.id), rect))
    return out
