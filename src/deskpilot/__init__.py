"""deskpilot: a computer-use agent for Linux desktops (AT-SPI trees, element IDs, safe actions).

The public surface, for embedding deskpilot in Python programs::

    from deskpilot import Sandbox, load_settings, computer_use_tools, tool_context
"""

from __future__ import annotations

from deskpilot.config import Settings, load_settings
from deskpilot.desktop.base import Desktop, Node, Snapshot, WindowInfo
from deskpilot.errors import DeskpilotError, ToolError
from deskpilot.policy import Approver, Risk
from deskpilot.runtime import open_desktop, tool_context
from deskpilot.sandbox import Sandbox
from deskpilot.tools.base import ToolResult, ToolSpec, tool
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

__all__ = [
    "Approver",
    "DeskpilotError",
    "Desktop",
    "Node",
    "Risk",
    "Sandbox",
    "Settings",
    "Snapshot",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "WindowInfo",
    "computer_use_tools",
    "load_settings",
    "open_desktop",
    "tool",
    "tool_context",
]
