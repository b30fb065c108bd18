"""An AT-SPI reader for checkers that is not deskpilot's: pyatspi under Debian's python3.

Run as a script by :mod:`deskpilot.eval.atspi_check` with the sandbox's environment::

    /usr/bin/python3 atspi_probe.py APP_REGEX [MAX_NODES]

It walks, one pyatspi call at a time, every application whose name matches ``APP_REGEX``
(case-insensitive) and prints one JSON object: ``{"apps": [{"name", "pid", "nodes": [...]}]}``
with, per node, ``role``, ``name``, ``states``, ``depth``, ``text`` (Text interface) and
``value`` (Value interface). It imports nothing from deskpilot, so a check on its output never
shares a bug with the snapshot engine the agent reads through.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any


def _states(acc: Any, state_type: Any) -> list[str]:
    out = []
    for st in acc.getState().getStates():
        label = str(state_type._enum_lookup.get(int(st), ""))
        if label.startswith("STATE_"):
            out.append(label[len("STATE_") :].lower().replace("_", "-"))
    return out


def _text(acc: Any) -> str | None:
    try:
        iface = acc.queryText()
    except NotImplementedError:
        return None
    try:
        return str(iface.getText(0, iface.characterCount))
    except Exception:
        return None


def _value(acc: Any) -> float | None:
    try:
        return float(acc.queryValue().currentValue)
    except Exception:
        return None


def walk(app: Any, state_type: Any, limit: int) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    stack = [(app, 0)]
    while stack and len(nodes) < limit:
        acc, depth = stack.pop()
        try:
            entry = {
                "role": acc.getRoleName(),
                "name": acc.name or "",
                "states": _states(acc, state_type),
                "depth": depth,
            }
            count = acc.childCount
        except Exception:  # a node that went away mid-walk
            continue
        # a huge table (a spreadsheet's cells) is not walked past its visible rows
        manages = "manages-descendants" in entry["states"]
        entry["text"] = _text(acc)
        entry["value"] = _value(acc)
        nodes.append(entry)
        children = []
        for i in range(min(count, 200 if manages else 5000)):
            try:
                child = acc.getChildAtIndex(i)
            except Exception:
                continue
            if child is not None:
                children.append((child, depth + 1))
        stack.extend(reversed(children))
    return nodes


def main(argv: list[str]) -> int:
    import pyatspi  # type: ignore[import-not-found]

    pattern = re.compile(argv[1], re.I)
    limit = int(argv[2]) if len(argv) > 2 else 20000
    apps = []
    for app in pyatspi.Registry.getDesktop(0):
        if app is None:
            continue
        try:
            name, pid = app.name or "", app.get_process_id()
        except Exception:
            continue
        if not pattern.search(name):
            continue
        apps.append({"name": name, "pid": pid, "nodes": walk(app, pyatspi.StateType, limit)})
    json.dump({"apps": apps}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
