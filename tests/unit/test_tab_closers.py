"""GTK 3 tabs' close buttons found where they are drawn (desktop/skills/tab_closers.py): which
tabs are looked at, what counts as a drawn button beside a label, and what a hover must show."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from deskpilot.ax.actionable import wrapped_target
from deskpilot.desktop.base import AppIdentity, Node, Rect, WindowInfo
from deskpilot.desktop.skills.tab_closers import (
    HINT,
    DrawnClosers,
    Strip,
    add_drawn_closers,
    button_box,
    drawn_close_key,
    strips,
    tab_of,
)

SHOWN = frozenset({"showing", "visible"})
BACKGROUND = (225, 222, 219)
INK = (46, 52, 54)


def tab(path: str, name: str, bounds: Rect, *children: Node) -> Node:
    kids = list(children)
    return Node(("bus", path), "page-tab", name, states=SHOWN, bounds=bounds, children=kids)


def notebook() -> tuple[Node, Node, Node]:
    """A GTK 3 notebook as the bus has it: two tabs with their labels' extents, the first
    holding its page (below the tabs), on a window at (0, 0)."""
    page = Node(
        key=("bus", "/page"), role="scroll-pane", states=SHOWN, bounds=Rect(0, 40, 400, 200)
    )
    first = tab("/t1", "Untitled 1", Rect(20, 5, 100, 30), page)
    second = tab("/t2", "Untitled 2", Rect(180, 5, 100, 30))
    book = Node(("bus", "/book"), "page-tab-list", states=SHOWN, bounds=Rect(0, 0, 400, 240))
    book.children = [first, second]
    return book, first, second


def screen(*glyphs: tuple[int, int]) -> Image.Image:
    """A window's pixels: the tab row's background with a 14 px cross at each (x, y)."""
    image = Image.new("RGB", (400, 240), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for x, y in glyphs:
        draw.line((x, y, x + 13, y + 13), fill=INK, width=2)
        draw.line((x + 13, y, x, y + 13), fill=INK, width=2)
    return image


def test_a_glyph_right_of_a_tabs_label_reads_as_its_drawn_close_button() -> None:
    book, first, second = notebook()
    found = add_drawn_closers(book, screen((130, 13), (290, 13)), (0, 0))
    assert found == 2
    button = first.children[0]
    assert button.role == "push-button" and button.hint == HINT and not button.name
    assert button.key == drawn_close_key(first.key) and tab_of(button.key) == first.key
    assert button.bounds is not None and button.bounds.contains(136, 19)
    assert first.children[1].key == ("bus", "/page")  # the page stays, after it
    assert second.children[0].bounds is not None and second.children[0].bounds.contains(296, 19)
    assert tab_of(first.key) is None


def test_nothing_is_read_where_nothing_button_like_is_drawn_beside_the_label() -> None:
    book, first, second = notebook()
    assert add_drawn_closers(book, screen(), (0, 0)) == 0  # no glyph
    # up against the next tab's label (its leading icon), or running into it
    assert add_drawn_closers(book, screen((158, 13)), (0, 0)) == 0
    assert add_drawn_closers(book, screen((170, 13)), (0, 0)) == 0
    assert not first.children[1:] and not second.children


def test_a_close_button_at_the_far_end_of_a_tab_is_found_too() -> None:
    # xfce4-terminal's tabs: the label at the tab's start, its close button at its end
    book, first, _second = notebook()
    assert add_drawn_closers(book, screen((150, 13)), (0, 0)) == 1
    assert first.children[0].bounds is not None and first.children[0].bounds.contains(156, 19)


def test_only_gtk3_tabs_in_a_row_are_looked_at() -> None:
    book, first, second = notebook()
    assert set(strips(book)) == {first.key, second.key}
    assert strips(book)[first.key] == Strip(Rect(20, 5, 100, 30), 180)
    assert strips(book)[second.key] == Strip(Rect(180, 5, 100, 30), 400)  # to the list's edge
    # a tab whose label is a child inside it (GTK 4, Qt: its close button is on the bus)
    label = Node(key=("bus", "/l"), role="label", states=SHOWN, bounds=Rect(305, 10, 50, 20))
    book.children.append(tab("/t3", "Other", Rect(300, 5, 60, 30), label))
    assert ("bus", "/t3") not in strips(book)
    assert strips(book)[second.key].end == 300  # its neighbour still ends the strip
    # tabs stacked on the left of the pages: not a row
    first.bounds, second.bounds = Rect(0, 0, 80, 30), Rect(0, 40, 80, 30)
    assert not strips(book)


def test_the_hover_must_draw_a_button_around_the_glyph_inside_the_gap() -> None:
    strip = Strip(Rect(20, 5, 100, 30), 180)
    glyph = Rect(130, 13, 14, 14)
    assert button_box(glyph, Rect(123, 5, 30, 30), strip) == Rect(123, 5, 30, 30)
    assert button_box(glyph, None, strip) is None  # nothing reacted
    assert button_box(glyph, Rect(10, 5, 150, 30), strip) is None  # the whole tab: not a button
    assert button_box(glyph, Rect(140, 5, 30, 30), strip) is None  # beside the glyph
    assert button_box(glyph, Rect(125, 5, 60, 30), strip) is None  # into the next tab
    assert button_box(glyph, Rect(115, 5, 30, 30), strip) is None  # over the label


def test_a_named_tab_does_not_act_through_a_nameless_button_it_holds() -> None:
    book, first, _second = notebook()
    add_drawn_closers(book, screen((130, 13)), (0, 0))
    first.children = first.children[:1]  # the page not shown (another tab is selected)
    assert wrapped_target(first) is None  # the close button is a line of its own


class FakeGrab:
    def __init__(self) -> None:
        self.digest = 1

    def checksum(self, region: tuple[int, int, int, int] | None) -> int | None:
        return self.digest


class FakePixels:
    """A window's pixels: what a capture gives, and how many captures were taken."""

    def __init__(self, image: Image.Image) -> None:
        self.grab, self.image, self.captures = FakeGrab(), image, 0

    async def capture_image(self, window: WindowInfo | None = None) -> Image.Image:
        self.captures += 1
        return self.image


@pytest.mark.asyncio
async def test_a_window_is_captured_again_only_when_its_tabs_strips_changed() -> None:
    pixels = FakePixels(screen((130, 13)))
    closers = DrawnClosers(pixels)  # type: ignore[arg-type]
    app = AppIdentity("Editor", "editor")
    window = WindowInfo(handle=7, pid=1, title="W", app=app, geometry=Rect(0, 0, 400, 240))
    for _ in range(3):
        book, first, _second = notebook()
        assert await closers.add(window, book) == 1 and first.children[0].hint == HINT
    assert pixels.captures == 1  # the strips' checksum held still
    pixels.grab.digest = 2  # something was drawn there
    pixels.image = screen()
    book, first, _second = notebook()
    assert await closers.add(window, book) == 0 and pixels.captures == 2
