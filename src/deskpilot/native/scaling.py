"""One coordinate contract: model space ↔ target pixels, and the screenshot size each vendor gets.

A :class:`Viewport` ties three sizes together: the *target* (screen, or one window's client
area, in device pixels), the *image* sent to the model, and the model's coordinate *space*
(the image size for OpenAI and Anthropic; a 1000×1000 grid for Gemini).

The mapping is exact integer arithmetic on pixel centres. A model coordinate ``v`` in a space of
``M`` units names the cell ``[v, v+1)``, whose footprint on a target of ``T`` pixels is
``[v·T/M, (v+1)·T/M)``; ``to_target`` returns the target pixel holding that footprint's centre,
``floor((2v+1)·T / 2M)``. Consequences, property-tested:

* when the image is a downscale (``T >= M``), ``to_space(to_target(v)) == v`` for every ``v``;
* when the target is smaller than the space (Gemini's grid on a small window),
  ``to_target(to_space(X)) == X`` for every pixel ``X``;
* coordinates outside the space are refused with :class:`CoordinateOutOfBounds`, never clamped.

Image sizes (:func:`viewport_for`):

* Anthropic: the quickstart's ``scale_coordinates`` rule — XGA 1024×768, WXGA 1280×800 or
  FWXGA 1366×768 when the screen's aspect ratio is within 0.02 of the target's and the screen is
  wider; otherwise unscaled, but (deskpilot's addition) never above the API's silent-downsample
  limits (long edge 1568 px, 1.15 MP), which would make clicks miss.
* OpenAI: the screen as it is, scaled down only to fit 1920×1200 (deskpilot's choice: typical
  screens pass through unresampled; bigger ones stay within the image limits). The preview tool
  declares this size as ``display_width``/``display_height``.
* Gemini: coordinates on the 0–999 grid; the image fits the reference 1440×900.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from PIL import Image

from deskpilot.native.actions import InvalidAction

Vendor = Literal["anthropic", "openai", "gemini"]

#: The quickstart's targets, in its order (the first aspect match wins).
ANTHROPIC_TARGETS = ((1024, 768), (1280, 800), (1366, 768))
ANTHROPIC_MAX_LONG_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000
OPENAI_MAX = (1920, 1200)
GEMINI_GRID = 1000
GEMINI_MAX = (1440, 900)


class CoordinateOutOfBounds(InvalidAction):
    """A model coordinate outside the screenshot (or grid) it refers to."""


@dataclass(frozen=True)
class Size:
    width: int
    height: int

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"size {self.width}x{self.height} is empty")

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


def _to_target(v: int, space: int, target: int) -> int:
    return ((2 * v + 1) * target) // (2 * space)


def _edge_to_target(v: int, space: int, target: int) -> int:
    return (v * target) // space


@dataclass(frozen=True)
class Viewport:
    """What the model sees of a target, and where its coordinates land."""

    target: Size
    image: Size
    space: Size
    grid: bool = False  # the space is a normalised grid (Gemini), not the image's pixels

    def _check(self, x: int, y: int, *, inclusive: bool = False) -> None:
        w, h = self.space.width, self.space.height
        hi_x, hi_y = (w, h) if inclusive else (w - 1, h - 1)
        if (
            not (isinstance(x, int) and isinstance(y, int))
            or isinstance(x, bool)
            or isinstance(y, bool)
        ):
            raise CoordinateOutOfBounds(f"coordinates must be integers (got {x!r}, {y!r})")
        if not (0 <= x <= hi_x and 0 <= y <= hi_y):
            what = "grid" if self.grid else "screenshot"
            raise CoordinateOutOfBounds(
                f"coordinate ({x}, {y}) is outside the {what}: x must be 0 to {hi_x} and "
                f"y 0 to {hi_y} ({what} size {self.space})"
            )

    def to_target(self, x: int, y: int) -> tuple[int, int]:
        """A model coordinate → the target pixel under the centre of its footprint."""
        self._check(x, y)
        return (
            _to_target(x, self.space.width, self.target.width),
            _to_target(y, self.space.height, self.target.height),
        )

    def to_space(self, x: int, y: int) -> tuple[int, int]:
        """A target pixel → the model coordinate whose footprint holds its centre."""
        if not (0 <= x < self.target.width and 0 <= y < self.target.height):
            raise CoordinateOutOfBounds(f"pixel ({x}, {y}) is outside the target {self.target}")
        return (
            _to_target(x, self.target.width, self.space.width),
            _to_target(y, self.target.height, self.space.height),
        )

    def region_to_target(self, x0: int, y0: int, x1: int, y1: int) -> tuple[int, int, int, int]:
        """A region's edges (``x1``/``y1`` exclusive, up to the space size) → target edges."""
        self._check(x0, y0)
        self._check(x1, y1, inclusive=True)
        if x1 <= x0 or y1 <= y0:
            raise InvalidAction(f"the region [{x0}, {y0}, {x1}, {y1}] is empty")
        sw, sh, tw, th = self.space.width, self.space.height, self.target.width, self.target.height
        return (
            _edge_to_target(x0, sw, tw),
            _edge_to_target(y0, sh, th),
            max(_edge_to_target(x1, sw, tw), _edge_to_target(x0, sw, tw) + 1),
            max(_edge_to_target(y1, sh, th), _edge_to_target(y0, sh, th) + 1),
        )

    def length_to_target(self, length: int, axis: Literal["x", "y"]) -> int:
        """A distance in model units (scroll deltas) → target pixels, sign kept."""
        space = self.space.width if axis == "x" else self.space.height
        target = self.target.width if axis == "x" else self.target.height
        scaled = (2 * abs(length) * target + space) // (2 * space)  # rounded half up
        return scaled if length >= 0 else -scaled

    def to_dict(self) -> dict[str, Any]:
        return {"target": [self.target.width, self.target.height],
                "image": [self.image.width, self.image.height],
                "space": [self.space.width, self.space.height], "grid": self.grid}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Viewport:
        return cls(Size(*data["target"]), Size(*data["image"]), Size(*data["space"]),
                   bool(data.get("grid", False)))  # fmt: skip

    def with_target(self, width: int, height: int) -> Viewport:
        """The same image and space over a target of another size (a resized window)."""
        return replace(self, target=Size(width, height))

    def encode(self, png: bytes) -> bytes:
        """A capture of the target, resized to the image size the model is sent (PNG)."""
        with Image.open(io.BytesIO(png)) as img:
            if img.size == (self.image.width, self.image.height):
                return png
            small = img.convert("RGB").resize(
                (self.image.width, self.image.height), Image.Resampling.LANCZOS
            )
        buf = io.BytesIO()
        small.save(buf, format="PNG", compress_level=1)
        return buf.getvalue()


def fit_within(width: int, height: int, max_w: int, max_h: int) -> Size:
    """Scale (width, height) down, keeping the aspect ratio, to fit max_w×max_h; never up."""
    factor = min(1.0, max_w / width, max_h / height)
    return Size(max(1, round(width * factor)), max(1, round(height * factor)))


def anthropic_image_size(width: int, height: int) -> Size:
    """The quickstart's scale target for a screen (see the module docstring)."""
    ratio = width / height
    for tw, th in ANTHROPIC_TARGETS:
        if abs(tw / th - ratio) < 0.02:
            if tw < width:
                return Size(tw, th)
            break
    factor = min(
        1.0,
        ANTHROPIC_MAX_LONG_EDGE / max(width, height),
        math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)),
    )
    return Size(max(1, math.floor(width * factor)), max(1, math.floor(height * factor)))


def image_size(vendor: Vendor, width: int, height: int) -> Size:
    if vendor == "anthropic":
        return anthropic_image_size(width, height)
    if vendor == "openai":
        return fit_within(width, height, *OPENAI_MAX)
    return fit_within(width, height, *GEMINI_MAX)


def viewport_for(vendor: Vendor, width: int, height: int) -> Viewport:
    """The viewport a vendor's model gets for a target of width×height pixels."""
    target = Size(width, height)
    image = image_size(vendor, width, height)
    space = Size(GEMINI_GRID, GEMINI_GRID) if vendor == "gemini" else image
    return Viewport(target=target, image=image, space=space, grid=vendor == "gemini")
