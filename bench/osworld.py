"""OSWorld's node filter and TSV linearization, re-implemented over the pyatspi walk's data.

Written from reading xlang-ai/OSWorld (not copied):

* ``desktop_env/server/main.py`` ``_create_atspi_node``: one XML element per accessible, its tag
  the role name with spaces turned into ``-``; states as ``st:<name>="true"``; ``cp:screencoord``
  ``"(x, y)"`` and ``cp:size`` ``"(w, h)"`` only when the node is both VISIBLE and SHOWING and
  has a Component; the element text is ``Text.getText`` without U+FFFC/U+FFFD; the tree is cut
  at depth 50 and after 1,024 children (the walker marks what survives);
* ``mm_agents/accessibility_tree_wrap/heuristic_retrieve.py`` ``judge_node``/``filter_nodes``
  (platform "ubuntu", ``check_image=False``): keep a node whose tag starts with ``document`` or
  ends with one of item/button/heading/label/scrollbar/searchbox/textbox/link/tabelement/
  textfield/textarea/menu, or is one of a fixed set; that is SHOWING and VISIBLE; ENABLED,
  EDITABLE, EXPANDABLE or CHECKABLE; has a name or text; and a position ≥ 0 with a positive size;
* ``mm_agents/agent.py`` ``linearize_accessibility_tree``: a header line and one tab-separated
  row per kept node in document order: tag, name, text (``""`` when empty, wrapped in quotes with
  doubled quotes when it contains one), class, description, position, size. On "ubuntu" the
  class and description columns read the *windows* attribute namespace (``attributes_ns_ubuntu``
  is set to ``https://accessibility.windows.example.org/ns/attributes`` there), which the Ubuntu
  server never writes, so those two columns are always empty — reproduced as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"

_PREFIX = ("document",)
_SUFFIXES = (
    "item",
    "button",
    "heading",
    "label",
    "scrollbar",
    "searchbox",
    "textbox",
    "link",
    "tabelement",
    "textfield",
    "textarea",
    "menu",
)
_TAGS = {
    "alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph",
    "scroll-bar", "section", "slider", "static", "table-cell", "terminal", "text",
    # Windows-only tags in the same set (never produced on Linux)
    "netuiribbontab", "start", "trayclockwclass", "traydummysearchcontrol", "uiimage",
    "uiproperty", "uiribboncommandbar",
}  # fmt: skip


def tag_of(role: str) -> str:
    """The XML tag OSWorld's server gives a node: role name, spaces → dashes."""
    return (role.strip() or "unknown").replace(" ", "-")


def _coords(node: Mapping[str, Any]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """(screencoord, size) as the server records them: only for showing+visible components."""
    states = node["states"]
    ext = node.get("extents")
    if ext is None or "visible" not in states or "showing" not in states:
        return None
    return (ext[0], ext[1]), (ext[2], ext[3])


def judge(node: Mapping[str, Any]) -> bool:
    """OSWorld's ``judge_node`` for platform "ubuntu" without images."""
    if not node.get("osworld", True):
        return False
    tag = tag_of(node["role"])
    keeps = tag.startswith(_PREFIX) or tag.endswith(_SUFFIXES) or tag in _TAGS
    states = set(node["states"])
    keeps = keeps and "showing" in states and "visible" in states
    keeps = keeps and bool(states & {"enabled", "editable", "expandable", "checkable"})
    text = node.get("text") or ""
    keeps = keeps and (node["name"] != "" or len(text) > 0)
    got = _coords(node)
    (x, y), (w, h) = got if got is not None else ((-1, -1), (-1, -1))
    return keeps and x >= 0 and y >= 0 and w > 0 and h > 0


def filter_nodes(nodes: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """OSWorld's ``filter_nodes``: the kept nodes in document order."""
    return [n for n in nodes if judge(n)]


def _text_cell(text: str | None) -> str:
    if not text:
        return '""'
    return '"{}"'.format(text.replace('"', '""')) if '"' in text else text


def linearize(kept: Iterable[Mapping[str, Any]]) -> str:
    """OSWorld's ``linearize_accessibility_tree`` ("ubuntu") over already-filtered nodes."""
    rows = [HEADER]
    for node in kept:
        got = _coords(node)
        position, size = (str(got[0]), str(got[1])) if got is not None else ("", "")
        rows.append(
            "\t".join(
                (
                    tag_of(node["role"]),
                    node["name"],
                    _text_cell(node.get("text")),
                    "",
                    "",
                    position,
                    size,
                )
            )
        )
    return "\n".join(rows)
