"""What a session card says: its state, a one-line status from its events, how it ended.

Pure functions over :class:`~deskpilot.events.Event` data, shared by the console's sessions
(:mod:`deskpilot.serve.sessions`) and its MCP cards (:mod:`deskpilot.serve.mcp_host`).

States: ``starting`` → ``running`` (``waiting`` while a confirmation is open, ``taken_over``
while a person drives its desktop) → one of the end states; a continued session runs again.
The runtime's outcomes map to three endings:

==================  ==================
runtime outcome     card
==================  ==================
``done``            Done
``needs_attention`` Needs attention
``stopped``         Stopped
anything else       Needs attention
==================  ==================
"""

from __future__ import annotations

from typing import Any, Literal

State = Literal[
    "starting", "running", "waiting", "taken_over", "stopping", "done", "needs_attention", "stopped"
]
END_STATES: frozenset[str] = frozenset({"done", "needs_attention", "stopped"})

LABELS: dict[str, str] = {
    "starting": "Starting",
    "running": "Running",
    "waiting": "Waiting for your approval",
    "taken_over": "You have the controls",
    "stopping": "Stopping",
    "done": "Done",
    "needs_attention": "Needs attention",
    "stopped": "Stopped",
}

#: What a session is doing while one of its tools runs.
DOING: dict[str, str] = {
    "list_windows": "Listing windows",
    "open_app": "Opening an app",
    "open_urls": "Opening a page",
    "read_screen_ax": "Reading AX",
    "perform": "Resolving target",
    "perform_sequence": "Resolving target",
    "scroll": "Scrolling",
    "wait": "Waiting",
    "computer_use_screenshot": "Taking a screenshot",
    "computer": "Acting on pixels",
}


def end_state(outcome: object) -> State:
    """The card's end state for a runtime outcome (unknown ones need attention)."""
    if outcome == "done":
        return "done"
    if outcome == "stopped":
        return "stopped"
    return "needs_attention"


def status_line(kind: str, data: dict[str, Any]) -> str | None:
    """The status an event gives a card ("Reading AX", "Last: perform → …"), or None."""
    tool = str(data.get("tool") or "")
    if kind == "run.started":
        return "Thinking"
    if kind == "tool.call":
        return DOING.get(tool, f"Running {tool}")
    if kind == "confirm.asked":
        return f"Waiting for your approval: {tool}"
    if kind == "tool.result":
        summary = str(data.get("summary") or "").strip()
        mark = "" if data.get("ok") else " (failed)"
        line = f"Last: {tool}{mark}" + (f" → {summary}" if summary else "")
        return line[:160]
    if kind == "model.text":
        return "Thinking"
    if kind == "user.message":
        return "Reading your message"
    if kind == "takeover.ended":
        return "Handed back: reading your note"
    return None
