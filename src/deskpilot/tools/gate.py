"""The door's checks around one call that are not decisions: the policy decides
(:func:`deskpilot.policy.door.decide`: blocked apps, effects, grants, asking); this module
gives a call its default reach and screens what comes back.

Before the tool runs, :func:`default_reach` is the reach of a tool that declares none.

After it ran (:func:`screen_result`), nothing that reaches a model shows a blocked window:

* a call that ended on a blocked app's window (it opened one and tracked it) is refused, the
  previous target kept;
* blocked windows' titles are cut out of the text and the structured data;
* every image is blacked out wherever a blocked window overlaps the part of the screen it
  shows (``Image.screen_rect``, or inferred from the call's window or the screen when the
  sizes match); an image whose place on screen cannot be told is withheld while a blocked
  window is visible. Where the blocked window's own place is unknown (``WindowInfo.placed``
  False: GNOME on Wayland), only a capture of one unplaced window — its pixels alone — goes
  out; every other image is withheld.
"""

from __future__ import annotations

import dataclasses
import io
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from deskpilot.desktop.base import Rect, WindowInfo
from deskpilot.errors import AppBlocked
from deskpilot.events import Image
from deskpilot.policy.blocklist import Blocklist
from deskpilot.policy.reach import Reach
from deskpilot.tools.base import ToolResult
from deskpilot.tools.context import ToolContext
from deskpilot.tools.windows import peek_window

log = logging.getLogger(__name__)

HIDDEN_TITLE = "[a blocked window]"


def blocklist(ctx: ToolContext) -> Blocklist:
    return Blocklist.from_settings(ctx.settings)


# -- before -------------------------------------------------------------------------------------

#: The argument names that name a window, in the order they are looked at.
WINDOW_ARGS = ("windowID", "window")


async def default_reach(ctx: ToolContext, values: Mapping[str, Any]) -> Reach:
    """The reach of a tool that declares none: the window its window argument names, else
    the window a call without one would use."""
    wid = next((values[a] for a in WINDOW_ARGS if isinstance(values.get(a), str)), None)
    return Reach.of_window(await peek_window(ctx, wid))


# -- after --------------------------------------------------------------------------------------


async def screen_result(
    ctx: ToolContext, reach: Reach, result: ToolResult, target_before: str | None
) -> ToolResult:
    """The result as a model may see it (see the module docstring)."""
    rules = blocklist(ctx)
    windows = await ctx.desktop.list_windows()
    blocked = [w for w in windows if rules.match(w.app) is not None]
    if not blocked:
        return result
    target = ctx.session.target
    if target != target_before and target is not None:
        ended = next((w for w in blocked if target in (w.stable_id, w.window_id)), None)
        if ended is not None:
            ctx.session.target = target_before
            return refusal(AppBlocked(ended.app.name))
    titles = hidden_titles(blocked)
    result.text = redact(result.text, titles)
    result.summary = redact(result.summary, titles)
    if result.data is not None:
        result.data = _redact_data(result.data, titles)
    if result.images:
        result.images = await _black_out(ctx, reach, result, blocked)
    return result


def refusal(exc: AppBlocked) -> ToolResult:
    return ToolResult(str(exc), is_error=True, data={"refused": "blocked", "app": exc.app})


def hidden_titles(blocked: Iterable[WindowInfo]) -> list[str]:
    """The titles to cut out: each blocked window's title, and its document part ("Passwords"
    of "Passwords - KeePassXC"); not the app's own name, which the refusals say."""
    found: set[str] = set()
    for w in blocked:
        title = w.title.strip()
        app = w.app.name.strip()
        if not title or title.casefold() == app.casefold():
            continue
        found.add(title)
        for sep in (" - ", " — ", " – ", " | "):
            head, _, tail = title.rpartition(sep)
            if head and tail.strip().casefold() == app.casefold() and len(head.strip()) >= 3:
                found.add(head.strip())
    return sorted(found, key=len, reverse=True)  # the longest first


def redact(text: str, titles: Iterable[str]) -> str:
    for title in titles:
        if title in text:
            text = text.replace(title, HIDDEN_TITLE)
    return text


def _redact_data(value: Any, titles: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, titles)
    if isinstance(value, Mapping):
        return {k: _redact_data(v, titles) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_data(v, titles) for v in value]
    return value


async def _black_out(
    ctx: ToolContext, reach: Reach, result: ToolResult, blocked: list[WindowInfo]
) -> list[Image]:
    shown = [w for w in blocked if not w.hidden]
    if not shown:
        return result.images
    screen = Rect(0, 0, *await ctx.desktop.screen_size())
    # a window whose place on the screen is unknown (WindowInfo.placed) cannot be blacked out
    # where it is: an image of an unplaced window shows that window alone, any other is withheld
    placed = [w.geometry for w in shown if w.placed]
    unplaced = any(not w.placed for w in shown)
    own = reach.window if reach.window is not None and not reach.window.placed else None
    out: list[Image] = []
    withheld = 0
    for image in result.images:
        if own is not None and _shows_only(image, own):
            out.append(_covered(image, own.geometry, placed))
            continue
        rect = image.screen_rect or _inferred_rect(image, reach.window, screen)
        if rect is None or unplaced:
            withheld += 1
            continue
        out.append(_covered(image, rect, placed))
    if withheld:
        result.text += (
            f"\n({withheld} image(s) withheld: deskpilot could not tell which part of the "
            "screen they show while a blocked app's window is open.)"
        )
    return out


def _shows_only(image: Image, window: WindowInfo) -> bool:
    """Whether ``image`` is the capture of an unplaced ``window`` (its own pixels alone)."""
    g = window.geometry
    return image.screen_rect == g or (
        image.screen_rect is None and (image.width, image.height) == (g.width, g.height)
    )


def _inferred_rect(image: Image, window: WindowInfo | None, screen: Rect) -> Rect | None:
    size = (image.width, image.height)
    if window is not None and size == (window.geometry.width, window.geometry.height):
        return window.geometry
    if size == (screen.width, screen.height):
        return screen
    return None


def _covered(image: Image, rect: Rect, blocked: list[Rect]) -> Image:
    """``image`` (showing ``rect`` of the screen) with every blocked rectangle blacked out."""
    hits = [b for b in blocked if b.intersects(rect)]
    if not hits or rect.empty:
        return (
            image if image.screen_rect is not None else dataclasses.replace(image, screen_rect=rect)
        )
    from PIL import Image as PILImage  # only here: a tool call that blacks nothing out does
    from PIL import ImageDraw  # not pay for Pillow's import (issue 9's CLI latency)

    with PILImage.open(io.BytesIO(image.data)) as opened:
        img = opened.convert("RGB")
    sx, sy = img.width / rect.width, img.height / rect.height
    draw = ImageDraw.Draw(img)
    for b in hits:
        x0, y0 = (b.x - rect.x) * sx, (b.y - rect.y) * sy
        x1, y1 = (b.x + b.width - rect.x) * sx - 1, (b.y + b.height - rect.y) * sy - 1
        draw.rectangle([x0, y0, x1, y1], fill="black")
    buf = io.BytesIO()
    fmt = "JPEG" if image.mime == "image/jpeg" else "PNG"
    img.save(buf, format=fmt, **({"compress_level": 1} if fmt == "PNG" else {"quality": 85}))
    return Image(buf.getvalue(), image.mime, img.width, img.height, screen_rect=rect)
