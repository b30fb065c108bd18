"""deskpilot: a computer-use agent for Linux desktops (AT-SPI trees, element IDs, safe actions).

The public surface, for embedding deskpilot in Python programs::

    from deskpilot import Sandbox, load_settings, computer_use_tools, open_session

    async with open_session(load_settings(), surface="python") as ctx:
        print((await computer_use_tools().call("list_windows", {}, ctx)).text)

``open_session`` is the one way to a working context: it attaches the audit log and the
approver you pass (without one, whatever needs a person's yes is declined).
"""

from __future__ import annotations

from deskpilot.config import Settings, load_settings
from deskpilot.desktop.base import Desktop, Node, Snapshot, WindowInfo
from deskpilot.errors import DeskpilotError, ToolError
from deskpilot.policy import AllowAll, ApprovalRequest, Approver, CallbackApprover, Risk
from deskpilot.runtime import open_desktop, open_session
from deskpilot.sandbox import Sandbox
from deskpilot.tools.base import ToolResult, ToolSpec, tool
from deskpilot.tools.builtin import computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

__all__ = [
    "AllowAll",
    "ApprovalRequest",
    "Approver",
    "CallbackApprover",
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
    "open_session",
    "tool",
]
