"""Whether a picture shows its content moved (desktop/skills/shift.py): rows found again at
one offset are a scroll; a change in place (a clock) is none; blank rows prove nothing."""

from __future__ import annotations

from PIL import Image, ImageDraw

from deskpilot.desktop.skills.shift import content_offset


def page(offset: int, *, clock: str = "", size: tuple[int, int] = (600, 400)) -> Image.Image:
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    for i in range(60):
        draw.text(
            (10 + (i % 7) * 3, 20 * i - offset), f"Line {i}: the quick brown fox", fill="black"
        )
    if clock:
        draw.rectangle((480, 4, 590, 20), fill="white")
        draw.text((480, 4), clock, fill="black")
    return img


def test_a_scrolled_picture_moved_by_its_offset() -> None:
    assert content_offset(page(0), page(120)) == -120
    assert content_offset(page(120), page(40)) == 80


def test_a_change_in_place_is_no_move() -> None:
    assert content_offset(page(0, clock="12:00:01"), page(0, clock="12:00:02")) == 0
    assert content_offset(page(40), page(40)) == 0


def test_blank_or_mismatched_pictures_prove_nothing() -> None:
    blank = Image.new("RGB", (600, 400), "white")
    assert content_offset(blank, blank) == 0
    assert content_offset(page(0), page(0, size=(600, 300))) == 0


def test_a_sideways_scroll_moves_columns() -> None:
    wide = page(0, size=(600, 400))
    moved = wide.transform(
        wide.size, Image.Transform.AFFINE, (1, 0, 30, 0, 1, 0), fillcolor="white"
    )
    assert content_offset(wide, moved, vertical=False) == -30
    assert content_offset(wide, moved, vertical=True) == 0
