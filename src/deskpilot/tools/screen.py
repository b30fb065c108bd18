"""Seeing a window: read_screen_ax (accessibility tree as lean text) and computer_use_screenshot."""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from deskpilot.ax.diff import Diff, diff
from deskpilot.ax.render import Renderer
from deskpilot.ax.render_memo import RENDERINGS
from deskpilot.ax.ticking import quiet
from deskpilot.desktop.base import Node, Snapshot, WindowInfo
from deskpilot.desktop.caret import describe_caret
from deskpilot.desktop.cell_refs import parse_range
from deskpilot.desktop.toolkits import is_web_browser
from deskpilot.errors import (
    AppGone,
    AppNotResponding,
    ElementGone,
    InvalidArguments,
    NotAnswering,
    ToolError,
)
from deskpilot.events import Image
from deskpilot.policy import Risk
from deskpilot.tools.answering import answering, check_answered
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup, remember, split_cell_ref, verify
from deskpilot.tools.guidance import guidance_for
from deskpilot.tools.revealing import reveal_bars
from deskpilot.tools.window_changes import closed_line, closes
from deskpilot.tools.windows import WindowIDArg, resolve_window


def header(window: WindowInfo) -> str:
    return (
        f"{window.app.name} ({window.app.app_id}) · {window.title!r} · windowID: {window.stable_id}"
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


@dataclass
class Read:
    body: str  # the rendered tree (or a note when there is none)
    snap: Snapshot
    ids: dict[str, Node]  # element IDs shown
    lines: dict[str, str]  # every line by element identity (for diffs)
    previous: dict[str, str] | None  # the same for the last read of this window, if any
    note: str = ""  # what the read did to see the window (a hidden bar shown by a hover)


async def read_window(
    ctx: ToolContext,
    window: WindowInfo,
    element_id: str | None = None,
    *,
    baseline: bool = True,
    chrome: bool | None = None,
) -> Read:
    """Read and render a window (or one element's subtree); remember the IDs shown.

    With ``baseline`` (a read the model sees in full) it becomes what the next
    ``changes`` read and the next action summary compare with. ``chrome``: a browser's own
    controls line by line (None: as the window's last baseline read had them)."""
    if element_id is not None:
        table_id, cells = split_cell_ref(element_id)
        if cells is not None:
            return await read_cells(ctx, window, table_id, cells)
    xid = str(window.handle)
    if chrome is None:
        chrome = xid in ctx.session.chrome
    zoomed = lookup(ctx.session, element_id) if element_id is not None else None
    # a zoomed read reads the element's part whole: what is scrolled out of view too
    snap = await (
        ctx.desktop.snapshot(window, whole=zoomed[1].key)
        if zoomed
        else ctx.desktop.snapshot(window)
    )
    check_answered(snap)
    note = ""
    if element_id is None and baseline:  # a bar folded away until the pointer moves
        snap, note = await reveal_bars(ctx, window, snap)
    root = snap.root
    if zoomed is not None and root is not None:
        eid, record = zoomed
        sub = snap.find(record.key)
        if sub is None:
            raise ElementGone(eid, "it is not in the window any more")
        root = sub
    previous = ctx.session.last_read.get(str(window.handle))
    if root is None:
        body = (
            "(the window has no accessibility tree: the app may still be starting or may not "
            "support accessibility — wait briefly and read again, or use "
            "computer_use_screenshot)"
        )
        return Read(body, snap, {}, {}, previous)
    # a zoomed read (one element's part) shows it in full: long text uncut, what is
    # scrolled out of view marked offscreen
    browser = is_web_browser(window.app.executable, window.app.app_id)
    if element_id is None:  # the same nodes as the last read's (nothing changed): its text
        rendered = RENDERINGS.render(
            xid,
            root,
            area=window.geometry,
            budget=ctx.settings.read_budget_chars,
            chrome=chrome,
            browser=browser,
            header=header(window),
            unchanged=snap.unchanged,
        )
    else:
        rendered = Renderer(
            window.geometry,
            budget=ctx.settings.read_budget_chars,
            chrome=chrome,
            zoom=True,
            browser=browser,
        ).render(root, header=header(window))
    remember(ctx.session, window, rendered.ids, rendered.names, rendered.roles)
    if element_id is None and baseline:  # a zoomed read is not a baseline for diffs
        ctx.session.last_read[xid] = rendered.lines
        ctx.session.chrome = [w for w in ctx.session.chrome if w != xid] + ([xid] if chrome else [])
    body = rendered.text or "(no visible elements in this window)"
    return Read(body, snap, rendered.ids, rendered.lines, previous, note)


async def read_cells(ctx: ToolContext, window: WindowInfo, table_id: str, cells: str) -> Read:
    """A range of a table's cells (``<tableID>:A40:F80``), read live, rendered as the table's
    rows."""
    bounds = parse_range(cells)
    if bounds is None:
        raise InvalidArguments(
            f"{cells!r} after @{table_id}: is not a range of cells: name one by addresses "
            "(A40:F80) or rows and columns (R40C1:R80C6)"
        )
    eid, table = await verify(ctx, window, table_id)
    start = time.perf_counter()
    root, problems = await ctx.desktop.read_cells(window, table.key, *bounds)
    if root is None:
        raise ToolError(f"@{eid} is not a table whose cells can be read: {'; '.join(problems)}")
    snap = Snapshot(
        window,
        root,
        partial=bool(problems),
        problems=problems,
        elapsed_ms=(time.perf_counter() - start) * 1000,
    )
    rendered = Renderer(window.geometry, budget=ctx.settings.read_budget_chars).render(
        root, header=header(window)
    )
    remember(ctx.session, window, rendered.ids, rendered.names)
    previous = ctx.session.last_read.get(str(window.handle))
    return Read(rendered.text, snap, rendered.ids, rendered.lines, previous)


async def change_summary(ctx: ToolContext, window: WindowInfo, read: Read | None = None) -> str:
    """After an action: what changed in the window because of it (one line) — since the model
    last read the window or the last action's summary, whichever came later. ``read``: the
    window's read after the action, if the caller took it already."""
    if str(window.handle) not in ctx.session.last_read:
        return ""  # never read: nothing to compare with
    if not any(w.handle == window.handle for w in await ctx.desktop.list_windows()):
        return ""
    gone = closed_line(window)
    try:
        read = read or await read_window(ctx, window, baseline=False)
    except AppGone:  # the app left the bus after the action: it is exiting
        return gone if await closes(ctx, window) else ""
    except NotAnswering:  # the action was sent; the model must know the app is not answering
        return (
            f"({window.app.name} did not answer after the action: it may be busy or frozen. "
            "Read the window again before going on.)"
        )
    if read.snap.off_the_bus and read.previous:
        # a window read before whose app is off the bus now: it left after the action (it is
        # exiting; the window server hears of it a moment later)
        return gone if await closes(ctx, window) else ""
    if read.previous is None or read.snap.root is None:
        return ""
    summary = changes_since(ctx, window, read).summary()
    # the model has now been told what changed: the next action's summary is about that
    # action only, never the same lines again (issue 21)
    ctx.session.last_read[str(window.handle)] = read.lines
    return summary


async def caret_lines(ctx: ToolContext, window: WindowInfo, ids: dict[str, Node]) -> list[str]:
    """The caret and the selection in the focused text of the window (a document, a text
    view, a field), when it has one: where typing goes and what a shortcut would act on."""
    key = await ctx.desktop.focused_element(window)
    if key is None:
        return []
    caret = await ctx.desktop.text_caret(key)
    if caret is None:
        return []
    eid = next((e for e, n in ids.items() if n.key == key), None)
    return describe_caret(caret, eid)


#: what a ``changes`` read compares with (an action's result already listed what it changed)
SINCE = "your last read or the last action's change summary"


def changes_since(ctx: ToolContext, window: WindowInfo, read: Read) -> Diff:
    """What changed since the window's last baseline read, ticking texts left out when they
    ticked in the diff before too (:mod:`~deskpilot.ax.ticking`)."""
    xid = str(window.handle)
    d, ticked = quiet(diff(read.previous or {}, read.lines), set(ctx.session.ticking.get(xid, [])))
    ctx.session.ticking[xid] = sorted(ticked)
    return d


@tool(risk=Risk.READ_ONLY, title="Read Screen (AX)", idempotent=True)
async def read_screen_ax(
    ctx: ToolContext,
    windowID: WindowIDArg = None,
    elementID: Annotated[
        str | None,
        Field(
            description="Read only this element's part of the window (an ID from an "
            "earlier read, e.g. from a '… more' line); for a table, a range of its cells "
            "after its ID, on screen or not: '2d.jd:A40:F80' (a spreadsheet) or "
            "'2d.jd:R40C1:R80C6'."
        ),
    ] = None,
    changes: Annotated[
        bool,
        Field(
            description="Return only what changed since your last read of this window or "
            "the last action's change summary (+ new, - gone, ~ changed, ↕ moved) "
            "instead of the whole tree."
        ),
    ] = False,
    chrome: Annotated[
        bool,
        Field(
            description="In a browser window, list the browser's own controls (toolbar, "
            "tabs, address bar) with IDs; by default they read as one line."
        ),
    ] = False,
    guidance: Annotated[
        bool,
        Field(
            description="Show the app's guidance tips again (they come with the first read "
            "of each window)."
        ),
    ] = False,
) -> ToolResult:
    """Read a window's accessibility tree as text: one line per element, interactive ones
    ending in @elementID for perform / perform_sequence. No screenshot, no vision. Read first
    in a window, and again after navigation, dialogs, scrolling or shortcuts that change it."""
    window = await resolve_window(ctx, windowID)
    async with answering(ctx, window, AppNotResponding.NOTHING_READ):
        read = await read_window(ctx, window, elementID, chrome=chrome)
    snap, ids, body = read.snap, read.ids, read.body
    if changes and elementID is None:
        if read.previous is None:
            body = "(first read of this window: the whole tree)\n" + body
        else:
            d = changes_since(ctx, window, read)
            body = (
                f"No changes since {SINCE}."
                if d.empty
                else f"Changes since {SINCE} (+ new, - gone, ~ changed, ↕ moved):\n"
                + "\n".join(d.lines())
            )
            if d.ticking:
                body += f"\n({d.ticking} ticking text{'s' if d.ticking > 1 else ''} left out)"
    parts = ["<activeAppContext>", header(window)]
    if snap.partial:
        why = "; ".join(snap.problems[:3]) or "some parts did not answer"
        parts.append(f"(partial read: {why} — read again in a moment)")
    if read.note:
        parts.append(read.note)
    focused = [eid for eid, n in ids.items() if "focused" in n.states]
    if focused:
        parts.append(f"Focused: @{focused[0]}")
    if elementID is None:
        parts += await caret_lines(ctx, window, ids)
    parts += [body, "</activeAppContext>"]
    guide = guidance_for(window.app, ctx.settings.config_dir / "guidance")
    if guide is not None and (guidance or str(window.handle) not in ctx.session.guided):
        # once per window per session (and when asked): not the same tips on every read
        parts += ["<appGuidance>", guide.tips, "</appGuidance>"]
        ctx.session.guided = [*ctx.session.guided[-63:], str(window.handle)]
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
    """Capture one app window as a PNG image: the window as a person sees it, with the app's
    open menus, lists and tooltips over it (other apps' windows are not in it). Use it only
    when the goal needs visuals; read_screen_ax is faster and cheaper for finding and using
    elements. Fails if the window is minimized or hidden."""
    window = await resolve_window(ctx, windowID)
    png = await ctx.desktop.capture(window)
    from PIL import Image as PILImage  # only here: a read needs no imaging library

    with PILImage.open(io.BytesIO(png)) as img:
        width, height = img.size
    g = window.geometry
    text = (
        f"Screenshot of window {window.stable_id}\napp: {window.app.name} "
        f"({window.app.app_id})\ntitle: {window.title}\nwindowID: {window.stable_id}\n"
        f"dimensions: {width}x{height}\ncovers the screen from ({g.x}, {g.y}) to "
        f"({g.x + width}, {g.y + height})"
    )
    return ToolResult(
        text,
        images=[Image(png, "image/png", width, height, screen_rect=window.geometry)],
        data={
            "window": window.stable_id,
            "width": width,
            "height": height,
            "covers": [g.x, g.y, width, height],
        },
        summary=f"{width}x{height} PNG of {window.title!r}",
    )
