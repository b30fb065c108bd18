"""Leaner web reads: the browser's own controls as one line, sentences as one line.

A browser window is mostly its page: the toolbar, the tab strip and the address bar cost a
read some twenty lines a model seldom needs. Unless asked for them (``chrome``), they read as
one line — the active tab, the address and how many tabs there are — while what the browser
pops up (a dialog, a menu, an alert) still reads in full. Inside the page, a sentence that
inline markup splits into pieces (``Show <span>unread</span> ones``) reads as one line, with
the pieces a person can operate listed under it. A table reads by rows: one line per row
(``row "Invoice 1 | $20"``), with the cells a person can operate under it.
"""

from __future__ import annotations

from deskpilot.ax.actionable import folded_text, operable, own_name, wrapped_target
from deskpilot.ax.prune import Line
from deskpilot.ax.roles import clean_name, is_displayed
from deskpilot.desktop.base import Node

#: Roles of what a browser pops up over its window: read in full even without ``chrome``.
POPUPS = frozenset(
    {"dialog", "alert", "file-chooser", "popup-menu", "menu", "tool-tip", "notification", "window"}
)
#: Fields a label wraps: not pieces of a sentence (their names are the label's own text).
FIELDS = frozenset({"entry", "password-text", "spin-button", "combo-box", "slider",
                    "date-editor", "check-box", "radio-button", "switch", "toggle-button",
                    "list-box"})  # fmt: skip
#: Roles whose children are inline by HTML's content model (a <p> holds no <div>).
PHRASING = frozenset({"paragraph", "heading", "caption", "label"})
#: Roles whose inline pieces make one sentence (and generic containers of text only).
SENTENCES = frozenset({"paragraph", "heading", "caption", "label", "section", "static",
                       "block-quote", "description-value", "definition", "text"})  # fmt: skip


def pages_of(root: Node) -> list[Node]:
    """The web documents a browser window shows (one per visible tab); a document inside
    another (an iframe's) is part of that page, not a page of its own."""
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.role == "document-web" and "showing" in node.states:
            found.append(node)
            continue
        stack.extend(reversed(node.children))
    return found


def chrome_line(root: Node, pages: list[Node]) -> Line:
    """``browser "Title" = "address" [3 tabs]``: the browser's controls in one line."""
    inside = {id(n) for page in pages for n in page.walk()}
    tabs = [n for n in root.walk() if n.role == "page-tab" and id(n) not in inside]
    active = next((t for t in tabs if "selected" in t.states), None)
    address = next(
        (n for n in root.walk() if n.role == "entry" and id(n) not in inside and n.text), None
    )
    # the page's own title (a tab's name can carry its hover card: "… - Memory usage - 24 MB")
    title = clean_name(pages[0].name) if pages else ""
    if not title and active is not None:
        title = clean_name(active.name)
    states = [f"{len(tabs)} tabs"] if len(tabs) > 1 else []
    value = clean_name(address.text or "") if address is not None else None
    return Line(0, root, "browser", title, value, states, False, fixed=True)


def popups_outside(root: Node, pages: list[Node]) -> list[Node]:
    """What the browser shows over its window outside its pages (dialogs, menus, alerts)."""
    inside = {id(n) for page in pages for n in page.walk()}
    found: list[Node] = []

    def visit(node: Node) -> None:
        for child in node.children:
            if id(child) in inside or not is_displayed(child):
                continue
            if child.role in POPUPS and (child.role != "menu" or child.children):
                found.append(child)
            else:
                visit(child)

    visit(root)
    return found


#: Roles of a table row's cells.
CELLS = frozenset(
    {"table-cell", "column-header", "row-header", "table-column-header", "table-row-header"}
)
HEADERS = CELLS - {"table-cell"}


def row_cells(row: Node) -> list[Node] | None:
    """A table row's cells, when it holds cells only (a web table's row)."""
    kids = [c for c in row.children if is_displayed(c)]
    return kids if kids and all(c.role in CELLS for c in kids) else None


def row_text(cells: list[Node]) -> str:
    """``Invoice 1 | $20``: a row read as one line."""
    texts = [own_name(c) or folded_text(c) or clean_name(c.text or "") for c in cells]
    return " | ".join(t or "—" for t in texts)


def cell_operable(cell: Node) -> bool:
    """Whether a cell needs a line of its own under its row: it wraps a link, takes the focus
    or a selection, is editable, or holds controls."""
    if cell.states & {"focusable", "selectable", "editable"} or wrapped_target(cell):
        return True
    return any(operable(d) for d in cell.walk()[1:] if is_displayed(d))


def sentence(node: Node) -> str | None:
    """The text of a node whose content is one sentence in pieces: text runs and inline
    parts (links, clickable spans, icons), joined as they are rendered — a space between two
    pieces only where one has it or the page leaves a gap between them (``Enter "<b>Michel</b>"``
    reads ``Enter "Michel"``). None when it holds anything else, or a single piece."""
    kids = [c for c in node.children if is_displayed(c)]
    if len(kids) < 2 or not any(c.role in ("static", "text") for c in kids):
        return None
    if any(c.role in FIELDS or c.editable for c in kids):
        return None  # a label over its field: the field's name is that label's text
    pieces: list[tuple[Node, str]] = []
    for kid in kids:
        if kid.role in ("static", "text") and not kid.children:
            piece = kid.name or kid.text or ""
        elif kid.role in ("image", "icon"):
            named = own_name(kid) or folded_text(kid) or ""
            piece = f"[image: {named}]" if named else ""  # an icon in an instruction
        elif operable(kid):
            piece = own_name(kid) or folded_text(kid) or ""
        elif node.role in PHRASING and kid.role == "section" and folded_text(kid) is not None:
            # a span inside a paragraph: inline by HTML's rules; by its own text when its
            # content says nothing — read while the page replaced its text node (the old one
            # gone or answering "invalid", the new one not in the tree yet: a clock's span
            # ticking every 100 ms read so in 3-4 of 60 reads, the paragraph without its time)
            piece = folded_text(kid) or clean_name((kid.text or "").replace("\ufffc", ""))
        else:
            return None
        if piece:
            pieces.append((kid, piece))
    text, before = "", None
    for kid, piece in pieces:
        joined = text[-1].isspace() or piece[0].isspace() if before is not None else True
        if before is not None and not joined and apart(before, kid) and piece[0] not in ".,;:!?)":
            text += " "
        text += piece
        before = kid
    return " ".join(text.split()) or None


#: Roles of pieces that flow inline with text (no space of their own around them).
INLINE = frozenset({"static", "text", "link", "image", "icon", "section", "mark", "superscript",
                    "subscript", "push-button", "label"})  # fmt: skip


def apart(a: Node, b: Node) -> bool:
    """Whether the page shows a space between two pieces of a sentence: ``b`` starts on
    another line than ``a`` ends, or a gap of about a space's width lies between them. Without
    their positions: when either is not an inline piece."""
    ra, rb = a.bounds, b.bounds
    if ra is None or rb is None or ra.empty or rb.empty:
        return a.role not in INLINE or b.role not in INLINE
    line = min(ra.height, rb.height)  # a piece may wrap: the shorter is one line high
    if rb.y >= ra.y + ra.height - line / 2:
        return True  # b starts below a's last line
    if ra.height > 1.5 * line:
        return False  # a wrapped: its box's right edge is not where its last line ends
    gap = rb.x - (ra.x + ra.width)
    return gap >= max(2, 0.12 * line)
