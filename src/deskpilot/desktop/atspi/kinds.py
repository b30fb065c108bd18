"""Nodes whose toolkit role undersells them, as the reader tells them.

An **icon view** (GTK 3's GtkIconView, and any toolkit that exposes its items the same way) is
a pane of selectable ``icon`` nodes with no name: each item's label is only in its Text
interface. A read fetches that text (:func:`is_view_item`), and the renderer shows the item as
a list item named by it (:func:`deskpilot.ax.roles.view_item`); its role stays the toolkit's,
so the live element checked before an action is the one read.
"""

from __future__ import annotations

from deskpilot.desktop.atspi.consts import S_SELECTABLE
from deskpilot.desktop.atspi.model import RawNode

#: Roles of a view's items that are only pictures as far as their role says.
ICON_ROLES = frozenset({"icon", "image"})


def is_view_item(raw: RawNode) -> bool:
    """A selectable picture: an item of an icon view (its label is its Text)."""
    return raw.role_name in ICON_ROLES and bool(raw.states & S_SELECTABLE)
