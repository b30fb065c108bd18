"""Recorded events as the console's chips: plain data, sized for a page, no images.

The page renders every field with ``textContent`` (never as HTML). Long texts are cut here
(the audit log keeps them whole); images are left out (a tool's screenshots are in the audit
log and in the replay); arguments stay as data and are also given as JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from deskpilot.events import Event

#: Characters of a result's text kept for the chip's expanded view.
TEXT_LIMIT = 4000


def clip(text: object, limit: int) -> str:
    value = "" if text is None else str(text)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def chip_data(event: Event) -> dict[str, Any]:
    """The page's view of one event: its kind, run, time and data (texts cut)."""
    data: dict[str, Any] = {}
    for key, value in event.data.items():
        if key in ("text", "answer"):
            data[key] = clip(value, TEXT_LIMIT)
        elif key == "args":
            data[key] = value
            data["args_json"] = clip(json.dumps(value, ensure_ascii=False, default=str), 2000)
        elif isinstance(value, str | int | float | bool) or value is None:
            data[key] = clip(value, 2000) if isinstance(value, str) else value
        else:
            data[key] = json.loads(json.dumps(value, default=str))
    if event.images:
        data["images"] = len(event.images)
    return {"event": event.kind, "run_id": event.run_id, "ts": event.ts, "data": data}
