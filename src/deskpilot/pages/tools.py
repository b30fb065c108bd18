"""The page tools (seed 002): inspect the agent browser's tab, try CSS/JS live in TEMP panes,
save rules to the library — each save with its own confirmation.

They are ordinary deskpilot tools: called through ``ToolSet.call`` like the nine, so policy,
confirmation, the audit log, chips, MCP and the text protocol apply to them unchanged.

The tools that look are in :mod:`~deskpilot.pages.query_tools`, the TEMP panes in
:mod:`~deskpilot.pages.pane_tools`, the tools that save in :mod:`~deskpilot.pages.save_tools`,
userscripts' menu commands in :mod:`~deskpilot.pages.menu_tools`.
"""

from __future__ import annotations

from deskpilot.pages.menu_tools import list_menu_commands, run_menu_command
from deskpilot.pages.pane_tools import close_temp_pane, open_temp_pane, set_temp_pane_code
from deskpilot.pages.query_tools import list_structure, query_page
from deskpilot.pages.save_tools import create_folder, create_group, create_rule
from deskpilot.tools.base import ToolSpec

PAGE_TOOLS: tuple[ToolSpec, ...] = (
    query_page,
    list_structure,
    open_temp_pane,
    set_temp_pane_code,
    close_temp_pane,
    create_folder,
    create_group,
    create_rule,
    list_menu_commands,
    run_menu_command,
)
PAGE_TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in PAGE_TOOLS)
