"""The nine computer-use tools, as one ToolSet."""

from __future__ import annotations

from deskpilot.tools.act import perform, perform_sequence, scroll, wait
from deskpilot.tools.screen import computer_use_screenshot, read_screen_ax
from deskpilot.tools.toolset import ToolSet
from deskpilot.tools.windows import list_windows, open_app, open_urls

NINE_TOOLS = (
    list_windows,
    open_app,
    read_screen_ax,
    perform,
    perform_sequence,
    scroll,
    wait,
    computer_use_screenshot,
    open_urls,
)
#: their names, in the order the seed lists them (the subagent's tools: agent/task.py)
NINE_TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in NINE_TOOLS)


def computer_use_tools() -> ToolSet:
    """A fresh ToolSet with the nine computer-use tools."""
    return ToolSet(NINE_TOOLS)


def page_tools() -> ToolSet:
    """The page tools: query_page, TEMP panes, the rule library."""
    from deskpilot.pages.tools import PAGE_TOOLS

    return ToolSet(PAGE_TOOLS)


def all_tools() -> ToolSet:
    """The nine computer-use tools and the page tools, as ``deskpilot tools`` lists them."""
    from deskpilot.pages.tools import PAGE_TOOLS

    return ToolSet((*NINE_TOOLS, *PAGE_TOOLS))
