"""Clicks on the drawn close buttons of GTK 3 tabs (:mod:`.tab_closers`): the glyph found again,
hovered, the button the toolkit draws around it checked to lie in the tab's own gap, then
clicked at its centre; the result says whether the tab is gone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, Rect, WindowInfo
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.pixels import Pixels
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.desktop.skills.reading import Reading
from deskpilot.desktop.skills.tab_closers import (
    BAND_PX,
    GONE_S,
    PRELIGHT_S,
    Strip,
    button_box,
    changed_box,
    find,
    strips,
    tab_of,
)
from deskpilot.errors import ActionFailed

if TYPE_CHECKING:
    from PIL import Image


class TabClosers:
    """Clicks on the drawn close buttons of GTK 3 tabs, after a hover shows a button there."""

    def __init__(self, reading: Reading, pixels: Pixels, raw: RawInput) -> None:
        self.reading, self.pixels, self.raw = reading, pixels, raw

    async def click(self, window: WindowInfo, key: ElementKey) -> ActionOutcome:
        tab_key = tab_of(key)
        assert tab_key is not None
        snap = await self.reading.snapshot(window)
        found = find(snap.root, key) if snap.root is not None else None
        strip = strips(snap.root).get(tab_key) if snap.root is not None else None
        if found is None or found.bounds is None or strip is None:
            raise ActionFailed(
                "the tab's close button is no longer drawn beside its name: read the window again"
            )
        drawn = found.bounds
        origin = (window.geometry.x, window.geometry.y)
        async with self.raw.session(window) as outcome:
            # the pointer rests on the tab's label first (a button already hovered would not
            # change), the pixels are taken once they hold still, then it moves onto the glyph
            await self.raw.input.move(*strip.label.center)
            before = await self._still(window)
            x, y = drawn.center
            await self.raw.input.move(x, y)
            box = await self._prelight(window, before, origin, drawn, strip)
            if box is None:
                raise ActionFailed(
                    f"nothing drawn beside the tab's name reacted as a button when the pointer "
                    f"rested on it at ({x}, {y}): not clicked"
                )
            cx, cy = box.center
            await self.raw.click(cx, cy)

        async def gone() -> bool:
            live = await self.reading.inspect(tab_key)
            return live is None or "defunct" in live.states

        try:
            await async_wait_for(gone, timeout=GONE_S, what="the tab to close")
        except WaitTimeout:
            return outcome.done(
                f"pointer click at ({cx}, {cy}) on the button the hover drew ({box.width}x"
                f"{box.height}) beside the tab's name; the tab is still there"
            )
        return outcome.done(
            f"pointer click at ({cx}, {cy}) on the button the hover drew beside the tab's name;"
            " the tab is gone"
        )

    async def _still(self, window: WindowInfo) -> Image.Image:
        """The window's pixels once two captures in a row agree (a fading hover is done)."""
        last = await self.pixels.capture_image(window)

        async def settled() -> Image.Image | None:
            nonlocal last
            now = await self.pixels.capture_image(window)
            same = changed_box(last, now) is None
            last = now
            return now if same else None

        try:
            return await async_wait_for(settled, timeout=PRELIGHT_S, what="still pixels")
        except WaitTimeout:
            return last

    async def _prelight(
        self,
        window: WindowInfo,
        before: Image.Image,
        origin: tuple[int, int],
        drawn: Rect,
        strip: Strip,
    ) -> Rect | None:
        """The button box the toolkit drew under the pointer, once it did."""
        lab = strip.label
        # the label's band only: a tooltip the hover brings (below the pointer, after ~0.5 s)
        # is not the button
        area = (
            lab.x + lab.width - origin[0],
            lab.y - BAND_PX - origin[1],
            strip.end - origin[0],
            lab.y + lab.height + BAND_PX - origin[1],
        )

        async def drawn_button() -> Rect | None:
            after = await self.pixels.capture_image(window)
            got = changed_box(before.crop(area), after.crop(area))
            if got is None:
                return None
            x0, y0 = area[0] + got[0] + origin[0], area[1] + got[1] + origin[1]
            changed = Rect(x0, y0, got[2] - got[0], got[3] - got[1])
            return button_box(drawn, changed, strip)

        try:
            return await async_wait_for(
                drawn_button, timeout=PRELIGHT_S, what="a hover", interval=0.01
            )
        except WaitTimeout:
            return None
