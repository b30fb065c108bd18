"""The coordinate contract: exact integer round-trips, vendor image sizes, bounds errors."""

from __future__ import annotations

import io

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from PIL import Image

from deskpilot.agent.providers.anthropic import image_size as anthropic_image_size
from deskpilot.native.scaling import CoordinateOutOfBounds, Size, Viewport
from tests.wires import VENDORS, viewport_for

dims = st.integers(min_value=64, max_value=4096)
vendors = st.sampled_from(VENDORS)


@st.composite
def viewports(draw: st.DrawFn) -> Viewport:
    return viewport_for(draw(vendors), draw(dims), draw(dims))


@given(viewports(), st.data())
def test_to_target_lands_in_the_pixel_under_the_footprint_centre(
    vp: Viewport, data: st.DataObject
) -> None:
    x = data.draw(st.integers(0, vp.space.width - 1))
    y = data.draw(st.integers(0, vp.space.height - 1))
    tx, ty = vp.to_target(x, y)
    # the centre of the model cell's footprint, (v + 1/2)·T/M, lies in target pixel [t, t+1)
    for v, t, space, target in (
        (x, tx, vp.space.width, vp.target.width),
        (y, ty, vp.space.height, vp.target.height),
    ):
        assert 2 * space * t <= (2 * v + 1) * target < 2 * space * (t + 1)
        assert 0 <= t < target


@given(viewports(), st.data())
def test_a_downscaled_space_round_trips_exactly(vp: Viewport, data: st.DataObject) -> None:
    assume(vp.target.width >= vp.space.width and vp.target.height >= vp.space.height)
    x = data.draw(st.integers(0, vp.space.width - 1))
    y = data.draw(st.integers(0, vp.space.height - 1))
    assert vp.to_space(*vp.to_target(x, y)) == (x, y)


@given(st.integers(16, 999), st.integers(16, 999), st.data())
def test_a_small_target_under_the_gemini_grid_round_trips_exactly(
    w: int, h: int, data: st.DataObject
) -> None:
    vp = viewport_for("gemini", w, h)
    x, y = data.draw(st.integers(0, w - 1)), data.draw(st.integers(0, h - 1))
    assert vp.to_target(*vp.to_space(x, y)) == (x, y)


@given(viewports(), st.integers(-5, 5), st.integers(-5, 5))
def test_outside_the_space_is_an_error_never_clamped(vp: Viewport, ox: int, oy: int) -> None:
    x = -1 if ox < 0 else vp.space.width + ox
    y = -1 if oy < 0 else vp.space.height + oy
    with pytest.raises(CoordinateOutOfBounds, match="outside the"):
        vp.to_target(x, vp.space.height // 2)
    with pytest.raises(CoordinateOutOfBounds):
        vp.to_target(vp.space.width // 2, y)


def test_the_last_pixel_is_inside_and_the_edge_is_not() -> None:
    vp = viewport_for("anthropic", 1920, 1080)
    assert vp.image == Size(1366, 768)
    assert vp.to_target(1365, 767) == (1919, 1079)
    with pytest.raises(CoordinateOutOfBounds, match="x must be 0 to 1365"):
        vp.to_target(1366, 0)


@pytest.mark.parametrize(
    ("screen", "expected"),
    [
        ((1024, 768), (1024, 768)),  # already XGA: not scaled (target must be smaller)
        ((1280, 800), (1280, 800)),
        ((1600, 1200), (1024, 768)),  # 4:3 → XGA
        ((2560, 1600), (1280, 800)),  # 16:10 → WXGA
        ((1920, 1080), (1366, 768)),  # ~16:9 → FWXGA
        ((3840, 2160), (1366, 768)),
        ((800, 600), (800, 600)),  # smaller: unscaled
        ((3440, 1440), (1568, 656)),  # no aspect match: capped at the API's limits
    ],
)
def test_anthropic_sizes_follow_the_quickstart(
    screen: tuple[int, int], expected: tuple[int, int]
) -> None:
    assert anthropic_image_size(*screen) == Size(*expected)


def test_openai_keeps_typical_screens_and_fits_big_ones() -> None:
    assert viewport_for("openai", 1920, 1080).image == Size(1920, 1080)
    assert viewport_for("openai", 3840, 2160).image == Size(1920, 1080)
    assert viewport_for("openai", 800, 600).image == Size(800, 600)


def test_gemini_uses_the_grid_for_coordinates() -> None:
    vp = viewport_for("gemini", 1920, 1080)
    assert vp.space == Size(1000, 1000) and vp.grid
    assert vp.image == Size(1440, 810)
    assert vp.to_target(0, 0) == (0, 0)
    assert vp.to_target(999, 999) == (1919, 1079)
    assert vp.to_target(500, 500) == (960, 540)
    with pytest.raises(CoordinateOutOfBounds, match="outside the grid"):
        vp.to_target(1000, 5)


def test_regions_and_lengths_scale_to_the_target() -> None:
    vp = viewport_for("anthropic", 2560, 1600)  # factor 2
    assert vp.region_to_target(10, 20, 110, 70) == (20, 40, 220, 140)
    assert vp.region_to_target(0, 0, 1280, 800) == (0, 0, 2560, 1600)
    with pytest.raises(CoordinateOutOfBounds):
        vp.region_to_target(0, 0, 1281, 10)
    assert vp.length_to_target(-150, "y") == -300
    assert vp.length_to_target(0, "x") == 0


def test_encode_resizes_a_capture_to_the_image_size() -> None:
    vp = viewport_for("anthropic", 1600, 1200)
    buf = io.BytesIO()
    Image.new("RGB", (1600, 1200), "red").save(buf, format="PNG")
    small = Image.open(io.BytesIO(vp.encode(buf.getvalue())))
    assert small.size == (1024, 768)
    same = viewport_for("anthropic", 1024, 768)
    raw = io.BytesIO()
    Image.new("RGB", (1024, 768), "red").save(raw, format="PNG")
    assert same.encode(raw.getvalue()) == raw.getvalue()
