"""A session card's thumbnail, kept up to date one changed box at a time.

Scaling the whole window down for every thumbnail was the largest part of the preview's CPU
(a 1000×700 window: 2.5 ms a thumbnail, measured in ``python -m bench.console``; six sessions
at two a second). A :class:`ThumbMirror` keeps the window at ``1/factor`` of its size, where
``factor`` is the whole part of the scale down: each changed box is grown to that factor's grid
and reduced on its own (a box average over ``factor``×``factor`` blocks, so an aligned box
gives exactly the blocks the whole window's reduction would), and the thumbnail is that small
picture resized to fit :data:`THUMB_SIZE`. The picture is what Pillow's own
``window.resize(size, BILINEAR, reducing_gap=1.0)`` gives, for the cost of what changed; a box
drawn again with the pixels it had (an app redrawing a widget as it was) leaves it as it was, and
the console sends no new thumbnail for it.
"""

from __future__ import annotations

import math

from PIL import Image, ImageChops

THUMB_SIZE = (320, 200)

Box = tuple[int, int, int, int]  # x, y, width, height


def fit(width: int, height: int, bound: tuple[int, int] = THUMB_SIZE) -> tuple[int, int]:
    """The thumbnail's size: the window scaled to fit ``bound``, never enlarged."""
    scale = min(bound[0] / width, bound[1] / height, 1.0)
    return max(1, round(width * scale)), max(1, round(height * scale))


class ThumbMirror:
    """A ``width``×``height`` window at thumbnail scale (see the module docstring)."""

    def __init__(self, width: int, height: int, bound: tuple[int, int] = THUMB_SIZE) -> None:
        self.width, self.height = width, height
        self.size = fit(width, height, bound)
        self.factor = max(1, int(min(width / self.size[0], height / self.size[1])))
        f = self.factor
        self.small = Image.new("RGB", (math.ceil(width / f), math.ceil(height / f)))

    def align(self, box: Box) -> Box:
        """``box`` grown to the reduction's grid (within the window): the box to grab."""
        f = self.factor
        x0, y0 = box[0] // f * f, box[1] // f * f
        x1 = min(self.width, -(-(box[0] + box[2]) // f) * f)
        y1 = min(self.height, -(-(box[1] + box[3]) // f) * f)
        return x0, y0, x1 - x0, y1 - y0

    def paste(self, patch: Image.Image, box: Box) -> bool:
        """The window's pixels in ``box`` (an aligned box) are now ``patch``; whether that
        changed the thumbnail (a window drawn again as it was changes nothing: no new one to
        encode and send)."""
        f = self.factor
        if box[0] % f or box[1] % f:
            raise ValueError(f"box {box} is not on the thumbnail's {f}-pixel grid")
        reduced = patch.reduce(f) if f > 1 else patch
        x, y = box[0] // f, box[1] // f
        before = self.small.crop((x, y, x + reduced.width, y + reduced.height))
        if ImageChops.difference(reduced, before).getbbox() is None:
            return False
        self.small.paste(reduced, (x, y))
        return True

    def image(self) -> Image.Image:
        """The thumbnail: the whole window, scaled to fit."""
        f = self.factor
        if self.small.size == self.size:
            return self.small.copy()
        whole = (0.0, 0.0, self.width / f, self.height / f)
        return self.small.resize(self.size, Image.Resampling.BILINEAR, box=whole)
