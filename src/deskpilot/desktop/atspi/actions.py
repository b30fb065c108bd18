"""The actions shown nodes offer, and a hint naming nameless actionable ones.

A person can operate far more on a web page than its roles say: Chromium gives an element with
its own click (or mouse) listener the AT-SPI action ``click``, its plain descendants
``clickAncestor``, a scrollable area ``scrollDown``/``scrollUp``…, and everything else
``doDefault``. Its ``GetActions`` answers with empty names, so the names are asked one by
one (``GetName(0)`` with ``GetActions``; the others only when there are more than the
usual two). Only nodes whose role does not already make them a widget are asked, once each
(until an event says the node changed), and never a leaf of text (:func:`text_leaf`). Each
actionable one gets a hint from its attributes, its tag and first class
(``span.icon.retweet``): what names a nameless one (an icon span, a slider handle, an SVG
shape), and what tells a listener on the page's body from one on an element.
"""

from __future__ import annotations

from collections.abc import Iterable

from deskpilot.desktop.atspi.bus import AtspiBus
from deskpilot.desktop.atspi.consts import S_FOCUSABLE
from deskpilot.desktop.atspi.model import AppTree, RawNode
from deskpilot.desktop.atspi.partial import settled
from deskpilot.desktop.toolkit_names import OWN_ACTIONS

#: Roles whose actions are asked: the ones a read does not already show as widgets, where a
#: page's listeners turn plain content into something to click.
ASKED_ROLES = frozenset(
    {"section", "panel", "paragraph", "image", "icon", "canvas", "heading", "label", "list",
     "document-web",
     "table-row", "document-frame", "grouping", "form", "article", "block-quote", "landmark",
     "description-term", "description-value", "definition", "footer", "header", "mark",
     "static", "text", "unknown", "embedded", "image-map", "drawing-area", "filler",
     "column-header", "row-header", "table-column-header", "table-row-header", "caption",
     "figure", "content-insertion", "superscript", "subscript"}
)  # fmt: skip
#: The usual number of actions of a Chromium node (its default one and showContextMenu).
USUAL_ACTIONS = 2


def wants_actions(node: RawNode) -> bool:
    return (
        node.actions is None
        and node.has("Action")
        and node.role_name in ASKED_ROLES
        and not text_leaf(node)
    )


def text_leaf(node: RawNode) -> bool:
    """A run of text with nothing under it (Chromium's text node: ``static``). A page's
    listener is on an element, never on its text: Chromium names a text leaf's action after
    its element's (``clickAncestor``) or ``doDefault``, neither an action of its own, and a
    text leaf is never a scroll area. Its actions are not asked: on the benchmark page that
    was 87 of the 139 nodes asked, 174 of a cold read's 1,380 calls."""
    return node.role_name == "static" and node.child_count == 0


def actionable(node: RawNode) -> bool:
    """Whether a node offers something of its own: an action, the focus, scrolling."""
    names = node.actions or ()
    return bool(
        (names and names[0].lower() in OWN_ACTIONS)
        or node.states & S_FOCUSABLE
        or any(n.startswith("scroll") for n in names)
    )


class ActionReader:
    """Asks the action names and hints of shown nodes over an :class:`AtspiBus`."""

    def __init__(self, bus: AtspiBus) -> None:
        self.bus = bus

    async def fill_actions(self, tree: AppTree, paths: Iterable[str]) -> None:
        """Action names of the shown nodes that may have ones of their own. A failure here
        only leaves a node without them: it never makes the read partial."""
        wanted = [p for p in paths if wants_actions(tree.nodes[p])]
        req = self.bus.request
        lists = [req(tree.bus, p, "Action", "GetActions") for p in wanted]
        firsts = [req(tree.bus, p, "Action", "GetName", "i", [0]) for p in wanted]
        await settled([*lists, *firsts])
        more: list[tuple[str, int]] = []
        for path, listed, first in zip(wanted, lists, firsts, strict=True):
            node = tree.nodes[path]
            names = [str(a[0]) for a in listed.result()[0]] if listed.exception() is None else []
            if names and not any(names) and first.exception() is None:
                # Chromium: GetActions names nothing; GetName does
                names[0] = str(first.result()[0])
                if len(names) > USUAL_ACTIONS:
                    more.append((path, len(names)))
            node.actions = tuple(names)
        rest = [
            (path, [req(tree.bus, path, "Action", "GetName", "i", [i]) for i in range(1, n)])
            for path, n in more
        ]
        await settled(c for _p, calls in rest for c in calls)
        for path, calls in rest:
            first_name = (tree.nodes[path].actions or ("",))[0]
            names = [str(c.result()[0]) if c.exception() is None else "" for c in calls]
            tree.nodes[path].actions = (first_name, *names)

    async def fill_hints(self, tree: AppTree, paths: Iterable[str]) -> None:
        """Tag and class of actionable nodes (``GetAttributes``)."""
        wanted = [p for p in paths if _wants_hint(tree.nodes[p])]
        calls = [self.bus.request(tree.bus, p, "Accessible", "GetAttributes") for p in wanted]
        await settled(calls)
        for path, call in zip(wanted, calls, strict=True):
            if call.exception() is not None:  # a hint is a nicety: no partial read for it
                tree.nodes[path].hint = "-"
                continue
            attrs = {str(k): str(v) for k, v in dict(call.result()[0]).items()}
            tree.nodes[path].hint = _hint(attrs) or "-"


#: Widgets by role that a page may leave nameless (an icon button): named by their hint.
NAMELESS_WIDGETS = frozenset(
    {"push-button", "toggle-button", "link", "menu-item", "page-tab", "check-box",
     "radio-button", "switch", "list-item", "tree-item", "push-button-menu"}
)  # fmt: skip


def _wants_hint(node: RawNode) -> bool:
    """Every actionable node of an asked role: nameless ones are named by it, and a clickable
    one's tag tells whether its listener is the page's own (on the body); and nameless
    widgets (a ``role=button`` holding only an icon)."""
    if node.hint:
        return False
    if node.role_name in NAMELESS_WIDGETS:
        return not node.name and not node.description and node.has("Action")
    return node.role_name in ASKED_ROLES and actionable(node)


def _hint(attrs: dict[str, str]) -> str:
    """``span.icon.retweet``: an element's tag and classes (at most three), else its id."""
    tag = attrs.get("tag", "")
    if not tag or tag.startswith("#"):
        return ""
    classes = attrs.get("class", "").split()[:3]
    if classes:
        return ".".join([tag, *classes])[:48]
    ident = attrs.get("id", "")
    return f"{tag}#{ident}"[:48] if ident else tag
