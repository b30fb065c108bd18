"""Lean text for models: only what helps act — interactive, named, text- and value-bearing nodes.

One line per kept node: ``indent role "name" = "value" [states] @id``. Hidden and off-window
nodes are dropped; anonymous containers are collapsed (their children lifted); GTK4's class-name
fallback names ("GtkButton") are treated as no name; labels that only repeat their parent's name
are dropped; an unnamed button takes its name from the labels inside it; long text is cut with
a ``… +N chars`` marker; a character budget ends the read with "… N more" markers that name
an element ID to read that part alone (``read_screen_ax`` with ``elementID``).

Which roles show and how they read is :mod:`~deskpilot.ax.roles`; the last pass that drops
lines adding nothing is :mod:`~deskpilot.ax.prune`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from deskpilot.ax.actionable import (
    BLOCKS,
    BULLETS,
    WRAPPERS,
    clickable,
    folded_text,
    kind,
    operable,
    own_name,
    page_level,
    role_word,
    row_over_part,
    shell_target,
    sole_control,
    via_ancestor,
    wrapped_line,
    wrapped_target,
)
from deskpilot.ax.ids import assign_ids
from deskpilot.ax.page import (
    HEADERS,
    SENTENCES,
    cell_operable,
    chrome_line,
    pages_of,
    popups_outside,
    row_cells,
    row_text,
    sentence,
)
from deskpilot.ax.panes import merge_panes
from deskpilot.ax.popup import more_line, open_popup, scrolled_items
from deskpilot.ax.prune import Line, prune
from deskpilot.ax.revealers import hidden_controls, is_folded_bar
from deskpilot.ax.roles import (
    ALWAYS_STRUCTURAL,
    DOCUMENT_PARTS,
    INTERACTIVE,
    PARAGRAPH_LIMIT,
    STRUCTURAL,
    TEXT_LIMIT,
    TEXTUAL,
    clean_name,
    cut,
    is_displayed,
    is_widget,
    on_screen,
    states_shown,
    view_item,
)
from deskpilot.ax.surface import is_surface, surface_lines
from deskpilot.ax.table import TABLE_BUDGET, column_headers, row_lines
from deskpilot.ax.table import summary as table_summary
from deskpilot.desktop.base import Node, Rect
from deskpilot.desktop.grid import Grid


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: How much of one text a zoomed read shows (read_screen_ax with an elementID).
ZOOM_TEXT_LIMIT = 200_000
#: Roles of a whole window's root (a zoomed read of it is a window's read).
WINDOWS = frozenset({"frame", "window", "dialog", "application", "file-chooser", "alert"})
#: The marker of a text cut short (:func:`~deskpilot.ax.roles.cut`).
_CUT = re.compile(r"… \+\d+ chars")
#: What a cut text's line says about reading the rest.
FOR_ALL = r"\g<0> (read_screen_ax its elementID for all)"


#: Characters of a name shown on a line at most (outside a zoomed read).
NAME_LIMIT = 100
_CUT_END = re.compile(r"… \+(\d+) chars$")


def recut(text: str, limit: int) -> str:
    """``text`` cut at ``limit`` characters; a text cut before keeps counting what its first
    cut left out (a paragraph of 1900 characters cut at 120, then at 100, says "+1800
    chars", not "+33")."""
    found = _CUT_END.search(text)
    if found is None:
        return cut(text, limit)
    head = text[: found.start()]
    if len(head) <= limit:
        return text
    return f"{head[:limit]}… +{int(found.group(1)) + len(head) - limit} chars"


def flat(text: str) -> str:
    """Text with its runs of whitespace made single spaces."""
    return " ".join(text.split())


def _row_key(node: Node) -> tuple[int, int]:
    b = node.bounds
    return (0, 0) if b is None else (b.center[1] // 12, b.x)


def _overlap(a: Rect, b: Rect) -> Rect:
    x, y = max(a.x, b.x), max(a.y, b.y)
    return Rect(
        x, y, min(a.x + a.width, b.x + b.width) - x, min(a.y + a.height, b.y + b.height) - y
    )


def _views(root: Node, area: Rect) -> dict[int, Rect]:
    """Where each node of a zoomed part could be seen: the window's area cut by every scroll
    area around it that has content out of view (a row scrolled out of a list inside the
    window is off screen though it lies within the window)."""
    views: dict[int, Rect] = {}
    stack = [(root, area)]
    while stack:
        node, view = stack.pop()
        views[id(node)] = view
        inner = view
        if node.more and node.bounds is not None and not node.bounds.empty:
            inner = _overlap(view, node.bounds)
        stack.extend((kid, inner) for kid in node.children)
    return views


@dataclass
class Rendered:
    """The text a model reads plus the elements that got an ID in it."""

    text: str
    ids: dict[str, Node] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # id → the name shown for it
    roles: dict[str, str] = field(default_factory=dict)  # id → the role shown for it
    lines: dict[str, str] = field(default_factory=dict)  # id → its line, every line (diffs)
    widgets: int = 0  # widgets shown with an ID
    omitted: int = 0  # nodes left out by the budget


class Renderer:
    """Render one window's tree (or one subtree) within a character budget."""

    def __init__(
        self,
        area: Rect,
        budget: int = 12000,
        text_limit: int = TEXT_LIMIT,
        *,
        chrome: bool = True,
        zoom: bool = False,
        browser: bool = True,
    ) -> None:
        self.area = area
        self.budget = budget
        self.zoom = zoom  # one element's part, asked for: in full (see render)
        self.text_limit = ZOOM_TEXT_LIMIT if zoom else text_limit
        self.chrome = chrome  # a browser's own controls line by line (else one line)
        # whether the window is a web browser's: an app on a browser engine (a mail client,
        # an Electron app) reads its own controls in full whatever ``chrome`` says
        self.browser = browser
        self._labels: set[str] = set()
        self._root: Node | None = None
        self._whole: Node | None = None  # the tree being rendered
        self._seen: set[tuple[str, str]] = set()  # elements visited (one reached twice: once)

    # -- selecting lines -------------------------------------------------------------------

    def collect(self, root: Node) -> list[Line]:
        lines: list[Line] = []
        merge_panes(root)  # a sheet's frozen or split panes: one table
        self._labels = {clean_name(n.label) for n in root.walk() if n.label and not n.name}
        self._whole = root
        self._seen = set()
        if self.zoom and root.role not in WINDOWS:
            # one element's part: the element's own line too, and what lies off screen
            # (scrolled away) marked as such
            self._root = root
            self._visit(root, 0, "", lines, top=False)
            views = _views(root, self.area)
            for ln in lines:
                if not ln.raw and not on_screen(ln.node, views.get(id(ln.node), self.area)):
                    ln.states = [*ln.states, "offscreen"]
            return prune(lines)
        pages = [] if self.chrome or not self.browser else pages_of(root)
        if not pages:
            self._visit(root, 0, "", lines, top=True)
            return prune(lines)
        lines.append(chrome_line(root, pages))
        for part in [*pages, *popups_outside(root, pages)]:
            self._visit(part, 0, "", lines, top=False)
        return prune(lines)

    @staticmethod
    def _reading_order(children: list[Node]) -> list[Node]:
        """Siblings in reading order (rows top to bottom, then left to right) when all of them
        have a position; toolkits sometimes list them in reverse (GTK3 grids)."""
        if len(children) < 2 or any(c.bounds is None or c.bounds.empty for c in children):
            return children
        return sorted(children, key=_row_key)

    def _label_text(self, node: Node, limit: int = 3) -> str:
        parts: list[str] = []
        for d in node.walk()[1:]:
            if not is_displayed(d) or d.role in INTERACTIVE:
                continue
            t = " ".join((clean_name(d.name) or clean_name(d.text or "")).split())
            if t and t not in BULLETS and not any(f" {t} " in f" {p} " for p in parts):
                parts.append(t)
            if len(parts) >= limit:
                break
        return " ".join(parts)

    def _visit(
        self,
        node: Node,
        depth: int,
        parent_name: str,
        out: list[Line],
        top: bool,
        scope: bool = False,
    ) -> None:
        """Add the lines of ``node`` and its content; ``scope``: inside a large clickable
        element, whose block-level parts are items to click (see :mod:`actionable`)."""
        if not top and not is_displayed(node) and node is not self._root:
            return
        if node.key in self._seen:
            # the same element reached again (listed under two parents, a popup inside the
            # window's tree, a list and its model's view): its lines are there already
            return
        self._seen.add(node.key)
        if not top and self._root is None and is_folded_bar(node):
            self._folded_bar(node, depth, out)
            return
        visible_here = top or self._root is not None or on_screen(node, self.area)
        if node.grid is not None and node.grid.table and visible_here:
            self._table(node, node.grid, depth, out, top)
            return
        if not top and visible_here and is_surface(node):
            self._surface(node, depth, out)
            return
        if not top and visible_here and (part := sole_control(node)) is not None:
            # a named toolbar around one nameless button: the button, named by the toolbar
            line = Line(
                depth, part, INTERACTIVE[part.role], own_name(node), None, states_shown(part), True
            )
            out.append(line)
            return
        if not top and visible_here:
            how = kind(node)
            if how is None and scope and via_ancestor(node) and node.role in BLOCKS:
                how = "item" if folded_text(node) else None
            if how is not None:
                self._operable(node, how, depth, parent_name, out, scope)
                return
            if node.role == "table-row" and (cells := row_cells(node)) is not None:
                self._row(node, cells, depth, out, scope)
                return
            if node.role in SENTENCES and not is_widget(node) and (said := sentence(node)):
                # a sentence split by inline markup: one line, its operable pieces under it
                role = TEXTUAL.get(node.role) or "text"
                # fixed: content, not an empty structure line (a <div> of text is a section)
                shown = cut(said, self.text_limit)
                out.append(Line(depth, node, role, shown, None, [], False, fixed=True))
                for child in self._reading_order(node.children):
                    if operable(child):
                        self._visit(child, depth + 1, said, out, top=False, scope=scope)
                return
        name = clean_name(node.name) or clean_name(node.label)
        role = "list-item" if view_item(node) else node.role
        if view_item(node) and not name:
            name = " ".join((node.text or "").split())  # its label is its text
        value = None
        text = "" if view_item(node) else (node.text or "").strip()
        keep = False
        shown_role = role
        if not top and visible_here:
            if is_widget(node):
                keep = True
                shown_role = (
                    INTERACTIVE.get(role)
                    or DOCUMENT_PARTS.get(role)
                    or ("textbox" if role in ("text", "document-text", "document-web") else role)
                )
                if not name and role not in ("entry", "password-text", "text", "scroll-bar"):
                    name = self._label_text(node) or clean_name(node.description)[:60]
                if not name and node.hint and not node.editable:
                    shown_role = f"{shown_role} ({node.hint})"  # an icon button: its tag, class
                if node.editable or role in ("entry", "spin-button", "combo-box", "text"):
                    if role == "password-text":
                        value = "•••" if text else ""
                    elif text or (node.editable and not node.children):
                        # an editable document's text is in its paragraphs (child lines):
                        # `= ""` on it would read as "empty"
                        # document paragraphs: a shorter cut (read one with elementID in full)
                        limit = (
                            self.text_limit
                            if role not in DOCUMENT_PARTS
                            else min(self.text_limit, PARAGRAPH_LIMIT)
                        )
                        value = cut(text, limit)
                if node.value is not None and role in ("slider", "spin-button", "scroll-bar"):
                    # a spin button shows its text ("January", "05:30"); its number is apart
                    value = node.value if not text or text == node.value else text
                if node.editable and value and name == " ".join(value.split()):
                    name = ""  # an editable paragraph named by its own text: said once
                if role == "combo-box" and not text:
                    chosen = next(
                        (c for c in node.walk()[1:] if "selected" in c.states and c.name), None
                    )
                    if chosen is not None:
                        value = cut(clean_name(chosen.name), self.text_limit)
            elif role in TEXTUAL and (name or text or node.value):
                shown_role = TEXTUAL[role]
                full = name or " ".join(text.split())
                if not name and text:
                    name, text = cut(text, self.text_limit), ""
                elif text and text != name:
                    value = cut(text, self.text_limit)
                if node.value is not None:
                    value = node.value
                repeats = bool(full) and (full == parent_name or full in self._labels)
                keep = bool(name or value) and not (repeats and not value)
                if role in ("image", "icon") and not name:
                    keep = False
            elif role in ALWAYS_STRUCTURAL or (role in STRUCTURAL and name and name != parent_name):
                keep = True
                shown_role = STRUCTURAL[role]
        target = None
        if keep:
            states = states_shown(node)
            widget = is_widget(node)
            full_name = clean_name(node.name) or " ".join((node.text or "").split()) or name
            shown_name = "" if widget and name and name == parent_name else name
            # a labelled widget over the one part that carries the action: one line, acting
            # on that part
            target = wrapped_target(node) if node.role in WRAPPERS else shell_target(node)
            if target is not None and node.role not in WRAPPERS:
                shown_name = own_name(target)  # a shell's name is its button's, not its menu's
                hint = target.hint or node.hint
                if not shown_name and hint and not shown_role.endswith(f"({hint})"):
                    shown_role = f"{shown_role} ({hint})"  # what it opens (atspi/details.py)
            if target is not None:  # the part acted on: its states are what the act meets
                states, shown_role = wrapped_line(node, target, states, shown_role)
                shown_name = shown_name or own_name(target) or folded_text(target) or ""
            line_node = node if target is not None and row_over_part(node, target) else target
            line_node = line_node or node
            if line_node is not node and line_node.key in self._seen:
                return  # the part it acts on has its line already (reached twice)
            self._seen.add(line_node.key)
            out.append(Line(depth, line_node, shown_role, shown_name, value, states, widget))
            child_depth = depth + 1
            parent_name = full_name or parent_name
            if widget and node.children and folded_text(node) in ("", name):
                return  # its content is its name: nothing more to list
            closed = "collapsed" in node.states or "expandable" in node.states
            if role == "combo-box" and closed and "expanded" not in node.states and value:
                return  # closed (it says so): its lifted item is the value shown
        else:
            child_depth = depth
        if target is not None:
            if node.role not in WRAPPERS:  # a shell: the menu it opened is listed under it
                for child in self._reading_order(node.children):
                    if not any(d is target for d in child.walk()):
                        self._visit(child, child_depth, parent_name, out, top=False, scope=scope)
            return
        if node.role == "combo-box" and (popup := open_popup(node)) is not None:
            self._popup(*popup, child_depth, parent_name, out)
            return
        for child in self._reading_order(node.children):
            if node.editable and child.role == "static" and not child.children:
                continue  # a text run of an editable area: its text is the area's
            self._visit(child, child_depth, parent_name, out, top=False, scope=scope)

    def _surface(self, node: Node, depth: int, out: list[Line]) -> None:
        """A terminal's screen or a viewer's page: its lines (:mod:`~deskpilot.ax.surface`),
        then its operable parts (a page's links)."""
        parent = self._parent_of(node)
        siblings = parent.children if parent is not None else []
        has_id = operable(node)
        out.extend(
            surface_lines(
                node, depth, states_shown(node), has_id, zoom=self.zoom, siblings=siblings
            )
        )
        for child in self._reading_order(node.children):
            if operable(child):
                self._visit(child, depth + 1, "", out, top=False)

    def _parent_of(self, node: Node) -> Node | None:
        if self._whole is None or node.parent_key is None:
            return None
        return next((n for n in self._whole.walk() if n.key == node.parent_key), None)

    def _folded_bar(self, bar: Node, depth: int, out: list[Line]) -> None:
        """A bar folded away until the pointer moves (ax/revealers.py): its controls, marked
        hidden (the read that brings it back shows them as they are)."""
        for part in hidden_controls(bar):
            name = clean_name(part.name) or clean_name(part.description)[:60]
            role = INTERACTIVE.get(part.role, part.role)
            value = part.value if part.role in ("slider", "spin-button", "scroll-bar") else None
            states = [*states_shown(part), "hidden"]
            out.append(Line(depth, part, role, name, value, states, True))

    def _popup(self, popup: Node, area: Rect, depth: int, parent: str, out: list[Line]) -> None:
        """An open drop-down's list: judged by its own rectangle (it may reach past the
        window); its scrolled-away items on one ``more`` line (:mod:`~deskpilot.ax.popup`)."""
        window, self.area = self.area, area
        try:
            self._visit(popup, depth, parent, out, top=False)
        finally:
            self.area = window
        if hidden := scrolled_items(popup, area):
            more = more_line(hidden)
            out.append(Line(depth + 1, popup, "text", "", None, [], False, fixed=True, raw=more))

    def _row(self, row: Node, cells: list[Node], depth: int, out: list[Line], scope: bool) -> None:
        """A table row as one line (its cells' texts); the cells to operate under it."""
        role = "header" if all(c.role in HEADERS for c in cells) else "row"
        states = states_shown(row)
        pickable = bool(row.states & {"selectable", "focusable"})
        out.append(
            Line(depth, row, role, cut(row_text(cells), self.text_limit), None, states, pickable)
        )
        for cell in cells:
            if cell_operable(cell):
                self._visit(cell, depth + 1, "", out, top=False, scope=scope)

    def _operable(
        self, node: Node, how: str, depth: int, parent_name: str, out: list[Line], scope: bool
    ) -> None:
        """A node operable by what it offers (a listener, tabindex, overflow): one line with
        an ID; its content folded into it when that is only text, else listed under it."""
        if how == "click" and page_level(node):
            # a listener on the page's body: not a control; its content reads as usual
            for child in self._reading_order(node.children):
                self._visit(child, depth, parent_name, out, top=False, scope=scope)
            return
        role = role_word(node, "click" if how == "item" else how)
        name = own_name(node)
        folded = folded_text(node) if how != "scroll" else None
        if not name and folded:
            name = cut(folded, 100)
        if not name and node.hint:
            role = f"{role} ({node.hint})"
        states = states_shown(node)
        if how == "scroll":
            states.append(f"more {node.more}" if node.more else "scrollable")
        value = node.value if node.value is not None else None
        text = (node.text or "").strip()
        field = node.role in ("text", "entry") and node.text is not None
        if value is None and not node.children and ((text and flat(text) != name) or field):
            # a text that takes the focus but cannot be edited (a calculator's display, a
            # read-only field): it reads by its value
            value = cut(text, self.text_limit)
            if field:
                role = "textbox"
                if "readonly" not in states:
                    states.append("readonly")
        shown = "" if name and name == parent_name else name
        out.append(Line(depth, node, role, shown, value, states, True))
        if folded is not None:
            return
        # a clickable container (a list behind one delegated listener): its parts are items
        inner = scope or (clickable(node) and not page_level(node))
        for child in self._reading_order(node.children):
            self._visit(child, depth + 1, name or parent_name, out, top=False, scope=inner)

    def _table(self, node: Node, grid: Grid, depth: int, out: list[Line], top: bool) -> None:
        """A virtual table: its line, what part of it this is, a line per row (ax/table.py)."""
        if not top:
            name = clean_name(node.name) or clean_name(node.label)
            out.append(Line(depth, node, "table", name, None, states_shown(node), True))
            depth += 1
        bus, path = node.key

        def synthetic(what: str) -> Node:
            return Node(key=(bus, f"{path}#{what}"), role="table-part")

        ref = node
        summary = table_summary(node, grid, "{id}")
        out.append(Line(depth, synthetic("summary"), "", "", None, [], False, raw=summary, ref=ref))
        budget = self.budget if top else TABLE_BUDGET  # a zoomed read is the table alone
        heads = column_headers(node) if not grid.addressed else []
        for head, acts in heads:  # a header that sorts its column: a line and an ID of its own
            name = clean_name(head.name) or clean_name(head.description)
            out.append(Line(depth, head, "colheader", name, None, states_shown(head), acts))
        for row in row_lines(node, grid, "{id}", budget, columns=not heads):
            owner = row.node if row.node is not None else synthetic(f"row{row.row}")
            out.append(
                Line(depth, owner, "", "", None, [], row.node is not None, raw=row.text, ref=ref)
            )

    # -- writing ---------------------------------------------------------------------------

    def render(self, root: Node, *, header: str = "") -> Rendered:
        lines = self.collect(root)
        keys = [ln.node.key for ln in lines]
        ids = assign_ids([*keys, *(ln.ref.key for ln in lines if ln.ref is not None)])
        # structural lines and text lines carry no ID unless the budget needs one to zoom into
        result = Rendered(text="")
        used = len(header)
        body: list[str] = []
        for i, ln in enumerate(lines):
            eid = ids[ln.node.key]
            ref = ids[ln.ref.key] if ln.ref is not None else ""
            if ln.ref is not None:  # the table named in the line: its ID must work
                result.ids.setdefault(ref, ln.ref)
            text = self._line(ln, eid if ln.has_id else None, ref)
            zoomable = not ln.has_id and not ln.raw and _CUT.search(text) is not None
            if zoomable:  # a text cut short: its ID reads it in full
                text = _CUT.sub(FOR_ALL, self._line(ln, eid, ref), count=1)
            if used + len(text) + 1 > self.budget and not (self.zoom and not body):
                rest = lines[i:]
                result.omitted = len(rest)
                body.append(self._more(rest, ids, result))
                break
            body.append(text)
            used += len(text) + 1
            result.lines[eid] = text.strip()
            if zoomable:
                result.ids.setdefault(eid, ln.node)
            if ln.has_id:
                result.ids[eid] = ln.node
                result.names[eid] = ln.name
                result.roles[eid] = ln.role
                result.widgets += 1
        result.text = "\n".join(body)
        return result

    def _line(self, ln: Line, eid: str | None, ref: str = "") -> str:
        if ln.raw:
            text = "  " * ln.depth + ln.raw.replace("{id}", ref)
            return f"{text} @{eid}" if eid is not None else text
        parts = ["  " * ln.depth + ln.role]
        if ln.name:
            parts.append(_quote(ln.name if self.zoom else recut(ln.name, NAME_LIMIT)))
        if ln.value is not None:
            parts.append("= " + _quote(ln.value))
        if ln.states:
            parts.append("[" + " ".join(ln.states) + "]")
        if eid is not None:
            parts.append("@" + eid)
        return " ".join(parts)

    @staticmethod
    def _more(rest: list[Line], ids: dict[tuple[str, str], str], result: Rendered) -> str:
        """A marker for what the budget left out, naming containers to zoom into."""
        starts: list[str] = []
        min_depth = min(ln.depth for ln in rest)
        for ln in rest:
            if ln.depth == min_depth and len(starts) < 3:
                eid = ids[ln.node.key]
                result.ids.setdefault(eid, ln.node)
                starts.append(
                    f"@{eid} ({ln.role}{' ' + _quote(cut(ln.name, 30)) if ln.name else ''})"
                )
        widgets = sum(1 for ln in rest if ln.has_id)
        return (
            f"… {len(rest)} more elements ({widgets} interactive) not shown — read one part "
            f'with read_screen_ax {{"elementID": "…"}}, starting at: ' + ", ".join(starts)
        )
