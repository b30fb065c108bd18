"""The baseline reader: OSWorld's way — a per-node pyatspi walk of one window.

Run with Debian's own ``/usr/bin/python3`` and ``python3-pyatspi`` (not deskpilot's venv), in
the sandbox's environment (DISPLAY, DBUS_SESSION_BUS_ADDRESS)::

    /usr/bin/python3 bench/pyatspi_walk.py --pid PID --title TITLE [--path FRAME] --runs 5

It finds the application by PID and its frame by title (or object path), then walks the
frame's subtree ``--runs`` times, each walk reading every node's role, name, states and
extents (screen coordinates) and its children one call at a time — the calls OSWorld's server
makes per node in ``_create_atspi_node`` (xlang-ai/OSWorld ``desktop_env/server/main.py``),
which additionally reads attributes, text, value, action and interface queries for every node:
this baseline is a lower bound of OSWorld's cost. Only the walk is timed.

After the timed walks (untimed) it reads ``Text.getText`` of every showing+visible node, as
OSWorld's server does for every node, because OSWorld's filter and TSV use it. It prints one
JSON object: toolkit, bus, frame, walk times and the nodes of the last walk in document order
(parent index, depth as in OSWorld's XML where the desktop is depth 0, and whether OSWorld's
MAX_DEPTH=50 / MAX_WIDTH=1024 limits keep the node in its XML).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import pyatspi  # type: ignore[import-not-found]
from pyatspi import StateType

#: OSWorld's server limits (desktop_env/server/main.py): deeper nodes' children and
#: children past this index are not in its XML.
MAX_DEPTH = 50
MAX_WIDTH = 1024
#: OSWorld's scan of a Calc sheet: cells are asked by index row * columns + column, from the
#: sheet's top-left, giving up after this many cells that are not showing.
CALC_GIVE_UP = 500
FRAME_ROLES = {"frame", "window", "dialog", "alert", "file chooser"}


def state_names(acc: Any) -> list[str]:
    """State names the way OSWorld writes them (``STATE_SHOWING`` → ``showing``)."""
    out: list[str] = []
    for st in acc.getState().getStates():
        name = str(StateType._enum_lookup.get(int(st), ""))
        name = name.split("_", maxsplit=1)[1].lower() if "_" in name else ""
        if name:
            out.append(name)
    return out


def read_node(acc: Any) -> tuple[str, str, list[str], list[int] | None]:
    role = acc.getRoleName()
    name = acc.name
    states = state_names(acc)
    extents: list[int] | None = None
    try:
        comp = acc.queryComponent()
    except NotImplementedError:
        comp = None
    if comp is not None:
        box = comp.getExtents(pyatspi.XY_SCREEN)
        extents = [int(box[0]), int(box[1]), int(box[2]), int(box[3])]
    return role, name, states, extents


def walk(frame: Any, frame_depth: int, *, osworld: bool = False) -> list[dict[str, Any]]:
    """One pre-order walk: one call per property per node, children one at a time.

    With ``osworld``, children are enumerated the way OSWorld's server does it: at most
    MAX_WIDTH per node, and a Calc sheet (a ``table`` inside a ``document spreadsheet``,
    which reports 2^31 - 1 children) by asking its cells one index at a time, row by row,
    keeping the SHOWING ones (``_create_atspi_node``'s "calc" branch, re-stated here).
    """
    nodes: list[dict[str, Any]] = []

    def visit(acc: Any, parent: int, depth: int, index: int, kept: bool, calc: bool) -> None:
        try:
            role, name, states, extents = read_node(acc)
            count = acc.childCount
        except Exception:  # the node vanished mid-walk (defunct): skip it
            return
        kept = kept and depth <= MAX_DEPTH and index < MAX_WIDTH
        me = len(nodes)
        nodes.append(
            {
                "acc": acc,
                "path": str(acc.path),
                "role": role,
                "name": name,
                "states": states,
                "extents": extents,
                "parent": parent,
                "depth": depth,
                "osworld": kept,
            }
        )
        calc = calc or role == "document spreadsheet"
        if osworld and calc and role == "table":
            for i, child in sheet_cells(acc):
                visit(child, me, depth + 1, i, kept and depth < MAX_DEPTH, calc)
            return
        for i in range(min(count, MAX_WIDTH) if osworld else count):
            try:
                child = acc.getChildAtIndex(i)
            except Exception:
                continue
            if child is not None:
                visit(child, me, depth + 1, i, kept and depth < MAX_DEPTH, calc)

    visit(frame, -1, frame_depth, 0, True, False)
    return nodes


def sheet_cells(table: Any, columns: int = 16384) -> list[tuple[int, Any]]:
    """The showing cells of a Calc sheet as OSWorld finds them (LibreOffice >= 7.4 has 16,384
    columns): row by row from the top-left, each row from the first showing column until a
    cell is not showing; CALC_GIVE_UP cells without a showing one end a row (or the scan)."""
    out: list[tuple[int, Any]] = []
    first: int | None = None
    for row in range(1_048_576):
        base = row * columns
        col = first or 0
        while col < columns:
            cell = table.getChildAtIndex(base + col)
            showing = cell is not None and cell.getState().contains(pyatspi.STATE_SHOWING)
            if showing:
                first = col if first is None else first
                out.append((base + col, cell))
            elif first is not None or col >= CALC_GIVE_UP:
                break
            col += 1
        if (first is not None and col == first) or (first is None and row >= CALC_GIVE_UP):
            break
    return out


def read_text(acc: Any) -> str | None:
    try:
        text = acc.queryText()
    except NotImplementedError:
        return None
    try:
        got = text.getText(0, text.characterCount)
    except Exception:
        return None
    return str(got).replace("\ufffc", "").replace("\ufffd", "")


def find_frame(pid: int, title: str, path: str | None) -> tuple[Any, Any]:
    desktop = pyatspi.Registry.getDesktop(0)
    candidates: list[tuple[int, Any, Any]] = []
    for app in desktop:
        if app is None:
            continue
        try:
            if app.get_process_id() != pid:
                continue
            frames = [app.getChildAtIndex(i) for i in range(app.childCount)]
        except Exception:
            continue
        for fr in frames:
            if fr is None:
                continue
            score = 0
            if path and str(fr.path) == path:
                score += 8
            if fr.name == title:
                score += 4
            elif fr.name and title and (fr.name in title or title in fr.name):
                score += 2
            if fr.getRoleName() in FRAME_ROLES:
                score += 1
            candidates.append((score, app, fr))
    if not candidates:
        raise SystemExit(f"no accessible application with pid {pid}")
    score, app, frame = max(candidates, key=lambda c: c[0])
    if score < 2:
        raise SystemExit(f"no frame titled {title!r} in the application of pid {pid}")
    return app, frame


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--title", required=True)
    parser.add_argument("--path", default=None, help="the frame's object path, if known")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--osworld",
        action="store_true",
        help="enumerate children as OSWorld does (MAX_WIDTH per node; Calc sheets cell by cell)",
    )
    args = parser.parse_args(argv)

    app, frame = find_frame(args.pid, args.title, args.path)
    times: list[float] = []
    nodes: list[dict[str, Any]] = []
    for _ in range(max(1, args.runs)):
        start = time.perf_counter()
        nodes = walk(
            frame, 2, osworld=args.osworld
        )  # OSWorld's XML: desktop (0) > application (1) > frame (2)
        times.append((time.perf_counter() - start) * 1000)
    for node in nodes:
        acc = node.pop("acc")
        states = node["states"]
        node["text"] = read_text(acc) if "showing" in states and "visible" in states else None
    json.dump(
        {
            "toolkit": app.get_toolkit_name(),
            "toolkit_version": app.get_toolkit_version(),
            "bus": str(frame.app.bus_name),
            "frame": str(frame.path),
            "frame_name": frame.name,
            "walk_ms": times,
            "nodes": nodes,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
