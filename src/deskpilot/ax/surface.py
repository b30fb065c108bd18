"""Text surfaces: a terminal's screen and a document viewer's page, read as the lines they show.

A terminal (VTE, and any toolkit's ``terminal`` role) and a viewer's page (a PDF viewer's
``page``) expose what they show through the Text interface, under a name that is only a title
("Terminal"). Their text is the content a person reads, so a read shows it line by line under
the surface's own line, each as ``│ text``. A terminal is read from its end — the prompt and
the last output matter most — so a long screen keeps its last lines and says how many earlier
ones it left out; a page is read from its top. A zoomed read of the surface (``read_screen_ax``
with its elementID) shows every line; output scrolled out of a terminal's screen is not
exposed by it (scroll it up, then read again), and the read says so when its scroll bar shows
there is some.

Each line is keyed by its text (and how many times that text came before), so the change
summary after a command lists the new output as new lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from deskpilot.ax.prune import Line
from deskpilot.ax.roles import clean_name, is_displayed
from deskpilot.desktop.base import Node

#: Roles whose Text is what they show, read line by line: the role word each reads as.
SURFACES: dict[str, str] = {"terminal": "terminal", "page": "page"}
#: Lines a surface shows in a normal read (a terminal its last ones, a page its first ones).
SURFACE_LINES = 40
#: Characters a surface's lines take at most in a normal read.
SURFACE_CHARS = 4000
#: Longest line shown in a normal read.
LINE_CHARS = 200


def is_surface(node: Node) -> bool:
    return node.role in SURFACES and bool((node.text or "").strip())


def surface_lines(
    node: Node,
    depth: int,
    states: list[str],
    has_id: bool,
    *,
    zoom: bool,
    siblings: Sequence[Node] = (),
) -> list[Line]:
    """The surface's own line, then its text's lines under it (all of them when ``zoom``);
    ``siblings``: the nodes beside it (a terminal's scroll bar)."""
    terminal = node.role == "terminal"
    lines = [ln.rstrip() for ln in (node.text or "").replace("\ufffc", "").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    shown = lines if zoom else _fit(lines, from_end=terminal)
    left = len(lines) - len(shown)
    out = [Line(depth, node, SURFACES[node.role], clean_name(node.name), None, states, has_id)]
    bus, path = node.key
    seen: dict[str, int] = {}

    def raw(text: str, what: str) -> Line:
        ref = Node(key=(bus, f"{path}#{what}"), role="text-line")
        return Line(depth + 1, ref, "", "", None, [], False, fixed=True, raw=text, ref=node)

    more = (
        f"… {left} {'earlier' if terminal else 'more'} line{'s' if left != 1 else ''} "
        "(read_screen_ax @{id} for all)"
    )
    if left and terminal:
        out.append(raw(more, "earlier"))
    for text in shown:
        n = seen[text] = seen.get(text, 0) + 1
        shown_text = text if zoom or len(text) <= LINE_CHARS else text[:LINE_CHARS] + "…"
        out.append(raw(f"│ {shown_text}".rstrip(), f"line{n}:{text}"))
    if left and not terminal:
        out.append(raw(more, "more"))
    if terminal and _scrolled_back(siblings):
        out.append(raw("(earlier output is in the scrollback: scroll up to read it)", "back"))
    return out


def _fit(lines: list[str], *, from_end: bool) -> list[str]:
    order = list(reversed(lines)) if from_end else list(lines)
    kept: list[str] = []
    used = 0
    for text in order:
        cost = min(len(text), LINE_CHARS) + 3
        if len(kept) >= SURFACE_LINES or used + cost > SURFACE_CHARS:
            break
        kept.append(text)
        used += cost
    return list(reversed(kept)) if from_end else kept


def _scrolled_back(siblings: Sequence[Node]) -> bool:
    """Whether the terminal's vertical scroll bar (a sibling, as VTE places it) is away from
    its top: lines scrolled out of the screen exist."""
    for child in siblings:
        if child.role != "scroll-bar" or "horizontal" in child.states or not is_displayed(child):
            continue
        try:
            if float(child.value or 0) > 0:
                return True
        except ValueError:
            continue
    return False
