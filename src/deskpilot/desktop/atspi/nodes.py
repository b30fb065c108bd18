"""From a raw app tree to the window's :class:`~deskpilot.desktop.base.Node` tree.

Which nodes a read shows (the frame and what is on screen under it: hidden subtrees are not
entered, except a combo box's popup, whose shown item is lifted into its place), which of them
are worth a text call, and the Node objects in screen coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

from deskpilot.desktop.atspi.consts import S_EDITABLE, state_names
from deskpilot.desktop.atspi.kinds import is_view_item
from deskpilot.desktop.atspi.model import AppTree, RawNode, Span, wants_value
from deskpilot.desktop.atspi.tab_names import plain_name
from deskpilot.desktop.base import Node, Rect, WindowInfo
from deskpilot.desktop.grid import Grid

#: Roles whose text content is worth fetching (their name alone does not show their content).
TEXT_ROLES = {
    "text",
    "entry",
    "password-text",
    "paragraph",
    "heading",
    "label",
    "static",
    "document-text",
    "document-web",
    "terminal",
    "spin-button",
    "combo-box",
    "list-item",
    "table-cell",
    "section",
    "caption",
    "link",
    "block-quote",
}


#: Roles whose text is what they show under a name that is only a title (a terminal's screen,
#: a document viewer's page): always worth the call (read line by line: deskpilot.ax.surface).
SURFACE_ROLES = frozenset({"terminal", "page"})

#: Fields whose text is their value, editable or not (a read-only field is still read).
FIELD_ROLES = frozenset({"entry", "password-text", "spin-button", "combo-box"})


@dataclass
class WindowTree:
    app: AppTree
    frame: str  # object path of the window's frame
    offset: tuple[int, int]  # added to extents (GTK4 reports window-relative coordinates)
    whole: frozenset[str] = frozenset()  # a subtree read whole, off screen too (a zoomed read)


def wants_text(node: RawNode) -> bool:
    """Whether a shown node's text content is worth a call: fields always; other text roles
    only when their name does not already carry the text; ranges for their value."""
    if wants_value(node):
        return True
    if not node.has("Text"):
        return False
    if node.has("EditableText") or node.states & S_EDITABLE or node.role_name in FIELD_ROLES:
        return True  # a read-only field's text is what a person reads in it
    if node.role_name in SURFACE_ROLES:
        return True
    return (node.role_name in TEXT_ROLES or is_view_item(node)) and not node.name


def rendered(app: AppTree, frame: str, whole: frozenset[str] = frozenset()) -> list[str]:
    """The frame and the nodes a read can show under it: the walk of :func:`build_nodes`,
    which does not enter hidden subtrees (a warm read of Writer walks 190 of 1,600 nodes)
    except in ``whole`` (a subtree read whole)."""
    out, seen, stack = [frame], {frame}, [frame]
    while stack:
        for kid in children_read(app, stack.pop(), whole):
            if kid not in seen:
                seen.add(kid)
                out.append(kid)
                stack.append(kid)
    return out


def grid_of(span: Span) -> Grid:
    """What a read of a virtual container holds, for the renderer."""
    return Grid(
        rows=span.rows,
        columns=span.columns,
        first_row=span.first_row,
        last_row=span.last_row,
        first_column=span.first_column,
        last_column=span.last_column,
        headers=tuple(sorted(span.headers.items())),
        addressed=span.addressed,
    )


def build_nodes(wt: WindowTree, window: WindowInfo) -> Node:
    """Turn the raw tree under the frame into Node objects (screen coordinates)."""
    app = wt.app
    dx, dy = wt.offset
    cells = {p: place for span in app.virtual.values() for p, place in span.cells.items()}

    def make(raw: RawNode, parent: tuple[str, str] | None) -> Node:
        bounds = None
        if raw.extents is not None:
            x, y, w, h = raw.extents
            bounds = Rect(x + dx, y + dy, w, h)
        return Node(
            key=(app.bus, raw.path),
            role=raw.role_name,
            name=plain_name(raw.role_name, raw.name),
            description=raw.description,
            states=state_names(raw.states),
            bounds=bounds,
            text=raw.text,
            value=raw.value,
            interfaces=raw.interfaces,
            parent_key=parent,
            label=raw.label,
            actions=raw.actions or (),
            hint=raw.hint if raw.hint != "-" else "",
            more=clipped(app, raw) if raw.actions and len(raw.actions) > 2 else "",
            grid=grid_of(app.virtual[raw.path]) if raw.path in app.virtual else None,
            cell=cells.get(raw.path),
        )

    root = make(app.nodes[wt.frame], None)
    stack: list[tuple[Node, str]] = [(root, wt.frame)]
    seen = {wt.frame}
    while stack:
        node, path = stack.pop()
        for kid in children_read(app, path, wt.whole):
            if kid in seen:
                continue
            seen.add(kid)
            child = make(app.nodes[kid], node.key)
            node.children.append(child)
            stack.append((child, kid))
    return root


def clipped(app: AppTree, raw: RawNode) -> str:
    """Where a scrollable area has content out of view ("below", "above and below", "right"…,
    "" for none): children that do not show, or that reach past its edges (a lone wrapper
    child is looked through)."""
    if not any(a.lower().startswith("scroll") for a in raw.actions or ()):
        return ""
    path = raw.path
    kids = app.children_of(path)
    while len(kids) == 1 and app.shown(kids[0]):
        path = kids[0]
        kids = app.children_of(path)
    shown = [k for k in kids if app.shown(k)]
    if not kids:
        return ""
    if not shown:
        return "below"
    sides = {
        "above": kids.index(shown[0]) > 0,
        "below": kids.index(shown[-1]) < len(kids) - 1,
        "left": False,
        "right": False,
    }
    if raw.extents is not None:
        x, y, w, h = raw.extents
        for k in shown:
            ext = app.nodes[k].extents
            if ext is None or ext[2] <= 0 or ext[3] <= 0:
                continue
            sides["above"] |= ext[1] < y - 1
            sides["below"] |= ext[1] + ext[3] > y + h + 1
            sides["left"] |= ext[0] < x - 1
            sides["right"] |= ext[0] + ext[2] > x + w + 1
    return " and ".join(side for side, more in sides.items() if more)


def children_read(app: AppTree, path: str, whole: frozenset[str]) -> list[str]:
    """The children a read walks: those on screen; all of them inside a subtree read whole."""
    return app.children_of(path) if path in whole else shown_children(app, path)


def shown_children(app: AppTree, path: str, in_combo: bool = False) -> list[str]:
    """The children on screen; hidden subtrees are dropped, except inside a combo box, where
    the hidden popup's shown items (the selected one) are lifted into its place."""
    in_combo = in_combo or app.nodes[path].role_name == "combo-box"
    out: list[str] = []
    for kid in app.children_of(path):
        if (
            app.shown(kid)
            or any(app.shown(k) for k in app.children_of(kid))
            or (is_view_item(app.nodes[kid]) and app.nodes[kid].displayed and app.shown(path))
        ):
            # an icon view's items laid out after a model change say VISIBLE, never SHOWING
            # (GTK 3): in a pane that shows, their extents tell what is on screen
            # a child on screen means its parent is (LibreOffice leaves SHOWING off the
            # documents of a sheet's frozen or split panes, whose tables show)
            out.append(kid)
        elif in_combo and not app.nodes[kid].stub and app.nodes[kid].children:
            out.extend(shown_children(app, kid, in_combo=True))
    return out
