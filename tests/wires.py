"""Vendors' computer-use wires by name, for tests: the adapters' own viewports and wires, and
the vendors' replies as their APIs send them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deskpilot.agent.providers.registry import ADAPTERS
from deskpilot.native.scaling import Viewport
from deskpilot.native.wire import ComputerWire, WireSetup

#: the vendors with a native computer tool
VENDORS = tuple(name for name, adapter in ADAPTERS.items() if not adapter.no_computer_tool)


def viewport_for(vendor: str, width: int, height: int) -> Viewport:
    """The viewport ``vendor``'s models get for a target of width×height pixels."""
    return ADAPTERS[vendor]("any").computer_viewport(width, height)


def computer_wire(vendor: str, model: str, viewport: Viewport, **options: Any) -> ComputerWire:
    """A computer-use conversation in ``vendor``'s wire format with ``model``."""
    return ADAPTERS[vendor](model).computer_wire(WireSetup(model, viewport, **options))


def anthropic_message(
    *content: dict[str, Any], n: int = 1, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    """An Anthropic Messages reply of ``content`` blocks; it stops for tool use when a block is
    a ``tool_use``."""
    stop = "tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn"
    reply = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "content": list(content),
        "stop_reason": stop,
    }
    return reply if usage is None else {**reply, "usage": usage}


def openai_computer_reply(
    actions: list[dict[str, Any]],
    checks: Sequence[dict[str, Any]] = (),
    *more: dict[str, Any],
    n: int = 1,
) -> dict[str, Any]:
    """An OpenAI Responses reply with the computer tool (GA): its reasoning, one computer call
    of ``actions`` with pending safety ``checks``, then the ``more`` output items."""
    call = {
        "type": "computer_call",
        "id": f"cu_{n}",
        "call_id": f"call_{n}",
        "status": "completed",
        "actions": actions,
        "pending_safety_checks": list(checks),
    }
    return {
        "id": f"resp_{n}",
        "output": [{"type": "reasoning", "id": f"rs_{n}", "summary": []}, call, *more],
    }
