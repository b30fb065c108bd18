"""Seeing a window: read_screen_ax (accessibility tree as lean text) and computer_use_screenshot."""

from __future__ import annotations

import io
from typing import Annotated, Any

from PIL import Image as PILImage
from pydantic import Field

from deskpilot.ax.render import Renderer
from deskpilot.desktop.base import Node, Snapshot, WindowInfo
from deskpilot.errors import ElementGone
from deskpilot.events import Image
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup, remember
from deskpilot.tools.guidance import guidance_for
from deskpilot.tools.windows import WindowIDArg, resolve_window


def header(window: WindowInfo) -> str:
    return (
        f"App: {window.app.name} ({window.app.app_id}) · Window: {window.title!r} · "
        f"windowID: {window.stable_id}"
    )


def node_data(eid: str | None, node: Node) -> dict[str, Any]:
    b = node.bounds
    return {
        "id": eid,
        "role": node.role,
        "name": node.name,
        "states": sorted(node.states),
        "bounds": [b.x, b.y, b.width, b.height] if b is not None else None,
        "text": node.text,
        "value": node.value,
    }


async def read_window(
    ctx: ToolContext, window: WindowInfo, element_id: str | None = None
) -> tuple[str, Snapshot, dict[str, Node]]:
    """Read and render a window (or one element's subtree); remember the IDs shown."""
    snap = await ctx.desktop.snapshot(window)
    root = snap.root
    if element_id is not None and root is not None:
        eid, record = lookup(ctx.session, element_id)
        sub = snap.find(record.key)
        if sub is None:
            raise ElementGone(eid, "it is not in the window any more")
        root = sub
    if root is None:
        body = (
            "(the window has no accessibility tree: the app may still be starting or may not "
            "support accessibility — wait briefly and read again, or use "
            "computer_use_screenshot)"
        )
        return body, snap, {}
    rendered = Renderer(window.geometry, budget=ctx.settings.read_budget_chars).render(
        root, header=header(window)
    )
    remember(ctx.session, window, rendered.ids)
    ctx.session.last_read[str(window.xid)] = rendered.lines
    body = rendered.text or "(no visible elements in this window)"
    return body, snap, rendered.ids


@tool(risk=Risk.READ_ONLY, title="Read Screen (AX)", idempotent=True)
async def read_screen_ax(
    ctx: ToolContext,
    windowID: WindowIDArg = None,
    elementID: Annotated[
        str | None,
        Field(
            description="Read only this element's part of the window (an ID from an "
            "earlier read, e.g. from a '… more' line)."
        ),
    ] = None,
) -> ToolResult:
    """Read a window's accessibility tree as text: one line per element, interactive ones
    ending in @elementID for perform / perform_sequence. No screenshot, no vision. Read first
    in a window, and again after navigation, dialogs, scrolling or shortcuts that change it."""
    window = await resolve_window(ctx, windowID)
    body, snap, ids = await read_window(ctx, window, elementID)
    parts = ["<activeAppContext>", header(window)]
    if snap.partial:
        why = "; ".join(snap.problems[:3]) or "some parts did not answer"
        parts.append(f"(partial read: {why} — read again in a moment)")
    focused = [eid for eid, n in ids.items() if "focused" in n.states]
    if focused:
        parts.append(f"Focused: @{focused[0]}")
    parts += [body, "</activeAppContext>"]
    guide = guidance_for(window.app, ctx.settings.config_dir / "guidance")
    if guide is not None:
        parts += ["<appGuidance>", guide.tips, "</appGuidance>"]
    data = {
        "window": window.stable_id,
        "partial": snap.partial,
        "problems": snap.problems,
        "elapsed_ms": round(snap.elapsed_ms, 1),
        "nodes": [node_data(eid, n) for eid, n in ids.items()],
    }
    return ToolResult(
        "\n".join(parts),
        data=data,
        summary=f"{len(ids)} elements in {window.title!r}" + (" (partial)" if snap.partial else ""),
    )


@tool(risk=Risk.READ_ONLY, title="Computer Use Screenshot", idempotent=True)
async def computer_use_screenshot(ctx: ToolContext, windowID: WindowIDArg = None) -> ToolResult:
    """Capture one app window as a PNG image (that window only). Use it only when the goal
    needs visuals; read_screen_ax is faster and cheaper for finding and using elements.
    Fails if the window is minimized or hidden."""
    window = await resolve_window(ctx, windowID)
    png = await ctx.desktop.capture(window)
    with PILImage.open(io.BytesIO(png)) as img:
        width, height = img.size
    text = (
        f"Screenshot of window {window.stable_id}\napp: {window.app.name} "
        f"({window.app.app_id})\ntitle: {window.title}\nwindowID: {window.stable_id}\n"
        f"dimensions: {width}x{height}"
    )
    return ToolResult(
        text,
        images=[Image(png, "image/png", width, height)],
        data={"window": window.stable_id, "width": width, "height": height},
        summary=f"{width}x{height} PNG of {window.title!r}",
    )
