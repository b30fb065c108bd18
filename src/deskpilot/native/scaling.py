"""One coordinate contract: model space ↔ target pixels.

A :class:`Viewport` ties three sizes together: the *target* (screen, or one window's client
area, in device pixels), the *image* sent to the model, and the model's coordinate *space*
(the image's own pixels, :func:`pixel_viewport` — OpenAI, Anthropic; or a normalised grid,
:func:`grid_viewport` — Gemini's 1000×1000).

The mapping is exact integer arithmetic on pixel centres. A model coordinate ``v`` in a space of
``M`` units names the cell ``[v, v+1)``, whose footprint on a target of ``T`` pixels is
``[v·T/M, (v+1)·T/M)``; ``to_target`` returns the target pixel holding that footprint's centre,
``floor((2v+1)·T / 2M)``. Consequences, property-tested:

* when the image is a downscale (``T >= M``), ``to_space(to_target(v)) == v`` for every ``v``;
* when the target is smaller than the space (Gemini's grid on a small window),
  ``to_target(to_space(X)) == X`` for every pixel ``X``;
* coordinates outside the space are refused with :class:`CoordinateOutOfBounds`, never clamped.

Which image size a vendor's model gets is the vendor adapter's rule
(``computer_viewport`` in :mod:`deskpilot.agent.providers`), built from :func:`fit_within`
and the two viewports here.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from PIL import Image

from deskpilot.native.actions import InvalidAction


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
        return {
            "target": [self.target.width, self.target.height],
            "image": [self.image.width, self.image.height],
            "space": [self.space.width, self.space.height],
            "grid": self.grid,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Viewport:
        return cls(
            Size(*data["target"]),
            Size(*data["image"]),
            Size(*data["space"]),
            bool(data.get("grid", False)),
        )

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


def pixel_viewport(width: int, height: int, image: Size) -> Viewport:
    """A target of width×height seen as ``image``, whose pixels are the model's coordinates."""
    return Viewport(target=Size(width, height), image=image, space=image)


def grid_viewport(width: int, height: int, image: Size, grid: int) -> Viewport:
    """A target of width×height seen as ``image``, with coordinates on a grid×grid grid."""
    return Viewport(target=Size(width, height), image=image, space=Size(grid, grid), grid=True)
