"""Step frames: a small picture of the session's window after each call, for the audit replay.

A context with ``step_frames`` on (the console's sessions) gets, after every call whose result
carries no image of its own, one ``tool.frame`` event in the audit log: a JPEG at most
:data:`FRAME_BOX` of the window the session works on (the resolution order without a windowID:
its tracked target, its bound window, the active window), or of the whole screen when there is
none. The frame is for the person reading the log, never for a model: it is not in the result.

It is screened like every image the door lets out (:func:`deskpilot.tools.gate.screen_result`):
blocked windows overlapping it are blacked out, and a blocked app's own window is never
captured (its frame is a black rectangle of its size). A frame that cannot be taken (the window
closed or is minimized and there is no screen to fall back on) is recorded as missing, with why:
a step never goes without a record, and a failed frame never fails the call.
"""

from __future__ import annotations

import asyncio
import io
import logging
from typing import Any

from deskpilot.desktop.base import Rect
from deskpilot.errors import DeskpilotError
from deskpilot.events import Event, Image
from deskpilot.tools import gate
from deskpilot.tools.base import ToolResult
from deskpilot.tools.context import ToolContext
from deskpilot.tools.reach import Reach
from deskpilot.tools.windows import peek_window

log = logging.getLogger(__name__)

#: The largest frame (width, height): big enough to see what happened, small to keep.
FRAME_BOX = (640, 400)
QUALITY = 70


async def record(ctx: ToolContext, tool: str, call_id: str) -> None:
    """Record the ``tool.frame`` of the call ``call_id`` (see the module docstring)."""
    data: dict[str, Any] = {"tool": tool, "call_id": call_id}
    images: tuple[Image, ...] = ()
    try:
        frame, data["window"], data["blocked"] = await _take(ctx)
        images = (frame,)
    except DeskpilotError as exc:
        data["missing"] = str(exc)
    except Exception as exc:  # a bug here must not fail a call that already ran
        log.exception("could not take the frame of %s", call_id)
        data["missing"] = f"internal error ({type(exc).__name__})"
    ctx.emit(Event("tool.frame", data, run_id=ctx.run_id, images=images))


async def _take(ctx: ToolContext) -> tuple[Image, str | None, bool]:
    window = await peek_window(ctx, None)
    if window is not None and gate.blocklist(ctx).match(window.app) is not None:
        return _black(window.geometry), window.stable_id, True
    shot, reach = None, Reach()
    if window is not None and not window.hidden:
        try:
            png = await ctx.desktop.capture(window)
            shot = Image(png, "image/png", screen_rect=window.geometry)
            reach = Reach.of_window(window)
        except DeskpilotError as exc:  # it closed or hid meanwhile: the screen shows why
            log.debug("frame of %s: %s; taking the screen", window.stable_id, exc)
    if shot is None:
        width, height = await ctx.desktop.screen_size()
        png = await ctx.desktop.capture(None)
        shot, window = Image(png, "image/png", screen_rect=Rect(0, 0, width, height)), None
    screened = await gate.screen_result(
        ctx, reach, ToolResult("", images=[shot]), ctx.session.target
    )
    if not screened.images:
        raise DeskpilotError("the frame was withheld: a blocked app's window may be on it")
    small = await asyncio.to_thread(_small, screened.images[0])
    return small, None if window is None else window.stable_id, False


def _small(image: Image) -> Image:
    """``image`` as a JPEG that fits :data:`FRAME_BOX`."""
    from PIL import Image as PILImage

    with PILImage.open(io.BytesIO(image.data)) as opened:
        img = opened.convert("RGB")
    img.thumbnail(FRAME_BOX)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=QUALITY)
    return Image(buf.getvalue(), "image/jpeg", img.width, img.height, image.screen_rect)


def _black(rect: Rect) -> Image:
    from PIL import Image as PILImage

    width, height = max(1, rect.width), max(1, rect.height)
    scale = min(1.0, FRAME_BOX[0] / width, FRAME_BOX[1] / height)
    img = PILImage.new("RGB", (max(1, int(width * scale)), max(1, int(height * scale))))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=QUALITY)
    return Image(buf.getvalue(), "image/jpeg", img.width, img.height, rect)
