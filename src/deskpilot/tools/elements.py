"""Element IDs shown to the model: remembering them, and checking one before acting on it.

Before any action the ID is looked up in the session (what it named when it was read: bus,
path, role, name, parent) and the live element is compared with that fingerprint. A gone or
changed element raises :class:`~deskpilot.errors.ElementGone` (the re-read message); deskpilot
never acts on a different element than the one the ID named.
"""

from __future__ import annotations

from deskpilot.ax.ids import ID_PATTERN, normalize
from deskpilot.desktop.base import LiveElement, Node, WindowInfo
from deskpilot.desktop.cell_refs import parse_cell
from deskpilot.errors import ElementGone, InvalidArguments, ToolError
from deskpilot.session import ElementRecord, Session
from deskpilot.tools.context import ToolContext


def remember(
    session: Session,
    window: WindowInfo,
    ids: dict[str, Node],
    names: dict[str, str] | None = None,
    roles: dict[str, str] | None = None,
) -> None:
    records = {
        eid: ElementRecord(
            bus=n.key[0],
            path=n.key[1],
            role=n.role,
            name=n.name,
            parent=n.parent_key[1] if n.parent_key else "",
            window=window.handle,
            pid=window.pid,
            label=(names or {}).get(eid, ""),
            shown_role=(roles or {}).get(eid, ""),
        )
        for eid, n in ids.items()
    }
    session.remember(records)


def held_id(ctx: ToolContext, window: WindowInfo, key: tuple[str, str]) -> str | None:
    """The ID a read of ``window`` gave the element with ``key``, if the model holds one."""
    held = ctx.session.elements.items()
    return next((e for e, r in held if r.key == key and r.window == window.handle), None)


def first_held_key(ctx: ToolContext, window: WindowInfo) -> tuple[str, str] | None:
    """The key of the first element of ``window`` a read gave the model an ID for."""
    held = (r.key for r in ctx.session.elements.values() if r.window == window.handle)
    return next(held, None)


def split_cell_ref(element_id: str) -> tuple[str, str | None]:
    """``"2d.jd:B7"`` → ("2d.jd", "B7"): a table's ID and the cell (or range) named after it."""
    eid = normalize(element_id)
    head, sep, rest = eid.partition(":")
    return (head, rest.upper()) if sep else (eid, None)


def lookup(session: Session, element_id: str) -> tuple[str, ElementRecord]:
    """The record behind an ID (for ``<tableID>:B7``, the table's)."""
    eid = split_cell_ref(element_id)[0]
    if not eid:
        raise InvalidArguments("elementID is empty: use an ID shown after '@' by read_screen_ax")
    record = session.elements.get(eid)
    if record is None:
        if not ID_PATTERN.fullmatch(eid):
            raise InvalidArguments(
                f"{element_id!r} is not an element ID: use the text after '@' in a "
                "read_screen_ax line (e.g. '1a.3f')"
            )
        raise ElementGone(eid, "it was not shown by a read_screen_ax in this session")
    return eid, record


async def verify(ctx: ToolContext, window: WindowInfo, element_id: str) -> tuple[str, LiveElement]:
    """The live element behind ``element_id``, checked against its fingerprint and window
    (for ``<tableID>:B7``: the table checked, then its cell B7)."""
    table_id, cell = split_cell_ref(element_id)
    if cell is not None:
        return await verify_cell(ctx, window, table_id, cell)
    eid, record = lookup(ctx.session, element_id)
    if record.window != window.handle and not any(
        w.handle == record.window for w in await ctx.desktop.list_windows()
    ):
        raise ElementGone(eid, "its window has closed")
    if record.window != window.handle:
        raise ToolError(
            f"Element @{eid} belongs to another window ({record.pid}/{record.window}), not "
            f"{window.stable_id}. Pass that window's ID, or read this window again."
        )
    live = await ctx.desktop.inspect(record.key)
    if live is None:
        raise ElementGone(eid, "it no longer exists")
    if live.pid and live.pid != window.pid:
        raise ElementGone(eid, "it now belongs to another app")
    if live.role != record.role:
        raise ElementGone(eid, f"it was a {record.role}, now a {live.role}")
    if live.name != record.name:
        raise ElementGone(eid, f"its name changed from {record.name!r} to {live.name!r}")
    parent = live.parent_key[1] if live.parent_key else ""
    if record.parent and parent and parent != record.parent:
        raise ElementGone(eid, "it moved to another place in the window")
    if "defunct" in live.states:
        raise ElementGone(eid, "it is defunct")
    return eid, live


async def verify_cell(
    ctx: ToolContext, window: WindowInfo, table_id: str, cell: str
) -> tuple[str, LiveElement]:
    """A table's cell named by address (``B7``) or row and column (``R7C2``), live."""
    eid, table = await verify(ctx, window, table_id)
    place = parse_cell(cell)
    if place is None:
        raise InvalidArguments(
            f"{cell!r} after @{eid}: is not a cell: name one by its address (B7) or its row "
            "and column (R7C2)"
        )
    key = await ctx.desktop.cell_at(table.key, *place)
    if key is None:
        raise ToolError(
            f"@{eid} ({table.role} {table.name!r}) has no cell {cell}: it is not a table, or "
            "the cell is outside it. Read the window again."
        )
    live = await ctx.desktop.inspect(key)
    if live is None:
        raise ElementGone(f"{eid}:{cell}", "the table did not give that cell")
    return f"{eid}:{cell}", live
