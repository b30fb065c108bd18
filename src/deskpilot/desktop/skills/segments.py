"""``fill`` on segmented date and time fields: each segment typed, then every segment checked.

A browser's ``<input type=date|time|datetime-local>`` (and any date editor built the same way)
is a row of spin buttons — month, day, year, hours, minutes, AM/PM — with no editable text: a
select-all and typing lands in one segment only. ``fill`` takes the value as a person writes it
in ISO form (``2026-03-07``, ``14:05``, ``2026-03-07 14:05``), clicks each segment in turn and
types its part (two digits, four for a year, or A/P), then reads every segment's value back and
reports what the field shows when it differs — or when the field marks the whole value invalid
(February 30). A single segment filled by its own ID is checked by its value.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import ActionOutcome, LiveElement, WindowInfo
from deskpilot.desktop.ports.accessibility import Accessibility
from deskpilot.desktop.ports.bundle import Ports
from deskpilot.desktop.ports.identity import ElementKey
from deskpilot.desktop.skills.aiming import Aiming
from deskpilot.desktop.skills.focus import has_focus
from deskpilot.desktop.skills.raw_input import RawInput
from deskpilot.errors import ActionFailed, ElementCallFailed, NotAnswering

Key = ElementKey

#: The segment a spin button's name starts with (Chromium: "Month Arrival date").
SEGMENTS = ("month", "day", "year", "hours", "minutes", "seconds", "milliseconds", "am/pm")
#: Roles of segmented fields.
SEGMENTED_ROLES = frozenset({"date-editor"})
_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_TIME = re.compile(r"(?<![\d-])(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?\s*([AaPp][Mm])?")


@dataclass
class Segment:
    key: Key
    kind: str  # one of SEGMENTS
    name: str


def wanted_parts(text: str, kinds: set[str]) -> dict[str, int]:
    """The value of each segment kind the text gives ({"month": 3, "hours": 2, "am/pm": 2…});
    hours in 12-hour form (and "am/pm" 1 = AM, 2 = PM) when the field has an AM/PM segment."""
    out: dict[str, int] = {}
    if (d := _DATE.search(text)) is not None:
        out.update(year=int(d.group(1)), month=int(d.group(2)), day=int(d.group(3)))
    if (t := _TIME.search(text)) is not None:
        hour, minute = int(t.group(1)), int(t.group(2))
        if t.group(5):
            hour = hour % 12 + (12 if t.group(5).lower() == "pm" else 0)
        out.update(hours=hour, minutes=minute)
        if t.group(3) is not None:
            out["seconds"] = int(t.group(3))
        if t.group(4) is not None:
            out["milliseconds"] = int(t.group(4).ljust(3, "0"))
    if "hours" in out and "am/pm" in kinds:
        out["am/pm"] = 1 if out["hours"] < 12 else 2
        out["hours"] = out["hours"] % 12 or 12
    return out


def keys_for(kind: str, value: int) -> str:
    if kind == "am/pm":
        return "A" if value == 1 else "P"
    if kind == "year":
        return f"{value:04d}"
    if kind == "milliseconds":
        return f"{value:03d}"
    return f"{value:02d}"


async def current_value(a11y: Accessibility, key: Key) -> float | None:
    """The element's value (a segment's, a spin button's), None when it has none."""
    try:
        return await a11y.value(key)
    except (ElementCallFailed, NotAnswering):
        return None


def _shown(values: dict[str, float | None], segments: list[Segment]) -> str:
    parts = []
    for s in segments:
        v = values.get(s.kind)
        if s.kind == "am/pm":
            parts.append({1: "AM", 2: "PM"}.get(int(v)) if v is not None else "—")
        else:
            parts.append(f"{s.kind} {v:g}" if v is not None else f"{s.kind} empty")
    return ", ".join(str(p) for p in parts)


class Segments:
    """Filling segmented date/time fields, checked segment by segment."""

    def __init__(self, ports: Ports, raw: RawInput, aiming: Aiming) -> None:
        self.a11y = ports.a11y
        self.input = ports.input
        self.raw = raw
        self.aiming = aiming

    async def segments(self, key: Key, limit: int = 40) -> list[Segment]:
        """The field's spin-button segments in order, walked live (a handful of nodes)."""
        found: list[Segment] = []
        queue, seen = [key], 0
        while queue and seen < limit:
            node = queue.pop(0)
            seen += 1
            try:
                children = await self.a11y.children(node)
            except (ElementCallFailed, NotAnswering):
                continue
            for child in children[:limit]:
                try:
                    role = await self.a11y.role(child)
                    name = await self.a11y.name(child)
                except (ElementCallFailed, NotAnswering):
                    continue
                kind = next((k for k in SEGMENTS if name.casefold().startswith(k)), None)
                if role == "spin-button" and kind is not None:
                    found.append(Segment(child, kind, name))
                elif role != "push-button":
                    queue.append(child)
        return found

    async def fill_segments(
        self, window: WindowInfo, live: LiveElement, segments: list[Segment], text: str
    ) -> ActionOutcome:
        kinds = {s.kind for s in segments}
        wanted = wanted_parts(text, kinds)
        todo = [s for s in segments if s.kind in wanted]
        if not todo or any(s.kind not in wanted for s in segments if s.kind != "milliseconds"):
            fields = ", ".join(s.kind for s in segments)
            raise ActionFailed(
                f"it is a segmented field ({fields}): give the whole value in ISO form, e.g. "
                "'2026-03-07' for a date, '14:05' for a time, '2026-03-07 14:05' for both "
                "(or fill one segment by its own ID). Nothing was typed"
            )
        async with self.raw.session(window) as outcome:
            for seg in todo:
                # a click on the segment, as a person does: focusing it (GrabFocus) leaves
                # the browser's caret in the segment it had, and the keys land one late
                x, y = await self.aiming.element_point(window, seg.key)
                await self.raw.click(x, y)
                if not await has_focus(self.a11y, seg.key):
                    raise ActionFailed(
                        f"its {seg.kind} segment did not take the keyboard focus; nothing more "
                        "was typed (read it to see what it shows)"
                    )
                await self.input.type_text(keys_for(seg.kind, wanted[seg.kind]))
                await self._settled_values([seg], {seg.kind: wanted[seg.kind]}, timeout=1.0)
            values = await self._settled_values(segments, wanted)
        shown = _shown(values, segments)
        if any(values.get(k) != float(v) for k, v in wanted.items() if k in kinds):
            raise ActionFailed(
                f"typed {text!r} segment by segment but the field shows {shown}; it may not "
                "accept that value (a minimum, a maximum, a day the month lacks)"
            )
        now = await self.a11y.inspect(live.key)
        if now is not None and "invalid-entry" in now.states:
            raise ActionFailed(
                f"typed {text!r}: the segments show {shown}, but the field marks the value "
                "invalid (a day the month lacks, or out of its range)"
            )
        return outcome.done(f"typed each segment ({len(todo)}): it shows {shown}")

    async def _settled_values(
        self, segments: list[Segment], wanted: dict[str, int], timeout: float = 2.0
    ) -> dict[str, float | None]:
        last: dict[str, float | None] = {}

        async def check() -> bool:
            for s in segments:
                last[s.kind] = await current_value(self.a11y, s.key)
            return all(last.get(k) == float(v) for k, v in wanted.items() if k in last)

        with contextlib.suppress(WaitTimeout):
            await async_wait_for(check, timeout=timeout, what="the segments' values")
        return last
