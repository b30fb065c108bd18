"""Lean rendering: what is kept, collapsed, named, ordered, truncated and budgeted."""

from __future__ import annotations

import pytest

from deskpilot.ax.render import Renderer
from deskpilot.ax.roles import clean_name, cut
from deskpilot.desktop.base import Node, Rect

SHOWN = frozenset({"showing", "visible", "sensitive", "enabled"})
AREA = Rect(0, 0, 1000, 800)
_n = iter(range(1, 10**6))


def node(
    role: str,
    name: str = "",
    *,
    at: tuple[int, int] = (10, 10),
    kids: list[Node] = (),  # type: ignore[assignment]
    states: frozenset[str] = SHOWN,
    text: str | None = None,
) -> Node:
    n = Node(
        key=(":1.9", f"/org/a11y/atspi/accessible/{next(_n)}"),
        role=role,
        name=name,
        states=states,
        bounds=Rect(at[0], at[1], 40, 20),
        text=text,
        children=list(kids),
    )
    for k in n.children:
        k.parent_key = n.key
    return n


def render(root: Node, budget: int = 10000) -> str:
    return Renderer(AREA, budget).render(root).text


def test_interactive_named_and_collapsed() -> None:
    frame = node(
        "frame",
        "App",
        kids=[
            node(
                "panel",
                at=(10, 50),
                kids=[node("filler", at=(10, 50), kids=[node("push-button", "OK", at=(10, 50))])],
            ),
            node("label", "Hello", at=(10, 10)),
        ],
    )
    text = render(frame)
    lines = text.splitlines()
    assert lines[0] == 'text "Hello"'  # reading order: it is above the button
    assert lines[1].startswith('button "OK" @9.')


def test_hidden_and_offscreen_dropped() -> None:
    frame = node(
        "frame",
        "App",
        kids=[
            node("push-button", "Hidden", states=frozenset()),
            node("push-button", "Far", at=(-5000, -5000)),
            node("push-button", "Here", at=(10, 10)),
        ],
    )
    text = render(frame)
    assert "Hidden" not in text and "Far" not in text and '"Here"' in text


def test_gtk_class_names_and_doubled_names_cleaned() -> None:
    assert clean_name("GtkButton") == ""
    assert clean_name("4 4") == "4"
    assert clean_name("Close Tab      ") == "Close Tab"
    button = node("push-button", "GtkButton", kids=[node("label", "π")])
    text = render(node("frame", "App", kids=[button]))
    assert text.splitlines() == [f'button "π" @{text.split("@")[1]}']  # label folded in


def test_editable_values_states_and_passwords() -> None:
    entry = node("entry", "Email", text="a@b.c", states=SHOWN | {"editable", "focused"})
    pw = node("password-text", "Password", text="●●●", states=SHOWN | {"editable"}, at=(10, 40))
    box = node("check-box", "Agree", states=SHOWN | {"checked"}, at=(10, 70))
    off = node("push-button", "Send", states=frozenset({"showing", "visible"}), at=(10, 90))
    text = render(node("frame", "F", kids=[entry, pw, box, off]))
    assert 'textbox "Email" = "a@b.c" [focused]' in text
    assert 'password "Password" = "•••"' in text  # never the real text
    assert 'checkbox "Agree" [checked]' in text
    assert 'button "Send" [disabled]' in text


def test_an_empty_field_shows_empty_but_a_document_with_paragraphs_does_not() -> None:
    empty = node("entry", "Name", text="", states=SHOWN | {"editable"})
    para = node("paragraph", text="Hello there", states=SHOWN | {"editable"}, at=(10, 60))
    doc = node(
        "document-text", "Report", text="", states=SHOWN | {"editable"}, at=(10, 50), kids=[para]
    )
    text = render(node("frame", "F", kids=[empty, doc]))
    assert 'textbox "Name" = ""' in text
    assert 'textbox "Report" [editable]' in text and 'textbox "Report" =' not in text
    assert 'para = "Hello there"' in text


def test_long_text_is_cut_with_a_marker() -> None:
    assert cut("x" * 500).endswith("… +380 chars")
    para = node("paragraph", text="word " * 200)
    assert "… +" in render(node("frame", "F", kids=[para]))


def test_budget_ends_with_a_more_marker_naming_an_id() -> None:
    rows = [node("list-item", f"Item {i}", at=(10, 10 + i)) for i in range(300)]
    result = Renderer(AREA, 800).render(node("frame", "F", kids=rows))
    assert len(result.text) < 1100
    assert "more elements" in result.text and "read_screen_ax" in result.text
    assert result.omitted > 200
    marker = result.text.splitlines()[-1]
    zoom_id = marker.split("starting at: @")[1].split(" ")[0]
    assert zoom_id in result.ids


@pytest.mark.parametrize("list_at", [(10, 10), (10, 60)])  # the list read first, or last
def test_an_element_reached_twice_is_read_once(list_at: tuple[int, int]) -> None:
    # the same element under two parents (a swatch listed by a palette and by its model's
    # view, a popup inside the window's tree): one line, one ID
    swatch = node("push-button", "Swatch red", at=(10, 40))
    twin = Node(swatch.key, swatch.role, swatch.name, states=SHOWN, bounds=swatch.bounds)
    item = node("list-item", kids=[twin], at=list_at)
    swatches = node("list", "Swatches", kids=[item], at=list_at)
    palette = [node("panel", kids=[swatch], at=(10, 40)), swatches]
    root = node("frame", "Palette", kids=palette)
    text = render(root)
    assert text.count('button "Swatch red"') == 1, text
