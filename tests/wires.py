"""Vendors' computer-use wires by name, for tests: the adapters' own viewports and wires."""

from __future__ import annotations

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
