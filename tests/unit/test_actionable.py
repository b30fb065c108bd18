"""Actionable means addressable: how operable nodes without a widget role read (pure logic).

The trees are shaped like Chromium's (a ``section`` per div/span with listeners, ``static``
text leaves, actions named as Chromium names them); tests/desktop/test_web_reach.py runs the
same rules on real pages.
"""

from __future__ import annotations

from deskpilot.ax.render import Renderer
from deskpilot.desktop.base import Node, Rect

SHOWN = frozenset({"showing", "visible", "sensitive", "enabled"})
AREA = Rect(0, 0, 1000, 800)
_n = iter(range(1, 10**6))


def node(
    role: str,
    name: str = "",
    *kids: Node,
    at: tuple[int, int, int, int] = (10, 10, 100, 20),
    actions: tuple[str, ...] = ("doDefault", "showContextMenu"),
    states: frozenset[str] = SHOWN,
    hint: str = "",
    text: str | None = None,
    more: str = "",
    description: str = "",
) -> Node:
    n = Node(
        key=(":1.2", f"/org/a11y/atspi/accessible/{next(_n)}"),
        role=role,
        name=name,
        description=description,
        states=states,
        bounds=Rect(*at),
        text=text,
        actions=actions,
        hint=hint,
        more=more,
        children=list(kids),
    )
    for k in n.children:
        k.parent_key = n.key
    return n


def static(text: str, at: tuple[int, int, int, int] = (10, 10, 60, 20)) -> Node:
    return node("static", text, at=at, actions=("clickAncestor", "showContextMenu"))


CLICK = ("click", "showContextMenu")
VIA = ("clickAncestor", "showContextMenu")


def page(*kids: Node) -> Node:
    doc = node("document-web", "Page", *kids, at=(0, 0, 1000, 800))
    return node("frame", "Window", doc, at=(0, 0, 1000, 800))


def read(root: Node) -> str:
    return Renderer(AREA, 10000).render(root).text


def test_a_clickable_span_folds_its_text_into_one_line() -> None:
    link = node("section", "", static("unread"), static("ones", (70, 10, 40, 20)), actions=CLICK)
    para = node("paragraph", "", static("Show"), link, at=(10, 10, 600, 20))
    text = read(page(para))
    assert 'clickable "unread ones" @2.' in text
    assert 'text "unread"' not in text


def test_nameless_ones_are_named_by_description_then_hint() -> None:
    titled = node("section", "", actions=CLICK, description="Like this post")
    icon = node("section", "", actions=CLICK, hint="span.icon.retweet", at=(30, 40, 18, 18))
    image = node(
        "image",
        "To get missing image descriptions, open the context menu.",
        actions=CLICK,
        hint="img.share",
        at=(60, 40, 18, 18),
    )
    text = read(page(titled, icon, image))
    assert 'clickable "Like this post" @' in text
    assert "clickable (span.icon.retweet) @" in text
    assert "image (img.share) @" in text and "missing image" not in text


def test_focusable_and_scrollable_nodes_get_ids() -> None:
    handle = node("section", "", states=SHOWN | {"focusable"}, hint="span.handle")
    items = [static(f"Item {i}", (10, 100 + 20 * i, 60, 20)) for i in range(3)]
    area = node(
        "section",
        "",
        *items,
        at=(10, 100, 200, 60),
        actions=("doDefault", "showContextMenu", "scrollDown", "scrollUp"),
        states=SHOWN | {"focusable"},
        more="below",
        hint="div#list",
    )
    text = read(page(handle, area))
    assert "focusable (span.handle) @" in text
    assert "scrollable (div#list) [more below] @" in text
    assert '  text "Item 0"' in text  # content under it, not folded


def test_a_delegated_listener_makes_its_blocks_items() -> None:
    items = [
        node("section", "", static(f"Item {i}"), actions=VIA, at=(10, 20 * i, 100, 20))
        for i in range(1, 4)
    ]
    listing = node("section", "", *items, actions=CLICK, hint="div#list", at=(10, 20, 100, 60))
    text = read(page(listing))
    for i in range(1, 4):
        assert f'clickable "Item {i}" @' in text
    assert "clickable (div#list) @" in text  # the container itself, items under it


def test_a_listener_on_the_body_is_not_a_control() -> None:
    blocks = [
        node("paragraph", "", static(f"Para {i}"), actions=VIA, at=(10, 20 * i, 100, 20))
        for i in range(1, 3)
    ]
    body = node("section", "", *blocks, actions=CLICK, hint="body", at=(0, 0, 1000, 100))
    text = read(page(body))
    assert "body" not in text and text.count("@") == 0
    assert 'text "Para 1"' in text


def test_a_labelled_widget_over_its_link_is_one_line_acting_on_the_link() -> None:
    link = node(
        "link", "Invoice 2", static("Invoice 2"), actions=("jump",), states=SHOWN | {"focusable"}
    )
    cell = node("table-cell", "Invoice 2", link)
    renderer = Renderer(AREA, 10000)
    rendered = renderer.render(page(cell))
    assert rendered.text.count("Invoice 2") == 1
    (eid,) = [e for e, n in rendered.ids.items() if n.role != "document-web"]
    assert rendered.ids[eid].key == link.key  # the ID acts on the link
    assert rendered.text.strip().endswith(f'cell "Invoice 2" @{eid}')


def test_readonly_is_not_disabled() -> None:
    readonly = node(
        "entry", "", states=frozenset({"showing", "visible", "read-only", "focusable"}), text="ro"
    )
    disabled = node(
        "entry",
        "",
        states=frozenset({"showing", "visible", "editable"}),
        text="x",
        at=(10, 40, 100, 20),
    )
    lines = read(page(readonly, disabled)).splitlines()
    assert lines[1].strip().startswith('textbox = "ro" [readonly] @')
    assert lines[2].strip().startswith('textbox = "x" [disabled] @')


def test_a_list_item_whose_content_is_its_name_lists_nothing_more() -> None:
    item = node("list-item", "", static("•", (0, 10, 8, 20)), static("Alpha", (20, 10, 40, 20)))
    text = read(page(item))
    assert 'listitem "Alpha" @' in text and 'text "•"' not in text and 'text "Alpha"' not in text
