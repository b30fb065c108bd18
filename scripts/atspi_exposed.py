"""What an app exposes on the accessibility bus, walked apart from deskpilot.

Run with Debian's own ``/usr/bin/python3`` and ``python3-pyatspi`` (not deskpilot's venv, and
none of its code), in the desktop's environment (DISPLAY, DBUS_SESSION_BUS_ADDRESS)::

    /usr/bin/python3 scripts/atspi_exposed.py --pid PID [--title TITLE]

It finds the application by PID and walks its windows (the one titled TITLE when given and
found, else all of them) one call at a time, and prints one JSON object: the toolkit, and per
node its role, name, states, whether it offers actions, and the text it exposes (Text
interface) when it shows. The app probe (scripts/app_probe.py) and the desktop tests of app
kinds (tests/desktop/test_app_kinds.py) compare deskpilot's reads with it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import pyatspi  # type: ignore[import-not-found]

#: Nodes walked at most (a spreadsheet's cells are not walked: see --max).
MAX_NODES = 20000


def states_of(acc: Any) -> list[str]:
    return sorted(pyatspi.stateToString(s) for s in acc.getState().getStates())


def text_of(acc: Any) -> str | None:
    try:
        text = acc.queryText()
    except NotImplementedError:
        return None
    try:
        return str(text.getText(0, text.characterCount)).replace("\ufffc", "")
    except Exception:
        return None


def has_action(acc: Any) -> bool:
    try:
        return int(acc.queryAction().nActions) > 0
    except NotImplementedError:
        return False
    except Exception:
        return False


def walk(frame: Any, limit: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stack = [(frame, 0)]
    while stack and len(out) < limit:
        acc, depth = stack.pop()
        try:
            role, name, states = acc.getRoleName(), acc.name, states_of(acc)
            count = acc.childCount
        except Exception:
            continue  # gone mid-walk
        shows = "visible" in states  # GTK 4 says "showing" of its windows only
        out.append({
            "role": role, "name": name, "states": states, "depth": depth,
            "action": has_action(acc), "text": text_of(acc) if shows else None,
        })  # fmt: skip
        if role == "table" and count > 5000:
            continue  # a spreadsheet's cells: 2^31 - 1 of them
        kids = []
        for i in range(count):
            try:
                kid = acc.getChildAtIndex(i)
            except Exception:
                continue
            if kid is not None:
                kids.append((kid, depth + 1))
        stack.extend(reversed(kids))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--title", default="")
    parser.add_argument("--max", type=int, default=MAX_NODES, help="nodes walked at most")
    args = parser.parse_args(argv)
    for app in pyatspi.Registry.getDesktop(0):
        try:
            if app is None or app.get_process_id() != args.pid:
                continue
            frames = [app.getChildAtIndex(i) for i in range(app.childCount)]
        except Exception:
            continue
        frames = [f for f in frames if f is not None]
        titled = [f for f in frames if args.title and f.name == args.title]
        nodes: list[dict[str, Any]] = []
        for frame in titled or frames:
            nodes.extend(walk(frame, args.max - len(nodes)))
        json.dump({"toolkit": app.get_toolkit_name(), "nodes": nodes}, sys.stdout)
        return 0
    print(f"no accessible application with pid {args.pid}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
