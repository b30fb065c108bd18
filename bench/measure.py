"""Coverage and size: the window's widgets (ground truth from the pyatspi walk), which of them
deskpilot shows with an @ID and which OSWorld's filter keeps as a row; characters per widget;
and, for the analysis, why deskpilot missed a widget and which of its lines are heavy.

A widget (issue 6): a node with a widget role or the EDITABLE state that is SHOWING and VISIBLE
(GTK 4.8 sets SHOWING only on the frame: VISIBLE there) with non-zero bounds that intersect the
screen (GTK3 tree cells scrolled out of view still say SHOWING, at −2³¹).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench import osworld
from deskpilot.ax.render import Renderer
from deskpilot.ax.roles import is_displayed, on_screen
from deskpilot.desktop.base import Node, Rect, WindowInfo

#: The widget roles of issue 6, as pyatspi role names with spaces turned into dashes.
WIDGET_ROLES = {
    "push-button", "toggle-button", "check-box", "radio-button", "menu", "menu-item",
    "check-menu-item", "radio-menu-item", "combo-box", "entry", "password-text",
    "spin-button", "slider", "link", "page-tab", "list-item", "tree-item", "table-cell",
    "switch", "scroll-bar", "date-editor",
}  # fmt: skip

Bounds = tuple[int, int, int, int]


@dataclass
class Sizes:
    """The numbers of one window, as in snapshot.json (minus timings) plus analysis."""

    widgets: int
    widget_keys: list[tuple[str, str]]
    covered: int
    baseline_covered: int
    chars: int
    baseline_chars: int
    missing: list[dict[str, Any]] = field(default_factory=list)
    baseline_missing_roles: dict[str, int] = field(default_factory=dict)
    heavy_lines: list[str] = field(default_factory=list)
    widget_line_chars: int = 0
    other_line_chars: int = 0
    other_lines: int = 0
    widget_lines: int = 0
    matched_by_fallback: int = 0
    matched_by_wrapper: int = 0
    baseline_rows: int = 0
    #: each widget's wrapper (see :func:`measure`), by widget key
    wrappers: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def coverage_of(self, keys: Iterable[Sequence[str]]) -> float:
        """The share of the widgets among ``keys`` ((bus, path) pairs, e.g. another read's),
        directly or through their wrapper."""
        shown = {(k[0], k[1]) for k in keys}
        hits = sum(
            1 for k in self.widget_keys if k in shown or self.wrappers.get(k, ("", "")) in shown
        )
        return hits / self.widgets if self.widgets else 1.0

    @property
    def coverage(self) -> float:
        return self.covered / self.widgets if self.widgets else 1.0

    @property
    def baseline_coverage(self) -> float:
        return self.baseline_covered / self.widgets if self.widgets else 1.0

    @property
    def chars_per_widget(self) -> float | None:
        return self.chars / self.covered if self.covered else None

    @property
    def baseline_chars_per_widget(self) -> float | None:
        return self.baseline_chars / self.baseline_covered if self.baseline_covered else None

    @property
    def size_ratio(self) -> float | None:
        mine, theirs = self.chars_per_widget, self.baseline_chars_per_widget
        return mine / theirs if mine is not None and theirs else None


def gtk4(walk: Mapping[str, Any]) -> bool:
    return str(walk.get("toolkit", "")).upper() == "GTK" and str(
        walk.get("toolkit_version", "")
    ).startswith("4.")


def offset(walk: Mapping[str, Any], window: WindowInfo) -> tuple[int, int]:
    """GTK4 reports window-relative extents (frame at 0,0): add the window's origin."""
    frame = walk["nodes"][0]
    ext = frame.get("extents")
    geo = window.geometry
    if ext and ext[0] == 0 and ext[1] == 0 and (geo.x, geo.y) != (0, 0):
        return geo.x, geo.y
    return 0, 0


def screen_bounds(node: Mapping[str, Any], shift: tuple[int, int]) -> Bounds | None:
    ext = node.get("extents")
    if ext is None:
        return None
    return (ext[0] + shift[0], ext[1] + shift[1], ext[2], ext[3])


def is_widget(
    node: Mapping[str, Any], *, visible_only: bool, bounds: Bounds | None, screen: Rect
) -> bool:
    states = node["states"]
    if osworld.tag_of(node["role"]) not in WIDGET_ROLES and "editable" not in states:
        return False
    if osworld.tag_of(node["role"]) == "table-cell" and not {
        "focusable",
        "selectable",
        "editable",
    } & set(states):
        return False  # a web table's plain cell: text, read with its row (issue 9)
    if "visible" not in states or (not visible_only and "showing" not in states):
        return False
    if bounds is None:
        return False
    rect = Rect(*bounds)
    return not rect.empty and rect.intersects(screen)


def widget_indices(walk: Mapping[str, Any], window: WindowInfo, screen: Rect) -> list[int]:
    """The widgets a person sees: shown themselves, and under parents that show. Chromium
    says SHOWING of a collapsed drop-down's selected option, inside its closed popup menu
    (neither showing nor visible): a person sees that option as the drop-down's value, not
    as an item (counted as a widget of its own, it was the 'missed' 62nd of Chromium's)."""
    shift = offset(walk, window)
    only_visible = gtk4(walk)
    nodes = walk["nodes"]
    return [
        i
        for i, n in enumerate(nodes)
        if is_widget(n, visible_only=only_visible, bounds=screen_bounds(n, shift), screen=screen)
        and not _hidden_above(nodes, i, visible_only=only_visible)
    ]


def _hidden_above(nodes: Sequence[Mapping[str, Any]], i: int, *, visible_only: bool) -> bool:
    """Whether an ancestor of node ``i`` is hidden (not visible; and not showing, where the
    toolkit sets SHOWING below its windows)."""
    seen: set[int] = set()
    parent = nodes[i].get("parent", -1)
    while isinstance(parent, int) and 0 <= parent < len(nodes) and parent not in seen:
        seen.add(parent)
        states = nodes[parent]["states"]
        if "visible" not in states and (visible_only or "showing" not in states):
            return True
        parent = nodes[parent].get("parent", -1)
    return False


def _fallback_key(role: str, name: str, b: Rect | Bounds | None) -> tuple[Any, ...] | None:
    if b is None:
        return None
    box = (b.x, b.y, b.width, b.height) if isinstance(b, Rect) else tuple(b)
    return (role.replace(" ", "-"), " ".join(name.split()), box)


def measure(
    walk: Mapping[str, Any],
    window: WindowInfo,
    screen: Rect,
    head: str,
    body: str,
    ids: Mapping[str, Node],
    root: Node | None,
    budget: int,
) -> Sizes:
    """Widgets, coverage and sizes of one window; the analysis of what deskpilot missed."""
    nodes: Sequence[Mapping[str, Any]] = walk["nodes"]
    shift = offset(walk, window)
    widgets = widget_indices(walk, window, screen)
    kept = osworld.filter_nodes(nodes)
    kept_ids = {id(n) for n in kept}
    tsv = osworld.linearize(kept)

    bus = walk["bus"]
    shown_keys = {n.key for n in ids.values()}
    fallback = {_fallback_key(n.role, n.name, n.bounds) for n in ids.values()}
    covered: list[int] = []
    by_fallback = 0
    for i in widgets:
        n = nodes[i]
        if (bus, n["path"]) in shown_keys:
            covered.append(i)
        elif _fallback_key(n["role"], n["name"], screen_bounds(n, shift)) in fallback:
            covered.append(i)
            by_fallback += 1
    # a table row read as one line whose @ID is on the cell that wraps the row's one widget
    # (GTK 3's tree view: an unnamed cell around the named cell; the row's ID selects it)
    # reaches that widget: it is covered through its wrapper
    by_wrapper = 0
    wrappers: dict[tuple[str, str], tuple[str, str]] = {}
    for i in widgets:
        parent = nodes[i].get("parent", -1)
        if not isinstance(parent, int) or parent < 0:
            continue
        wrapper = nodes[parent]
        if wrapper["role"] != "table cell" or wrapper["name"]:
            continue
        if [j for j in widgets if nodes[j].get("parent") == parent] != [i]:
            continue
        wrappers[(bus, nodes[i]["path"])] = (bus, wrapper["path"])
        if i not in covered and (bus, wrapper["path"]) in shown_keys:
            covered.append(i)
            by_wrapper += 1
    baseline_covered = [i for i in widgets if id(nodes[i]) in kept_ids]
    baseline_missing: dict[str, int] = {}
    for i in widgets:
        if id(nodes[i]) not in kept_ids:
            tag = osworld.tag_of(nodes[i]["role"])
            baseline_missing[tag] = baseline_missing.get(tag, 0) + 1

    sizes = Sizes(
        widgets=len(widgets),
        widget_keys=[(bus, nodes[i]["path"]) for i in widgets],
        covered=len(covered),
        baseline_covered=len(baseline_covered),
        chars=len(head) + 1 + len(body),
        baseline_chars=len(tsv),
        baseline_missing_roles=baseline_missing,
        matched_by_fallback=by_fallback,
        matched_by_wrapper=by_wrapper,
        wrappers=wrappers,
        baseline_rows=len(kept),
    )
    missed = [i for i in widgets if i not in set(covered)]
    sizes.missing = _explain(missed, walk, window, shift, root, budget)
    lines = body.splitlines()
    sizes.heavy_lines = sorted(lines, key=len, reverse=True)[:12]
    for line in lines:
        if " @" in line and not line.lstrip().startswith("…"):
            sizes.widget_lines += 1
            sizes.widget_line_chars += len(line) + 1
        else:
            sizes.other_lines += 1
            sizes.other_line_chars += len(line) + 1
    return sizes


def _explain(
    missed: list[int],
    walk: Mapping[str, Any],
    window: WindowInfo,
    shift: tuple[int, int],
    root: Node | None,
    budget: int,
) -> list[dict[str, Any]]:
    """For each missed widget: what the walk saw, and why deskpilot did not show it."""
    nodes = walk["nodes"]
    index: dict[tuple[str, str], Node] = {}
    lines: set[tuple[str, str]] = set()
    if root is not None:
        index = {n.key: n for n in root.walk()}
        lines = {ln.node.key for ln in Renderer(window.geometry, budget).collect(root)}
    out: list[dict[str, Any]] = []
    for i in missed:
        n = nodes[i]
        key = (walk["bus"], n["path"])
        mine = index.get(key)
        out.append(
            {
                "role": n["role"],
                "name": n["name"],
                "states": sorted(set(n["states"]) - {"enabled", "sensitive"}),
                "bounds": screen_bounds(n, shift),
                "path": n["path"],
                "parent": _describe(nodes[n["parent"]]) if n["parent"] >= 0 else None,
                "why": _why(key, mine, index, lines, window),
            }
        )
    return out


def _describe(n: Mapping[str, Any]) -> str:
    return f"{n['role']} {n['name']!r}"


def _why(
    key: tuple[str, str],
    mine: Node | None,
    index: Mapping[tuple[str, str], Node],
    lines: set[tuple[str, str]],
    window: WindowInfo,
) -> str:
    if mine is None:
        return "not in deskpilot's snapshot (the reader did not return it)"
    if key in lines:
        return "rendered, but cut by the character budget"
    chain: list[Node] = []
    parent = mine.parent_key
    while parent is not None and parent in index:
        chain.append(index[parent])
        parent = index[parent].parent_key
    hidden = [a for a in chain[:-1] if not is_displayed(a)]  # the frame itself always shows
    if hidden:
        a = hidden[-1]
        return (
            f"an ancestor is neither showing nor visible in deskpilot's snapshot: {a.role} "
            f"{a.name!r} {sorted(a.states)}"
        )
    if not is_displayed(mine):
        return f"deskpilot's snapshot says neither showing nor visible: {sorted(mine.states)}"
    if not on_screen(mine, window.geometry):
        return f"outside the window area {window.geometry} in deskpilot's snapshot: {mine.bounds}"
    return (
        f"dropped by the renderer (deskpilot role {mine.role!r}, name {mine.name!r}, "
        f"states {sorted(mine.states)})"
    )
