"""The ``computer`` and ``computer_view`` tools: one coordinate action per call, via the ToolSet.

Every native action is one ``ToolSet.call`` — the same door, policy and audit events as the
element tools. ``computer`` (risk: acts) presses, moves, drags, scrolls and types;
``computer_view`` (read-only) takes screenshots, zooms, reports the pointer and waits.

Each tool declares what an action reaches (:func:`action_reach`): the target window, every
screen point it touches (a press where the model points it, or where the pointer is), and for
keyboard actions the keys and the window with the focus. The door does the rest: a blocked
app's window under any point, or with the focus, refuses the action; a press on an element
the rules flag ("Send", "Delete", …), or a consequential shortcut, asks first; screenshots and
zooms carry the part of the screen they show, and blocked windows are blacked out there.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image

from deskpilot.desktop.base import Desktop, Rect, WindowInfo
from deskpilot.desktop.window_ids import find_window
from deskpilot.errors import ActionFailed, InvalidArguments, WindowNotFound
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
from deskpilot.tools.context import ToolContext
from deskpilot.tools.reach import Keys, Point, Reach

_FRIENDLY = {"Control_L": "ctrl", "Shift_L": "shift", "Alt_L": "alt", "Super_L": "super"}


async def resolve_window(desktop: Desktop, window_id: str) -> WindowInfo:
    """A window ID (``pid/handle``, ``pid/title`` or a bare handle) → the open window, or
    WindowNotFound."""
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


def _presses(action: Action) -> bool:
    return isinstance(action, Click | MouseDown | MouseUp) and action.button == "left"


async def action_reach(ctx: ToolContext, values: Mapping[str, Any]) -> Reach:
    """What one native action reaches (see the module docstring)."""
    action: Action = values["action"]
    window, rect = await target_of(ctx, values.get("window"))
    reach = Reach.of_window(window)
    roots = [to_root(rect, x, y, window) for x, y in points(action)]
    if roots:
        last = len(roots) - 1
        reach.points = [
            Point(x, y, _presses(action) or (isinstance(action, Drag) and i == last))
            for i, (x, y) in enumerate(roots)
        ]
    elif action.type not in KEYBOARD_TYPES and action.type not in VIEW_TYPES:
        x, y = await ctx.desktop.pointer_position()  # it acts where the pointer is
        reach.points = [Point(x, y, _presses(action))]
    if isinstance(action, TypeText):
        reach.keys = [Keys(text=action.text, window=window)]
    elif isinstance(action, KeyPress | KeyDown | HoldKey | KeyUp):
        combo = "+".join(_FRIENDLY.get(k, k.lower()) for k in action.keys)
        pressed = () if isinstance(action, KeyUp) else tuple(action.keys)
        reach.keys = [Keys(pressed, shown=combo, window=window)]
    return reach


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
        await desktop.pointer_click(
            x, y, button=action.button, count=action.count, modifiers=action.modifiers
        )
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


@tool(
    risk=Risk.ACTS,
    title="Computer (pointer and keyboard)",
    name="computer",
    reach=action_reach,
    effects=True,
)
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
    roots = [to_root(rect, x, y, info) for x, y in points(action)]
    if info is None and roots and not await _screen_placed(ctx):
        raise ActionFailed(
            "this desktop does not say where windows are on the screen (GNOME on Wayland): "
            "screen coordinates cannot be aimed at. Pass window (a window ID) and that "
            "window's own coordinates."
        )
    # an unplaced window is pointed at in its own coordinates, which only the active one
    # takes (the pointer moves in the active window's recording)
    if info is not None and not info.active and (action.type in KEYBOARD_TYPES or not info.placed):
        await ctx.desktop.activate(info)
    await _perform(ctx.desktop, action, roots)
    return ToolResult(
        text=f"Done: {describe(action)}",
        data={
            "action": action_to_dict(action),
            "window": window,
            "root_points": [list(p) for p in roots],
        },
    )


async def _screen_placed(ctx: ToolContext) -> bool:
    """Whether screen points can be aimed at: the windows' places on it are known."""
    active = await ctx.desktop.active_window()
    return active is None or active.placed


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


async def capture_target(ctx: ToolContext, window: WindowInfo | None) -> Image.Image:
    """A capture of the target (the door blacks out blocked windows in what it returns)."""
    png = await ctx.desktop.capture(window)
    return Image.open(io.BytesIO(png)).convert("RGB")


def _image(img: Image.Image, shows: Rect) -> EventImage:
    return EventImage(data=_png(img), width=img.width, height=img.height, screen_rect=shows)


async def _view_reach(ctx: ToolContext, values: Mapping[str, Any]) -> Reach:
    window, _rect = await target_of(ctx, values.get("window"))
    return Reach.of_window(window)


@tool(
    risk=Risk.READ_ONLY, title="Computer (look and wait)", name="computer_view", reach=_view_reach
)
async def computer_view(ctx: ToolContext, action: Action, window: str | None = None) -> ToolResult:
    """Take a screenshot, zoom into a region at full resolution, report the pointer, or wait.

    With `window` (a window ID) the target is that window's client area and coordinates are
    relative to it; otherwise the whole screen. Blocked apps appear blacked out.
    """
    if action.type not in VIEW_TYPES:
        raise InvalidArguments(f"{action.type} is a computer action, not a computer_view action")
    info, rect = await target_of(ctx, window)
    if isinstance(action, Wait):
        await asyncio.sleep(action.seconds)
        return ToolResult(text=f"Waited {action.seconds:g} s")
    if isinstance(action, CursorPosition):
        px, py = await ctx.desktop.pointer_position()
        x, y = px - rect.x, py - rect.y
        inside = 0 <= x < rect.width and 0 <= y < rect.height
        return ToolResult(
            text=f"X={x},Y={y}" + ("" if inside else " (outside the target)"),
            data={"x": x, "y": y, "inside": inside},
        )
    img = await capture_target(ctx, info)
    shows = Rect(rect.x, rect.y, img.width, img.height)
    if isinstance(action, Zoom):
        if action.x1 > img.width or action.y1 > img.height:
            raise CoordinateOutOfBounds(
                f"zoom region [{action.x0}, {action.y0}, {action.x1}, {action.y1}] is outside "
                f"the target ({img.width}x{img.height})"
            )
        img = img.crop((action.x0, action.y0, action.x1, action.y1))
        shows = Rect(rect.x + action.x0, rect.y + action.y0, img.width, img.height)
        what = f"Zoom into [{action.x0}, {action.y0}, {action.x1}, {action.y1}]"
    else:
        what = "Screenshot of " + (f"window {info.stable_id}" if info else "the screen")
    return ToolResult(
        text=f"{what} ({img.width}x{img.height})",
        images=[_image(img, shows)],
        data={"width": img.width, "height": img.height},
    )


#: The native tools, to add to a ToolSet (``ToolSet([*element_tools, *NATIVE_TOOLS])``).
NATIVE_TOOLS: tuple[ToolSpec, ...] = (computer, computer_view)
