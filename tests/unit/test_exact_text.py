"""Exact text (pure logic): a read reproduces the text as the app or page has it.

Read-only texts by their value (a calculator's display), inline pieces joined as rendered,
icons by their names, long texts cut with an ID that reads them in full, a zoomed read with
what is scrolled away marked. The trees are shaped like Chromium's and GTK's; the desktop
tests (tests/desktop/test_exact_text.py) read the same classes from real apps and pages.
"""

from __future__ import annotations

import re

from deskpilot.ax.page import apart, sentence
from deskpilot.ax.render import Renderer
from deskpilot.desktop.base import Rect
from tests.unit.test_actionable import CLICK, SHOWN, node, page, static

AREA = Rect(0, 0, 1000, 800)


def lines(root: object, **kw: object) -> list[str]:
    return [ln.strip() for ln in Renderer(AREA, 10000, **kw).render(root).text.splitlines()]  # type: ignore[arg-type]


def test_a_read_only_text_that_takes_the_focus_reads_by_its_value() -> None:
    # galculator's display: role text, focusable, not editable, its text the result
    display = node(
        "text", "", text="84", actions=(), states=SHOWN | {"focusable", "focused", "multi-line"}
    )
    # gnome-calculator's second display: read-only, named by its GTK class, empty
    answer = node(
        "text",
        "GtkTextView",
        text="",
        actions=(),
        states=SHOWN | {"focusable", "read-only"},
        at=(10, 40, 100, 20),
    )
    out = lines(node("frame", "Calculator", display, answer, at=(0, 0, 1000, 800)))
    assert re.fullmatch(r'textbox = "84" \[focused readonly\] @\S+', out[0]), out
    assert re.fullmatch(r'textbox = "" \[readonly\] @\S+', out[1]), out


def test_inline_pieces_join_as_rendered() -> None:
    # <p>Enter "<b>Michel</b>" in the field, then <a>save</a>.</p>: the bold run is a text
    # run of its own, flush against the quotes
    para = node(
        "paragraph",
        "",
        static('Enter "', at=(10, 100, 44, 18)),
        static("Michel", at=(54, 100, 48, 18)),
        static('" in the field, then ', at=(102, 100, 140, 18)),
        node(
            "link",
            "save",
            static("save", at=(242, 100, 30, 18)),
            actions=("jump",),
            at=(242, 100, 30, 18),
        ),
        static(".", at=(272, 100, 4, 18)),
        at=(10, 100, 600, 18),
    )
    assert sentence(para) == 'Enter "Michel" in the field, then save.'


def test_a_gap_or_a_new_line_between_pieces_is_a_space() -> None:
    first = static("Total", at=(10, 100, 40, 18))
    spaced = static("42", at=(55, 100, 16, 18))  # a gap of a space's width
    wrapped = static("items", at=(10, 118, 40, 18))  # on the next line
    flush = static("%", at=(50, 100, 10, 18))
    assert apart(first, spaced) and apart(spaced, wrapped) and not apart(first, flush)


def test_icons_in_a_sentence_read_by_their_names() -> None:
    # an SVG icon named by aria-label, its shapes inside; an <img alt> icon
    gear = node(
        "image",
        "Settings",
        node("image", "", at=(90, 100, 10, 10)),
        actions=(),
        at=(88, 100, 16, 16),
    )
    star = node("image", "star", actions=(), at=(200, 100, 16, 16))
    para = node(
        "paragraph",
        "",
        static("Open ", at=(10, 100, 78, 18)),
        gear,
        static(" and mark it with ", at=(104, 100, 96, 18)),
        star,
        static(".", at=(216, 100, 4, 18)),
        at=(10, 100, 600, 18),
    )
    assert sentence(para) == "Open [image: Settings] and mark it with [image: star]."
    # an icon inside a clickable span's text is kept too (folded into its line)
    button = node(
        "section",
        "",
        static("Save ", at=(10, 200, 40, 18)),
        node("image", "disk", node("image", ""), actions=()),
        actions=CLICK,
        at=(10, 200, 80, 18),
    )
    out = lines(page(button))
    assert any(ln.startswith('clickable "Save disk"') for ln in out), out


def test_a_long_text_is_cut_with_an_id_that_reads_it_in_full() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    para = node(
        "paragraph", "", static(words, at=(10, 100, 900, 200)), actions=(), at=(10, 100, 900, 200)
    )
    para.children[0].name = words
    rendered = Renderer(AREA, 10000).render(page(para))
    line = next(ln for ln in rendered.text.splitlines() if "word0" in ln)
    assert "chars (read_screen_ax its elementID for all)" in line, line
    eid = line.rsplit("@", 1)[1]
    assert eid in rendered.ids
    # the zoomed read of that element: every word, no marker
    zoomed = Renderer(AREA, 1000, zoom=True).render(rendered.ids[eid]).text
    assert "word199" in zoomed and "chars" not in zoomed and len(zoomed) > 1000


def test_a_zoomed_read_shows_what_is_scrolled_away_marked() -> None:
    items = [node("list-item", f"Row {i}", at=(10, 100 + 30 * i, 200, 30)) for i in range(40)]
    area = node("list", "Results", *items, at=(10, 100, 200, 600))
    whole = lines(page(area))
    assert not any("Row 39" in ln for ln in whole)
    zoomed = lines(area, zoom=True)
    assert any(ln.startswith('listitem "Row 39" [offscreen]') for ln in zoomed), zoomed
    assert not any("Row 3 " in ln and "offscreen" in ln for ln in zoomed)


def test_a_text_cut_twice_counts_all_it_left_out() -> None:
    from deskpilot.ax.render import recut
    from deskpilot.ax.roles import cut

    text = "word " * 400  # 2000 characters
    once = cut(text, 120)
    twice = recut(once, 100)
    assert twice.startswith(text[:100]) and twice.endswith(f"… +{len(text.strip()) - 100} chars")
    assert recut("short", 100) == "short" and recut(once, 200) == once
