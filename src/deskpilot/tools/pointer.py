"""Pointer steps of perform: double_click, right_click, hover, drag, and click at a point.

A pointer step aims at an element (the centre of its visible part) or at a point given in the
pixels of the window's ``computer_use_screenshot`` (the window's client area, 0, 0 at its
top-left corner). Input is XTest on the target window, activated for it and re-activated
afterwards, like ``type``.

Policy for points is the door's (:mod:`deskpilot.tools.gate`): ``perform`` declares every
point a step presses or moves over (:func:`step_points`); one in a blocked app's window is
refused, and a press on an element whose effect is consequential asks first.
:func:`element_under` — the element under a screen point, looking through the labels and icons
inside a button — is what such checks use.
"""

from __future__ import annotations

from deskpilot.desktop.base import WRAPPER_ROLES, LiveElement, WindowInfo
from deskpilot.errors import ActionFailed, InvalidArguments
from deskpilot.tools.answering import before_sending
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import verify
from deskpilot.tools.steps import Step
from deskpilot.tools.wording import describe, how, shown

#: Pointer actions that press what is under them (checked by the consequential rules).
PRESSES = frozenset({"click", "double_click"})

_DONE = {
    "click": "Clicked",
    "double_click": "Double-clicked",
    "right_click": "Right-clicked",
    "hover": "Moved the pointer over",
}


def screen_point(window: WindowInfo, x: int, y: int) -> tuple[int, int]:
    """A point in the window's screenshot pixels → screen coordinates (checked to be inside)."""
    g = window.geometry
    if not (0 <= x < g.width and 0 <= y < g.height):
        raise InvalidArguments(
            f"the point ({x}, {y}) is outside window {window.stable_id}, whose "
            f"computer_use_screenshot is {g.width}x{g.height} pixels; take a new screenshot"
        )
    return g.x + x, g.y + y


async def element_under(
    ctx: ToolContext, x: int, y: int, window: WindowInfo | None = None
) -> list[LiveElement]:
    """The element at screen point (x, y) — of ``window`` when given, else of the window on
    top there — and, when it is a label or icon inside a control, its ancestors up to that
    control (at most three elements, innermost first)."""
    element = await ctx.desktop.element_at(x, y, window)
    chain: list[LiveElement] = []
    while element is not None and len(chain) < 3:
        chain.append(element)
        if element.role not in WRAPPER_ROLES or element.parent_key is None:
            break
        element = await ctx.desktop.inspect(element.parent_key)
    return chain


def step_points(window: WindowInfo, step: Step) -> list[tuple[int, int, bool]]:
    """The screen points of one step and whether each presses (a drag's drop point does)."""
    found = []
    if step.point is not None:
        found.append((*screen_point(window, *step.point), step.action in PRESSES))
    if step.to_point is not None:
        found.append((*screen_point(window, *step.to_point), True))
    return found


async def refuse_covered(
    ctx: ToolContext,
    window: WindowInfo,
    eid: str,
    live: LiveElement,
    force: bool,
    *,
    typing: bool = False,
) -> None:
    """Refuse to act on an element something covers where a person would click it (for a
    field filled or typed into, ``typing``: a person could not click into it either)."""
    if force:
        return
    cover = await ctx.desktop.covering(window, live.key)
    if cover is not None:
        nothing = " Nothing was typed." if typing else ""
        raise ActionFailed(
            f"@{eid} ({shown(ctx, eid, live)}) is covered by {cover} where a person would "
            "click it: close or answer what covers it first (read the window), or pass "
            f'"force": true to act on it anyway.{nothing}'
        )


async def _start(ctx: ToolContext, window: WindowInfo, step: Step) -> tuple[int, int, str]:
    """Where a pointer step acts: (x, y) on screen and what is there, for the result."""
    if step.point is not None:
        x, y = screen_point(window, *step.point)
        # what the click will press: the window's own element there (it is raised for the
        # click, :meth:`~deskpilot.desktop.skills.pointer.Pointer.on_top`), not that of a
        # window over it now — another session's, whose app may leave meanwhile (its
        # dialog closed by its own click): that is no failure of this window
        async with before_sending(window):
            under = await element_under(ctx, x, y, window)
        what = f" (on {describe(under[-1])})" if under else ""
        return x, y, f"at ({step.point[0]}, {step.point[1]}){what}"
    eid, live = await verify(ctx, window, step.elementID or "")
    await refuse_covered(ctx, window, eid, live, step.force)
    x, y = await ctx.desktop.element_point(window, live.key)
    return x, y, f"{shown(ctx, eid, live)} @{eid}"


async def _drop(
    ctx: ToolContext, window: WindowInfo, step: Step, start: tuple[int, int]
) -> tuple[tuple[int, int], str]:
    """Where a drag ends, and how to say it."""
    if step.toElementID is not None:
        eid, live = await verify(ctx, window, step.toElementID)
        return await ctx.desktop.element_point(window, live.key), f"{shown(ctx, eid, live)} @{eid}"
    if step.to_point is not None:
        return screen_point(window, *step.to_point), f"({step.to_point[0]}, {step.to_point[1]})"
    dx, dy = step.dx or 0, step.dy or 0
    end = (start[0] + dx, start[1] + dy)
    if not window.geometry.contains(*end):
        raise ActionFailed(
            f"dragging by ({dx}, {dy}) pixels would end outside window {window.stable_id}; "
            "use a shorter offset"
        )
    return end, f"by ({dx}, {dy}) pixels"


async def run_pointer_step(ctx: ToolContext, window: WindowInfo, step: Step) -> str:
    """Carry out one pointer step; a one-line description of what was done and how."""
    x, y, what = await _start(ctx, window, step)
    if step.action == "drag":
        end, where = await _drop(ctx, window, step, (x, y))
        outcome = await ctx.desktop.drag_in(window, (x, y), end)
        return f"Dragged {what} to {where} {how(outcome)}."
    action = step.action
    if action not in ("click", "double_click", "right_click", "hover"):
        raise InvalidArguments(f"{action} is not a pointer action")
    outcome = await ctx.desktop.point_at(window, x, y, action)
    verb = "Moved the pointer" if action == "hover" and step.point is not None else _DONE[action]
    return f"{verb} {what} {how(outcome)}."
