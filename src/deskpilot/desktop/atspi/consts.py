"""AT-SPI enumerations (append-only ABI of at-spi2-core: the numbers never change).

Generated from libatspi 2.46 (``Atspi.Role`` / ``Atspi.StateType`` nicks); role 130 is
``switch`` (added after 2.46).
"""

from __future__ import annotations

import functools

ROLE_NAMES: tuple[str, ...] = (
    "invalid",
    "accelerator-label",
    "alert",
    "animation",
    "arrow",
    "calendar",
    "canvas",
    "check-box",
    "check-menu-item",
    "color-chooser",
    "column-header",
    "combo-box",
    "date-editor",
    "desktop-icon",
    "desktop-frame",
    "dial",
    "dialog",
    "directory-pane",
    "drawing-area",
    "file-chooser",
    "filler",
    "focus-traversable",
    "font-chooser",
    "frame",
    "glass-pane",
    "html-container",
    "icon",
    "image",
    "internal-frame",
    "label",
    "layered-pane",
    "list",
    "list-item",
    "menu",
    "menu-bar",
    "menu-item",
    "option-pane",
    "page-tab",
    "page-tab-list",
    "panel",
    "password-text",
    "popup-menu",
    "progress-bar",
    "push-button",
    "radio-button",
    "radio-menu-item",
    "root-pane",
    "row-header",
    "scroll-bar",
    "scroll-pane",
    "separator",
    "slider",
    "spin-button",
    "split-pane",
    "status-bar",
    "table",
    "table-cell",
    "table-column-header",
    "table-row-header",
    "tearoff-menu-item",
    "terminal",
    "text",
    "toggle-button",
    "tool-bar",
    "tool-tip",
    "tree",
    "tree-table",
    "unknown",
    "viewport",
    "window",
    "extended",
    "header",
    "footer",
    "paragraph",
    "ruler",
    "application",
    "autocomplete",
    "editbar",
    "embedded",
    "entry",
    "chart",
    "caption",
    "document-frame",
    "heading",
    "page",
    "section",
    "redundant-object",
    "form",
    "link",
    "input-method-window",
    "table-row",
    "tree-item",
    "document-spreadsheet",
    "document-presentation",
    "document-text",
    "document-web",
    "document-email",
    "comment",
    "list-box",
    "grouping",
    "image-map",
    "notification",
    "info-bar",
    "level-bar",
    "title-bar",
    "block-quote",
    "audio",
    "video",
    "definition",
    "article",
    "landmark",
    "log",
    "marquee",
    "math",
    "rating",
    "timer",
    "static",
    "math-fraction",
    "math-root",
    "subscript",
    "superscript",
    "description-list",
    "description-term",
    "description-value",
    "footnote",
    "content-deletion",
    "content-insertion",
    "mark",
    "suggestion",
    "push-button-menu",
    "switch",
)

STATE_NAMES: tuple[str, ...] = (
    "invalid",
    "active",
    "armed",
    "busy",
    "checked",
    "collapsed",
    "defunct",
    "editable",
    "enabled",
    "expandable",
    "expanded",
    "focusable",
    "focused",
    "has-tooltip",
    "horizontal",
    "iconified",
    "modal",
    "multi-line",
    "multiselectable",
    "opaque",
    "pressed",
    "resizable",
    "selectable",
    "selected",
    "sensitive",
    "showing",
    "single-line",
    "stale",
    "transient",
    "vertical",
    "visible",
    "manages-descendants",
    "indeterminate",
    "required",
    "truncated",
    "animated",
    "invalid-entry",
    "supports-autocompletion",
    "selectable-text",
    "is-default",
    "visited",
    "checkable",
    "has-popup",
    "read-only",
)

STATE_BITS: dict[str, int] = {name: 1 << i for i, name in enumerate(STATE_NAMES)}


def role_name(role: int) -> str:
    return ROLE_NAMES[role] if 0 <= role < len(ROLE_NAMES) else "unknown"


@functools.lru_cache(maxsize=4096)
def state_names(bits: int) -> frozenset[str]:
    """Decode the 64-bit state set (two uint32 words combined) into state names (a read
    decodes one a node, thousands of times with a few dozen distinct sets: kept)."""
    out = []
    i = 0
    while bits:
        if bits & 1 and i < len(STATE_NAMES):
            out.append(STATE_NAMES[i])
        bits >>= 1
        i += 1
    return frozenset(out)


def state_bits(words: list[int] | tuple[int, ...]) -> int:
    low = words[0] if len(words) > 0 else 0
    high = words[1] if len(words) > 1 else 0
    return (high << 32) | low


ROOT_PATH = "/org/a11y/atspi/accessible/root"
NULL_PATH = "/org/a11y/atspi/null"
CACHE_PATH = "/org/a11y/atspi/cache"
REGISTRY_BUS = "org.a11y.atspi.Registry"
REGISTRY_PATH = "/org/a11y/atspi/registry"

S_SHOWING = STATE_BITS["showing"]
S_VISIBLE = STATE_BITS["visible"]
S_MANAGES_DESCENDANTS = STATE_BITS["manages-descendants"]
S_DEFUNCT = STATE_BITS["defunct"]
S_EDITABLE = STATE_BITS["editable"]
S_EXPANDED = STATE_BITS["expanded"]
S_SELECTED = STATE_BITS["selected"]
S_FOCUSED = STATE_BITS["focused"]
S_ACTIVE = STATE_BITS["active"]
S_FOCUSABLE = STATE_BITS["focusable"]
S_SELECTABLE = STATE_BITS["selectable"]
