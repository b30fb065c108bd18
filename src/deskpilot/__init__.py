"""deskpilot: a computer-use agent for Linux desktops (AT-SPI trees, element IDs, safe actions).

The public surface, for embedding deskpilot in Python programs::

    from deskpilot import Sandbox, load_settings, computer_use_tools, open_session

    async with open_session(load_settings(), surface="python") as ctx:
        print((await computer_use_tools().call("list_windows", {}, ctx)).text)

``open_session`` is the one way to a working context: it attaches the audit log and the
approver you pass (without one, whatever needs a person's yes is declined).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskpilot._lazy import exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each is imported on first use
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

_WHERE = {
    "AllowAll": "deskpilot.policy",
    "ApprovalRequest": "deskpilot.policy",
    "Approver": "deskpilot.policy",
    "CallbackApprover": "deskpilot.policy",
    "DeskpilotError": "deskpilot.errors",
    "Desktop": "deskpilot.desktop.base",
    "Node": "deskpilot.desktop.base",
    "Risk": "deskpilot.policy",
    "Sandbox": "deskpilot.sandbox",
    "Settings": "deskpilot.config",
    "Snapshot": "deskpilot.desktop.base",
    "ToolContext": "deskpilot.tools.context",
    "ToolError": "deskpilot.errors",
    "ToolResult": "deskpilot.tools.base",
    "ToolSet": "deskpilot.tools.toolset",
    "ToolSpec": "deskpilot.tools.base",
    "WindowInfo": "deskpilot.desktop.base",
    "computer_use_tools": "deskpilot.tools.builtin",
    "load_settings": "deskpilot.config",
    "open_desktop": "deskpilot.runtime",
    "open_session": "deskpilot.runtime",
    "tool": "deskpilot.tools.base",
}
__getattr__, __dir__ = exports(__name__, _WHERE)

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
