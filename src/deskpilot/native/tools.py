"""The ``computer`` and ``computer_view`` tools: one coordinate action per call, via the ToolSet.

Every native action is one ``ToolSet.call`` — the same door, policy and audit events as the
element tools. ``computer`` (risk: acts) presses, moves, drags, scrolls and types;
``computer_view`` (read-only) takes screenshots, zooms, reports the pointer and waits.

Policy for pixels:

* **Blocked apps.** Before anything is read or done, every point an action touches is checked
  with ``window_at``; keyboard actions check the window that has focus (or the target window).
  A blocked app's window refuses the action with the blocklist error. The check runs in the
  ``assess`` hook (so nothing of the app is read, and no confirmation is asked) and again right
  before the input is sent. Screen captures black out blocked windows.
* **Consequential elements.** Where the element under the pointer can be identified
  (``element_at``, and up to two ancestors: a label inside a button), a press on an element the
  :class:`~deskpilot.policy.ConsequentialRules` flag ("Send", "Delete", …), or a consequential
  shortcut, raises the call's risk to consequential, so the confirm mode and the injected
  approver decide.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from deskpilot.desktop.base import Desktop, Rect, WindowInfo
from deskpilot.errors import InvalidArguments, WindowNotFound
from deskpilot.events import Image as EventImage
from deskpilot.native.actions import (
    KEYBOARD_TYPES,
    VIEW_TYPES,
    Action,
    Click,
    CursorPosition,
    Drag,
    HoldKey,
    KeyDown,
    KeyPress,
    KeyUp,
    MouseDown,
    MouseUp,
    Move,
    Scroll,
    TypeText,
    Wait,
    Zoom,
    action_to_dict,
    describe,
    points,
)
from deskpilot.native.scaling import CoordinateOutOfBounds
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, ToolSpec, tool
from deskpilot.tools.blocklist import Blocklist
from deskpilot.tools.context import ToolContext
from deskpilot.tools.pointer import element_under
from deskpilot.tools.windows import find_window

_FRIENDLY = {"Control_L": "ctrl", "Shift_L": "shift", "Alt_L": "alt", "Super_L": "super"}


async def resolve_window(desktop: Desktop, window_id: str) -> WindowInfo:
    """A window ID (``pid/xid``, ``pid/title`` or an X id) → the open window, or WindowNotFound."""
    found = find_window(await desktop.list_windows(), window_id)
    if found is None:
        raise WindowNotFound(window_id)
    return found


async def target_of(ctx: ToolContext, window: str | None) -> tuple[WindowInfo | None, Rect]:
    """The target window (None for the screen) and its rectangle in root coordinates."""
    if window is None:
        width, height = await ctx.desktop.screen_size()
        return None, Rect(0, 0, width, height)
    info = await resolve_window(ctx.desktop, window)
    return info, info.geometry


def to_root(rect: Rect, x: int, y: int, window: WindowInfo | None) -> tuple[int, int]:
    if not (0 <= x < rect.width and 0 <= y < rect.height):
        what = f"window {window.stable_id}" if window else "screen"
        raise CoordinateOutOfBounds(
            f"pixel ({x}, {y}) is outside the {what} ({rect.width}x{rect.height}); "
            "take a new screenshot"
        )
    return rect.x + x, rect.y + y


def _blocklist(ctx: ToolContext) -> Blocklist:
    return Blocklist.from_settings(ctx.settings)


async def _refuse_blocked(
    ctx: ToolContext, action: Action, rect: Rect, window: WindowInfo | None
) -> list[tuple[int, int]]:
    """Raise AppBlocked if the action would reach a blocked app; return its root points."""
    blocklist = _blocklist(ctx)
    if window is not None:
        blocklist.check_window(window)
    roots = [to_root(rect, x, y, window) for x, y in points(action)]
    if not roots and action.type not in KEYBOARD_TYPES and action.type not in VIEW_TYPES:
        roots = [await ctx.desktop.pointer_position()]  # acts where the pointer is
    for rx, ry in roots:
        hit = await ctx.desktop.window_at(rx, ry)
        if hit is not None:
            blocklist.check_window(hit)
    if action.type in KEYBOARD_TYPES:
        focused = window or await ctx.desktop.active_window()
        if focused is not None:
            blocklist.check_window(focused)
    return roots


async def _element_reason(ctx: ToolContext, x: int, y: int) -> str | None:
    for element in await element_under(ctx, x, y):
        reason = ctx.rules.element_reason(element.name)
        if reason is not None:
            return reason
    return None


async def _assess(ctx: ToolContext, values: Mapping[str, Any]) -> tuple[Risk, str] | None:
    action: Action = values["action"]
    window, rect = await target_of(ctx, values.get("window"))
    roots = await _refuse_blocked(ctx, action, rect, window)
    if isinstance(action, KeyPress | KeyDown | HoldKey):
        combo = "+".join(_FRIENDLY.get(k, k.lower()) for k in action.keys)
        why = ctx.rules.keys_reason(action.keys, combo)
        return (Risk.CONSEQUENTIAL, why) if why else None
    presses = isinstance(action, Click | MouseDown | MouseUp) and action.button == "left"
    if presses or isinstance(action, Drag):
        spot = roots[-1:] if isinstance(action, Drag) else roots
        for rx, ry in spot:
            why = await _element_reason(ctx, rx, ry)
            if why is not None:
                return Risk.CONSEQUENTIAL, why
    return None


async def _hold(desktop: Desktop, keys: Sequence[str], seconds: float) -> None:
    await desktop.key_event(keys, True)
    try:
        await asyncio.sleep(seconds)
    finally:
        await desktop.key_event(keys, False)


async def _perform(desktop: Desktop, action: Action, roots: list[tuple[int, int]]) -> None:
    here = roots[0] if roots else None
    if isinstance(action, Click):
        x, y = here or await desktop.pointer_position()
        await desktop.pointer_click(x, y, button=action.button, count=action.count,
                                    modifiers=action.modifiers)  # fmt: skip
    elif isinstance(action, Move):
        assert here is not None
        if not action.modifiers:
            await desktop.pointer_move(*here)
            return
        await desktop.key_event(action.modifiers, True)
        try:
            await desktop.pointer_move(*here)
        finally:
            await desktop.key_event(action.modifiers, False)
    elif isinstance(action, Drag):
        await desktop.pointer_drag(roots, modifiers=action.modifiers)
    elif isinstance(action, MouseDown | MouseUp):
        if here is not None:
            await desktop.pointer_move(*here)
        await desktop.pointer_button(action.button, isinstance(action, MouseDown))
    elif isinstance(action, Scroll):
        x, y = here or await desktop.pointer_position()
        await desktop.wheel(x, y, action.dx, action.dy, modifiers=action.modifiers)
    elif isinstance(action, TypeText):
        await desktop.type_raw(action.text)
    elif isinstance(action, KeyPress):
        for _ in range(action.repeat):
            await desktop.key_event(action.keys, True)
            await desktop.key_event(action.keys, False)
    elif isinstance(action, KeyDown | KeyUp):
        await desktop.key_event(action.keys, isinstance(action, KeyDown))
    elif isinstance(action, HoldKey):
        await _hold(desktop, action.keys, action.duration)


@tool(risk=Risk.ACTS, title="Computer (pointer and keyboard)", name="computer", assess=_assess)
async def computer(ctx: ToolContext, action: Action, window: str | None = None) -> ToolResult:
    """Run one pointer or keyboard action at pixel coordinates.

    Coordinates are pixels of the target: the whole screen, or with `window` (a window ID) that
    window's client area, (0, 0) being its top-left corner. Actions: click (button, count 1-3,
    held modifiers), move, drag (path), mouse_down, mouse_up, scroll (dx/dy wheel notches),
    type, keypress (a combination of X keysym names), key_down, key_up, hold_key. Use
    computer_view for screenshot, zoom, cursor_position and wait.
    """
    if action.type in VIEW_TYPES:
        raise InvalidArguments(f"{action.type} is a computer_view action, not a computer action")
    info, rect = await target_of(ctx, window)
    roots = await _refuse_blocked(ctx, action, rect, info)  # again, at dispatch time
    if info is not None and action.type in KEYBOARD_TYPES and not info.active:
        await ctx.desktop.activate(info)
    await _perform(ctx.desktop, action, roots)
    return ToolResult(
        text=f"Done: {describe(action)}",
        data={"action": action_to_dict(action), "window": window,
              "root_points": [list(p) for p in roots]},
    )  # fmt: skip


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


async def capture_target(ctx: ToolContext, window: WindowInfo | None, rect: Rect) -> Image.Image:
    """A capture of the target with every blocked app's window blacked out."""
    png = await ctx.desktop.capture(window)
    img = Image.open(io.BytesIO(png)).convert("RGB")
    blocklist = _blocklist(ctx)
    draw = ImageDraw.Draw(img)
    for w in await ctx.desktop.list_windows():
        if w.hidden or blocklist.match(w.app) is None or not w.geometry.intersects(rect):
            continue
        g = w.geometry.offset(-rect.x, -rect.y)
        draw.rectangle([g.x, g.y, g.x + g.width - 1, g.y + g.height - 1], fill="black")
    return img


def _image(img: Image.Image) -> EventImage:
    return EventImage(data=_png(img), width=img.width, height=img.height)


@tool(risk=Risk.READ_ONLY, title="Computer (look and wait)", name="computer_view")
async def computer_view(ctx: ToolContext, action: Action, window: str | None = None) -> ToolResult:
    """Take a screenshot, zoom into a region at full resolution, report the pointer, or wait.

    With `window` (a window ID) the target is that window's client area and coordinates are
    relative to it; otherwise the whole screen. Blocked apps appear blacked out.
    """
    if action.type not in VIEW_TYPES:
        raise InvalidArguments(f"{action.type} is a computer action, not a computer_view action")
    info, rect = await target_of(ctx, window)
    if info is not None:
        _blocklist(ctx).check_window(info)
    if isinstance(action, Wait):
        await asyncio.sleep(action.seconds)
        return ToolResult(text=f"Waited {action.seconds:g} s")
    if isinstance(action, CursorPosition):
        px, py = await ctx.desktop.pointer_position()
        x, y = px - rect.x, py - rect.y
        inside = 0 <= x < rect.width and 0 <= y < rect.height
        return ToolResult(text=f"X={x},Y={y}" + ("" if inside else " (outside the target)"),
                          data={"x": x, "y": y, "inside": inside})  # fmt: skip
    img = await capture_target(ctx, info, rect)
    if isinstance(action, Zoom):
        if action.x1 > img.width or action.y1 > img.height:
            raise CoordinateOutOfBounds(
                f"zoom region [{action.x0}, {action.y0}, {action.x1}, {action.y1}] is outside "
                f"the target ({img.width}x{img.height})"
            )
        img = img.crop((action.x0, action.y0, action.x1, action.y1))
        what = f"Zoom into [{action.x0}, {action.y0}, {action.x1}, {action.y1}]"
    else:
        what = "Screenshot of " + (f"window {info.stable_id}" if info else "the screen")
    return ToolResult(text=f"{what} ({img.width}x{img.height})", images=[_image(img)],
                      data={"width": img.width, "height": img.height})  # fmt: skip


#: The native tools, to add to a ToolSet (``ToolSet([*element_tools, *NATIVE_TOOLS])``).
NATIVE_TOOLS: tuple[ToolSpec, ...] = (computer, computer_view)
