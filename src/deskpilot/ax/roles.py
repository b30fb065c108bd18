"""The vocabulary of a read: which roles are shown, as what, and how names, text and states read.

Interactive roles (a model can act on them: they get an element ID), textual roles (shown when
they carry a name or text), structural containers (shown as a line when named), each with the
short role name a model reads; GTK4's class-name fallback names ("GtkButton") count as no name;
long text is cut with a ``… +N chars`` marker; states are shown as the few words that matter
to act (focused, checked, expanded, disabled…).
"""

from __future__ import annotations

from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.toolkit_names import is_class_name

#: Roles a model can act on (issue 6's "widgets"), with the short name shown.
INTERACTIVE: dict[str, str] = {
    "push-button": "button",
    "push-button-menu": "menubutton",
    "toggle-button": "toggle",
    "check-box": "checkbox",
    "radio-button": "radio",
    "menu-item": "menuitem",
    "check-menu-item": "menuitem",
    "radio-menu-item": "menuitem",
    "menu": "menu",
    "combo-box": "combobox",
    "entry": "textbox",
    "password-text": "password",
    "spin-button": "spinbutton",
    "slider": "slider",
    "link": "link",
    "page-tab": "tab",
    "list-item": "listitem",
    "tree-item": "treeitem",
    "table-cell": "cell",
    "switch": "switch",
    "calendar": "calendar",
    "dial": "dial",
    "scroll-bar": "scrollbar",
    "date-editor": "date",
    "tearoff-menu-item": "menuitem",
}

#: Roles shown (when they carry a name or text) without being interactive.
TEXTUAL: dict[str, str] = {
    "label": "text",
    "static": "text",
    "text": "text",
    "paragraph": "para",
    "heading": "heading",
    "caption": "caption",
    "status-bar": "status",
    "tool-tip": "tooltip",
    "notification": "alert",
    "alert": "alert",
    "image": "image",
    "icon": "image",
    "progress-bar": "progress",
    "level-bar": "level",
    "document-web": "document",
    "document-text": "document",
    "document-frame": "document",
    "document-spreadsheet": "document",
    "document-presentation": "document",
    "terminal": "terminal",
    "column-header": "colheader",
    "row-header": "rowheader",
    "table-column-header": "colheader",
    "table-row-header": "rowheader",
    "block-quote": "quote",
    "definition": "text",
    "description-term": "term",
    "description-value": "text",
    "math": "math",
    "mark": "text",
}

#: Containers shown as a structure line when named (dialogs and windows even unnamed).
STRUCTURAL: dict[str, str] = {
    "dialog": "dialog",
    "alert": "alert",
    "file-chooser": "dialog",
    "window": "window",
    "frame": "window",
    "menu-bar": "menubar",
    "tool-bar": "toolbar",
    "page-tab-list": "tabs",
    "list": "list",
    "list-box": "list",
    "tree": "tree",
    "tree-table": "tree",
    "table": "table",
    "form": "form",
    "grouping": "group",
    "panel": "group",
    "section": "section",
    "landmark": "region",
    "article": "article",
    "popup-menu": "menu",
    "scroll-pane": "scroll",
    "split-pane": "split",
    "internal-frame": "window",
    "info-bar": "infobar",
}

#: Editable parts of documents, shown by their own short role.
DOCUMENT_PARTS = {
    "paragraph": "para",
    "heading": "heading",
    "section": "section",
    "block-quote": "quote",
    "caption": "caption",
}
#: Roles whose lines do not need an [editable] mark: it is what they are.
IMPLIED_EDITABLE = {"entry", "password-text", "text", "spin-button", *DOCUMENT_PARTS}
#: Longest text shown for a document paragraph (fields: TEXT_LIMIT).
PARAGRAPH_LIMIT = 80

ALWAYS_STRUCTURAL = {"dialog", "alert", "file-chooser", "popup-menu"}

TEXT_LIMIT = 120


def clean_name(name: str) -> str:
    """Strip padding, GTK4 class-name fallbacks ("GtkButton") and doubled names ("4 4")."""
    name = " ".join(name.split())
    if is_class_name(name):
        return ""
    words = name.split(" ")
    half = len(words) // 2
    if len(words) % 2 == 0 and half and words[:half] == words[half:]:
        name = " ".join(words[:half])
    return name


def cut(text: str, limit: int = TEXT_LIMIT) -> str:
    text = " ".join(text.split()) if "\n" not in text[:limit] else text.strip()
    text = text.replace("\n", "⏎")
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… +{len(text) - limit} chars"


def is_displayed(node: Node) -> bool:
    return "showing" in node.states or "visible" in node.states


def on_screen(node: Node, area: Rect) -> bool:
    b = node.bounds
    return b is None or (not b.empty and b.intersects(area))


def view_item(node: Node) -> bool:
    """An item of an icon view (GTK 3's GtkIconView): a selectable picture whose label is its
    text. It reads, and is clicked (selected), as a list item."""
    return node.role in ("icon", "image") and "selectable" in node.states


def is_widget(node: Node) -> bool:
    return node.role in INTERACTIVE or "editable" in node.states or view_item(node)


def states_shown(node: Node) -> list[str]:
    s = node.states
    out = []
    if "focused" in s:
        out.append("focused")
    if "checked" in s or "pressed" in s:
        out.append("checked")
    elif "checkable" in s or node.role in ("check-box", "radio-button", "switch"):
        out.append("unchecked")
    if "selected" in s and node.role not in ("page-tab",):
        out.append("selected")
    elif "selected" in s:
        out.append("active")
    if "expandable" in s or "expanded" in s or "collapsed" in s:
        out.append("expanded" if "expanded" in s else "collapsed")
    if "sensitive" not in s and "enabled" not in s and "read-only" not in s and is_widget(node):
        # Chromium drops "enabled" on read-only fields too: they can be focused, read, copied
        out.append("disabled")
    if "editable" in s and node.role not in IMPLIED_EDITABLE:
        out.append("editable")
    if "read-only" in s and node.role in ("entry", "text"):
        out.append("readonly")
    return out
