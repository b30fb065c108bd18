"""How a tool declares what a call reaches: a ``reach`` hook returning a
:class:`~deskpilot.policy.reach.Reach` (the data lives with the policy that judges it).

A tool that declares nothing gets the default (:func:`deskpilot.tools.gate.default_reach`); a
tool that touches no window at all says so with ``reach=NOTHING``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from deskpilot.policy.reach import Activation, Keys, Point, Reach

if TYPE_CHECKING:
    from deskpilot.tools.context import ToolContext

__all__ = ["NOTHING", "Activation", "Keys", "Point", "Reach", "ReachHook"]

ReachHook = Callable[["ToolContext", Mapping[str, Any]], Awaitable[Reach]]


async def _nothing(ctx: ToolContext, values: Mapping[str, Any]) -> Reach:
    return Reach()


#: For tools that touch no window (wait, list_windows, a subagent whose own calls pass the door).
NOTHING: ReachHook = _nothing
