"""The ``select`` step of perform / perform_sequence: select a range of an element's text.

By the text itself (``text``) or by offsets in the element's own text (``start``, ``end``);
done by :meth:`~deskpilot.desktop.base.Desktop.select_text`, which reads the selection back
from the app. The result says what is selected, where, and where the caret is.
"""

from __future__ import annotations

from deskpilot.desktop.base import WindowInfo
from deskpilot.errors import ActionFailed
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import held_id, verify
from deskpilot.tools.steps import Step
from deskpilot.tools.wording import shown

#: Characters of a selection quoted in the result at most.
QUOTED = 120


async def select_step(ctx: ToolContext, window: WindowInfo, step: Step) -> str:
    """Select the step's text (or offsets) in its element; one line saying what is selected."""
    if step.elementID:
        eid, live = await verify(ctx, window, step.elementID)
        key, where = live.key, f"{shown(ctx, eid, live)} @{eid}"
        prefix = f"@{eid}: "
    else:  # by the text alone: anywhere in the window
        snap = await ctx.desktop.snapshot(window)
        if snap.root is None:
            raise ActionFailed("the window has no accessibility tree to find the text in")
        key, where, prefix = snap.root.key, "the window", "in the window: "
    try:
        caret = await ctx.desktop.select_text(
            window, key, text=step.text, start=step.start, end=step.end
        )
    except ActionFailed as exc:
        raise ActionFailed(f"{prefix}{exc}. Nothing was selected") from None
    start, end, text = next(
        (s, e, t) for s, e, t in caret.selections if step.text is None or e - s == len(step.text)
    )
    quoted = text if len(text) <= QUOTED else text[:QUOTED] + "…"
    if caret.key != key:  # found in one of its parts (a paragraph of a document)
        part = held_id(ctx, window, caret.key)
        where = f"@{part} in {where}" if part else f"a part of {where}"
    return (
        f"Selected {quoted!r} ({end - start} characters, offsets {start}–{end} of "
        f"{caret.length}) in {where}; the app shows it selected, the caret at offset "
        f"{caret.offset}."
    )
