"""What toolkits' names mean: the action names that operate an element itself, and the names
toolkits give elements that have none."""

from __future__ import annotations

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
