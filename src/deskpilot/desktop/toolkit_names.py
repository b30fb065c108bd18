"""What toolkits' names mean: the action names that operate an element itself, and the names
toolkits give elements that have none."""

from __future__ import annotations

import re

#: AT-SPI action names that operate the element itself: Chromium's "click" (an element with
#: its own click or mouse listener), "press", "jump" (links), "activate", "check"; GTK's
#: "click", "press", "activate", "toggle". Chromium's "doDefault" (no handler of its own),
#: "clickAncestor" (a plain part of an element that has one) and "showContextMenu" are not.
OWN_ACTIONS = frozenset(
    {"click", "press", "jump", "activate", "check", "uncheck", "toggle", "open", "select",
     "expand", "collapse", "switch", "increment", "decrement"}
)  # fmt: skip


#: Names toolkits give elements that have none (Chromium's nameless images): they name nothing.
PLACEHOLDER_NAMES = frozenset({"To get missing image descriptions, open the context menu."})

#: GTK 4's fallback name for a node that has none: its widget's class ("GtkButton", "GtkImage").
_CLASS_NAME = re.compile(r"^(Gtk|Adw|Gdk|Gsk|Hdy|Vte|Gnome|Gtk4)[A-Z][A-Za-z0-9]*$")


def is_class_name(name: str) -> bool:
    """Whether a name is only a toolkit's class name standing in for none ("GtkMenuButton")."""
    return bool(_CLASS_NAME.match(name.strip()))
