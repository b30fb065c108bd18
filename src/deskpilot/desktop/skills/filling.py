"""``fill``: replace a field's content, then check what the field shows — on every kind.

* A field with editable text gets it through ``EditableText`` (no focus needed), read back.
* A spin button (a number, a time, a month name) keeps the typed text without taking it until
  it is activated; activating it also presses its dialog's default button (Enter): a number is
  therefore set as its value instead (no key, no activation) and only a text that is no
  number is activated; it is read again — a field that did not take the
  text (GTK puts back its old value) is reported with what it shows, never as filled.
* An element with no text of its own whose content is one editable text (Impress's title
  placeholder: a shape around a paragraph) is filled through that text. Typing into it instead
  meant select-all + Backspace, which in Impress selects every shape on the slide and deletes
  them all.
* A spreadsheet cell (no editable text) is filled through the table: :mod:`.cells`.
* A segmented date or time field (spin buttons for month, day, year, hours…) gets each
  segment typed and every segment checked: :mod:`.segments`.
* A drop-down (a combo box without editable text) gets the item named by the text chosen,
  and what it shows checked: :mod:`.choosing`.
* Otherwise, only a single-line field (Chromium's inputs have no EditableText) is typed over:
  focused, select-all (which in a single-line field selects its own text only), the text
  typed, and read back.
* A web page's editable area (``contenteditable``, no role: a rich-text editor's paragraphs)
  is typed over the same way, since select-all in it selects the area's content only: the
  area itself, or a part of it (a paragraph) that is all of the area's text — a part beside
  other text is refused, as typing over the area would replace that text too. What the area
  shows afterwards is read across its paragraphs and compared, whitespace aside.
  Anything else is refused with what to do instead.
"""

from __future__ import annotations

import contextlib

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, LiveElement, WindowInfo
from deskpilot.desktop.ports.accessibility import shows
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.aiming import Aiming
from deskpilot.desktop.skills.cells import Cells
from deskpilot.desktop.skills.choosing import Choosing
from deskpilot.desktop.skills.focus import has_focus, take_focus
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.desktop.skills.segments import Segments, current_value
from deskpilot.desktop.skills.settle import until
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

#: Roles whose select-all selects only their own text: safe to type over.
SINGLE_LINE = frozenset({"entry", "password-text", "spin-button", "combo-box", "terminal"})
#: Roles that take typed text only once activated (Enter).
COMMIT_ON_ACTIVATE = frozenset({"spin-button"})


def _bare(text: str) -> str:
    """Text without its whitespace: an editable area's paragraphs, however they are joined."""
    return "".join(text.split())


def _same(shown: str | None, text: str) -> bool:
    """Whether a field shows the text, or the same number ("7" and "7.00")."""
    if shown is None:
        return False
    if shown.strip() == text.strip():
        return True
    try:
        return float(shown.replace(",", "")) == float(text.replace(",", ""))
    except ValueError:
        return False


def _number(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None


class Filling:
    """Filling fields, checked."""

    def __init__(
        self,
        ports: Ports,
        raw: RawInput,
        aiming: Aiming,
        cells: Cells,
        choosing: Choosing,
        segments: Segments,
    ) -> None:
        self.a11y = ports.a11y
        self.input = ports.input
        self.raw = raw
        self.aiming = aiming
        self.cells = cells
        self.choosing = choosing
        self.segments = segments

    async def fill_element(self, window: WindowInfo, key: ElementKey, text: str) -> ActionOutcome:
        live = await self.a11y.inspect(key, window.pid)
        if live is None:
            raise ActionFailed("the field is gone; read the window again")
        editable = "EditableText" in await self.a11y.interfaces(key)
        if live.role == "table-cell" and not editable:
            return await self.cells.fill_cell(window, live, text)  # a spreadsheet's cell
        masked = live.role == "password-text"
        if editable:
            # what a spin button showed before: numbers, or names it formats its value as
            shown = await self.a11y.read_text(key) if live.role in COMMIT_ON_ACTIVATE else None
            how = await self.a11y.set_text(key, text, masked=masked)
            if how is not None:
                return await self._committed(
                    live, text, how, numeric=_number(shown or "") is not None
                )
        else:
            parts = await self.a11y.editable_parts(key)
            if len(parts) == 1:
                how = await self.a11y.set_text(parts[0], text)
                if how is not None:
                    return ActionOutcome("atspi", f"its text ({how})")
            elif len(parts) > 1:
                raise ActionFailed(
                    f"it holds {len(parts)} pieces of editable text: fill one of them (read it "
                    "with read_screen_ax and its elementID), or click into it and use type"
                )
            elif live.role == "combo-box" and "editable" not in live.states:
                # a drop-down: choose its item
                return await self.choosing.choose_item(window, live, text)
            elif segments := await self.segments.segments(key):  # a date or time field's parts
                return await self.segments.fill_segments(window, live, segments, text)
        if live.role not in SINGLE_LINE and not (live.role == "text" and editable):
            area = await self._web_area(live)
            if area is not None:
                return await self._type_over_area(window, live, area, text)
            raise ActionFailed(
                f"it has no text of its own to replace ({live.role}); typing over it would "
                "need select-all, which here would select more than the field. Click where "
                "the text goes and use type"
            )
        return await self._type_over(window, key, text, masked=masked)

    async def _committed(
        self, live: LiveElement, text: str, how: str, *, numeric: bool = True
    ) -> ActionOutcome:
        """For a field that takes its text on activation (a spin button): activate it, then
        check it kept the text. ``numeric``: the field showed a number before (it did not
        format its value as a name or a time)."""
        if live.role not in COMMIT_ON_ACTIVATE:
            return ActionOutcome("atspi", how)
        # a number is set as the field's value: activating the field (Enter) would also
        # press its dialog's default button (the dialog closed under a fill). Not where the
        # field shows its value as something else ('January'): value 7 would be 'July', a
        # guess at what '7' means; the field itself judges the text on activation
        number = _number(text) if numeric else None
        valued = number is not None and "Value" in await self.a11y.interfaces(live.key)
        if number is not None and valued:
            try:
                await self.a11y.set_value(live.key, number)
            except (ElementCallFailed, NotAnswering):
                valued = False
        if not valued:  # a time, a month name: only activation makes the field take it
            await self.a11y.activate(live.key)
        shown = await self._settled_text(live.key, text)
        value = await current_value(self.a11y, live.key)
        if not _same(shown, text):
            its = f" (its value: {value:g})" if value is not None else ""
            raise ActionFailed(
                f"the field did not take {text!r}: it shows {shown!r}{its}. It may want "
                "another format (read it, or its neighbours' values)"
            )
        then = "its value set" if valued else "activated"
        return ActionOutcome("atspi", f"{how}, then {then}: it shows {shown!r}")

    async def _settled_text(self, key: ElementKey, text: str, timeout: float = 1.5) -> str:
        last = {"text": ""}

        async def check() -> bool:
            last["text"] = await self.a11y.read_text(key) or ""
            return _same(last["text"], text)

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(check, timeout=timeout, what="the field's text")
        return last["text"]

    async def _type_over(
        self,
        window: WindowInfo,
        key: ElementKey,
        text: str,
        *,
        masked: bool = False,
        point: ElementKey | None = None,
    ) -> ActionOutcome:
        """Focus the field (else click it, at ``point``'s element if given), select its text,
        type, and check it shows the text."""
        async with self.raw.session(window) as outcome:
            if not await take_focus(self.a11y, key):
                x, y = await self.aiming.element_point(window, point or key)
                await self.raw.click(x, y)
                if not await has_focus(self.a11y, key):
                    raise ActionFailed("the field did not take the keyboard focus")
            before = "(hidden)" if masked else await self._plain_text(key)
            await self.input.press_combo(["Control_L", "a"])
            await self.input.press_combo(["BackSpace"])
            await self.input.type_text(text)
            # key events are queued; the app may still be applying them: wait until the field
            # shows the text, so that the next action (focusing another field) cannot steal
            # keystrokes meant for this one
            if not await self._shows(key, text, masked):
                shown = "(hidden)" if masked else await self._plain_text(key)
                raise ActionFailed(
                    f"typed {len(text)} characters over {before!r} but the field shows "
                    f"{shown!r}; re-read it"
                )
        replaced = f", replacing {before!r}" if before else ""
        return outcome.done(f"focused the field, selected its text and typed{replaced}")

    async def _plain_text(self, key: ElementKey) -> str | None:
        """The field's text; a web textbox holding paragraphs (its text is one U+FFFC per
        paragraph) read across them."""
        text = await self.a11y.read_text(key)
        if text is not None and "\ufffc" in text:
            return await self.a11y.deep_text(key)
        return text

    async def _web_area(self, live: LiveElement, depth: int = 40) -> LiveElement | None:
        """The editable area (the outermost editable ancestor, or the element) an editable
        element of a web page belongs to; None outside web pages (in a desktop document
        select-all selects the whole document)."""
        if "editable" not in live.states:
            return None
        area, node, inside = live, live, True
        for _ in range(depth):
            if node.parent_key is None:
                return None
            parent = await self.a11y.inspect(node.parent_key, live.pid)
            if parent is None:
                return None
            if parent.role == "document-web":
                return area
            if inside and "editable" in parent.states:
                area = parent
            else:
                inside = False  # the area ends here; what lies above only says where it is
            node = parent
        return None

    async def _type_over_area(
        self, window: WindowInfo, live: LiveElement, area: LiveElement, text: str
    ) -> ActionOutcome:
        if area.key != live.key:
            before = (await self.a11y.deep_text(area.key) or "").strip()
            part = (await self.a11y.deep_text(live.key) or "").strip()
            if _bare(part) != _bare(before):
                raise ActionFailed(
                    f"it is one part of an editable area that holds more ({before[:120]!r}): "
                    "select-all there would replace all of it. Fill the area itself (its "
                    "parent in the read) to replace everything, or click where the text goes "
                    "and use type"
                )
        return await self._type_over(window, area.key, text, point=live.key)

    async def _shows(
        self, key: ElementKey, text: str, masked: bool = False, timeout: float = 3.0
    ) -> bool:
        async def check() -> bool:
            shown = await self.a11y.read_text(key)
            if shown is not None and "\ufffc" in shown:  # a web textbox holding paragraphs
                deep = await self.a11y.deep_text(key)
                return deep is not None and _bare(deep) == _bare(text)
            if shows(shown, text, masked):
                return True
            value = await current_value(self.a11y, key)  # a date's segment: a value, no text
            return value is not None and _same(f"{value:g}", text)

        return await until(self.a11y, check, timeout)  # checked again at each event
