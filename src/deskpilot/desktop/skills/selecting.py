"""Selecting a range of text in an element, by offsets or by the text itself, confirmed.

A person selects by dragging over the characters; this selects through the element's own
``Text`` interface (``SetSelection``, or ``AddSelection`` when it has none yet), so no point
can land on a neighbour. By the text itself, the element's own text is searched first, then
its parts' (a document's paragraphs, a page's sections); a text found more than once is
refused with where it is, never guessed. A focusable element is focused first (a toolkit may
select all of a field's text when the focus enters it, undoing a selection made before). The
selection is read back from the app: a selection the app did not take is an error.
"""

from __future__ import annotations

import asyncio
import contextlib

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.caret import Caret
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.errors import ActionFailed, InvalidArguments

#: Parts of an element searched at most for a text (a long document's paragraphs).
MAX_PARTS = 2000
#: Occurrences listed at most in the error of a text found more than once.
SHOWN_PLACES = 5
#: How long the app has to show the selection.
CONFIRM_S = 2.0
#: The character AT-SPI puts in a text where an embedded child is.
EMBEDDED = "\ufffc"


class Selecting:
    """Text selection through the accessibility port."""

    def __init__(self, ports: Ports) -> None:
        self.a11y = ports.a11y

    async def select_text(
        self,
        window: WindowInfo,
        key: ElementKey,
        *,
        text: str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> Caret:
        """Select ``text`` (found in the element or its parts) or ``start``..``end`` of the
        element's own text; the caret and selection the app shows after it."""
        if text is not None:
            key, start = await self._find(key, text)
            end = start + len(text)
        if start is None or end is None:
            raise InvalidArguments("select needs a text, or start and end offsets")
        own = await self.a11y.read_text(key)
        if own is None:
            raise ActionFailed("it has no text to select (no Text interface)")
        if not 0 <= start < end <= len(own):
            raise InvalidArguments(
                f"offsets {start}–{end} are not a range of its text, which has {len(own)} "
                f"characters: give 0 <= start < end <= {len(own)}"
            )
        await self._focus(key)
        if not await self.a11y.select_text(key, start, end):
            raise ActionFailed("the app refused to select text in it (Text.SetSelection)")
        return await self._confirmed(key, start, end)

    async def _focus(self, key: ElementKey) -> None:
        live = await self.a11y.inspect(key)
        if live is None:
            raise ActionFailed("it is not in the window any more; read it again")
        if "focusable" in live.states and "focused" not in live.states:
            await self.a11y.grab_focus(key)

            async def focused() -> bool:
                now = await self.a11y.inspect(key)
                return now is not None and "focused" in now.states

            # some fields take no focus from AT-SPI; the selection is checked anyway
            with contextlib.suppress(WaitTimeout):
                await async_wait_for(focused, timeout=1.0, what="the focus", interval=0.03)

    async def _confirmed(self, key: ElementKey, start: int, end: int) -> Caret:
        seen: dict[str, Caret | None] = {"caret": None}

        async def shown() -> bool:
            caret = seen["caret"] = await self.a11y.caret(key)
            return caret is not None and any(
                s == start and e == end for s, e, _ in caret.selections
            )

        try:
            await async_wait_for(shown, timeout=CONFIRM_S, what="the selection", interval=0.03)
        except WaitTimeout:
            caret = seen["caret"]
            now = (
                ", ".join(f"{s}–{e}" for s, e, _ in caret.selections) or "nothing"
                if caret is not None
                else "no caret"
            )
            raise ActionFailed(
                f"the app did not show the selection {start}–{end} (it shows {now} selected)"
            ) from None
        caret = seen["caret"]
        assert caret is not None
        return caret

    async def _find(self, key: ElementKey, text: str) -> tuple[ElementKey, int]:
        """Where ``text`` is: the element (or the one part of it) whose own text has it once."""
        if not text:
            raise InvalidArguments("select needs a non-empty text to find")
        places: list[tuple[ElementKey, int]] = []
        level, asked = [key], 0
        while level and asked < MAX_PARTS:
            level = level[: MAX_PARTS - asked]
            asked += len(level)
            texts = await asyncio.gather(*(self.a11y.read_text(k) for k in level))
            deeper: list[ElementKey] = []
            for node, own in zip(level, texts, strict=True):
                if own is not None:
                    at = own.find(text)
                    while at >= 0:
                        places.append((node, at))
                        at = own.find(text, at + 1)
                    if EMBEDDED not in own:
                        continue  # a text with nothing embedded: its children's are in it
                deeper.append(node)
            kids = await asyncio.gather(
                *(self.a11y.children(k) for k in deeper), return_exceptions=True
            )
            level = [k for found in kids if isinstance(found, list) for k in found]
        if not places:
            raise ActionFailed(
                f"the text {text!r} is not in it (the search is exact: case, spaces and "
                "punctuation as the read shows them; or give start and end offsets)"
            )
        if len(places) == 1:
            return places[0]
        in_element = [at for k, at in places if k == places[0][0]]
        if len(in_element) == len(places):
            shown = ", ".join(str(at) for at in in_element[:SHOWN_PLACES])
            raise ActionFailed(
                f"the text {text!r} is in it {len(places)} times (at offsets {shown}"
                f"{'…' if len(places) > SHOWN_PLACES else ''}): give start and end offsets "
                "for the one meant, or a longer text"
            )
        raise ActionFailed(
            f"the text {text!r} is in {len(places)} places in it: give a longer text, or "
            "the elementID of the part meant (read this element with its elementID to see "
            "its parts)"
        )
