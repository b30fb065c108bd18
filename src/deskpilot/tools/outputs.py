"""The shape of each tool's structured result (``ToolResult.data``), as pydantic models.

The text a model reads stays the result's first content; ``data`` is the same result for
programs (``deskpilot tool --json``, MCP ``structuredContent``). The models here are what
clients may rely on: MCP serves :func:`output_schema` as each tool's ``outputSchema`` and
sends ``data`` as ``structuredContent`` (checked against the model first).

Objects allow extra fields (a tool may add one without breaking a client that validates);
the declared ones are required unless they have a default. Every tool whose result carries
data has a model (the page tools too); the tools whose result is only text (``perform``,
``wait``) have none and send text only.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deskpilot.tools.base import ToolResult, ToolSpec

log = logging.getLogger(__name__)

Geometry = list[int]


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Window(_Out):
    app: str = Field(description="The app's name.")
    app_id: str = Field(description="The app's id (desktop-file id, else WM_CLASS).")
    title: str = Field(description="The window title ('' when the app is blocked).")
    window_id: str = Field(description="pid/title form of the window ID.")
    stable_window_id: str = Field(description="pid/windowNumber: the ID to pass as windowID.")
    pid: int
    active: bool
    minimized: bool
    blocked: bool = Field(description="On the blocked apps list: not read or controlled.")
    geometry: Geometry = Field(description="[x, y, width, height] in screen pixels.")


class WindowList(_Out):
    windows: list[Window]


class OpenedApp(_Out):
    window: Window = Field(description="The tracked target window now.")
    launched: bool = Field(description="False when the app was already running.")


class OpenedUrls(_Out):
    window: Window = Field(description="The browser window, now the tracked target.")
    new_window: bool | None = Field(
        None, description="True: a new window was opened; false: tabs in an open window."
    )
    tabs: int | None = Field(None, description="How many tabs were opened.")


class Element(_Out):
    id: str | None = Field(description="Element ID for perform (null: not actionable).")
    role: str
    name: str
    states: list[str]
    bounds: Geometry | None = Field(description="[x, y, width, height], null when unknown.")
    text: str | None
    value: str | None


class ScreenRead(_Out):
    window: str = Field(description="Stable window ID of the window read.")
    partial: bool = Field(description="Some parts did not answer: read again in a moment.")
    problems: list[str]
    elapsed_ms: float
    nodes: list[Element] = Field(description="The elements shown in the text, with their IDs.")


class Screenshot(_Out):
    window: str = Field(description="Stable window ID of the captured window.")
    width: int
    height: int
    covers: list[int] = Field(
        description="The screen area the image shows: [x, y, width, height] in root pixels."
    )


class SequenceRan(_Out):
    ran: int = Field(description="How many steps ran.")


class Scrolled(_Out):
    moved: bool = Field(description="Whether the content moved.")
    steps: int = Field(description="Wheel steps sent.")


class TaskOutcome(_Out):
    outcome: str
    reason: str
    steps: int
    run_id: str


# -- the page tools (deskpilot.pages.tools) ---------------------------------------------------


class Match(_Out):
    i: int = Field(description="Its place among the matches, from 1.")
    html: str = Field(description="Its outer HTML (script/style bodies and data: URLs elided).")
    truncated: bool = Field(description="The HTML was cut (see chars).")
    chars: int = Field(description="The length of its whole outer HTML.")


class PageQuery(_Out):
    url: str = Field(description="The page the selector ran on.")
    selector: str
    count: int = Field(description="How many elements match (all of them, not only shown).")
    shown: int = Field(description="How many matches are in matches.")
    matches: list[Match]


class Scoped(BaseModel):
    """What every entry of the rule library has (a base of its own, not of _Out: no class
    chain of more than two project classes)."""

    model_config = ConfigDict(extra="allow")
    id: str
    name: str
    enabled: bool
    include: list[str] = Field(description="URL patterns it applies to ([]: everywhere).")
    exclude: list[str] = Field(description="URL patterns it never applies to.")


class RuleEntry(Scoped):
    run_at: str
    frames: str
    css_chars: int = Field(description="Size of its CSS (the code is not listed).")
    js_chars: int = Field(description="Size of its JS (the code is not listed).")


class GroupEntry(Scoped):
    rules: list[RuleEntry]


class FolderEntry(Scoped):
    label: str | None = Field(description="Up to 3 letters, or null.")
    groups: list[GroupEntry]


class RuleLibrary(_Out):
    folders: list[FolderEntry]


class PaneOpened(_Out):
    pane_id: str = Field(description="The pane id to pass to set/close_temp_pane.")
    kind: str = Field(description="css or js.")
    tab: int
    url: str
    already_open: bool


class PaneSet(_Out):
    ok: bool
    applied: bool | None = Field(None, description="CSS pane: the code is applied.")
    rules_parsed: int | None = Field(None, description="CSS pane: how many CSS rules parsed.")
    result: str | None = Field(None, description="JS pane: the value the code returned.")
    type: str | None = Field(None, description="JS pane: the type of that value.")


class Done(_Out):
    ok: bool


class Saved(_Out):
    ok: bool
    id: str = Field(description="The id of what was saved (f_…, g_…, r_…).")
    note: str | None = Field(None, description="Where the saved rule applies now.")


class MenuCommand(_Out):
    tab: int
    frame: int | None = None
    url: str | None = None
    rule: str | None = Field(None, description="The userscript's rule id (r_…).")
    script: str | None = None
    key: str | None = None
    caption: str


class MenuCommands(_Out):
    commands: list[MenuCommand]


OUTPUTS: dict[str, type[BaseModel]] = {
    "list_windows": WindowList,
    "open_app": OpenedApp,
    "open_urls": OpenedUrls,
    "read_screen_ax": ScreenRead,
    "computer_use_screenshot": Screenshot,
    "perform_sequence": SequenceRan,
    "scroll": Scrolled,
    "computer_use_task": TaskOutcome,
    "query_page": PageQuery,
    "list_structure": RuleLibrary,
    "open_temp_pane": PaneOpened,
    "set_temp_pane_code": PaneSet,
    "close_temp_pane": Done,
    "create_folder": Saved,
    "create_group": Saved,
    "create_rule": Saved,
    "list_menu_commands": MenuCommands,
    "run_menu_command": Done,
}


def output_model(spec: ToolSpec) -> type[BaseModel] | None:
    return OUTPUTS.get(spec.name)


def output_schema(spec: ToolSpec) -> dict[str, Any] | None:
    """The JSON schema of the tool's structured result, or None when it has none."""
    model = output_model(spec)
    if model is None:
        return None
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    inlined: dict[str, Any] = _inline(schema, defs)
    return inlined


def structured(spec: ToolSpec, result: ToolResult) -> dict[str, Any] | None:
    """``result.data`` for a tool with an output model, checked against it; else None.

    Error results carry none (clients validate successful results only)."""
    model = output_model(spec)
    if model is None or result.is_error or result.data is None:
        return None
    try:
        checked: dict[str, Any] = model.model_validate(result.data).model_dump(
            mode="json", exclude_unset=True
        )
        return checked
    except ValidationError as exc:  # a tool drifted from its declared shape: a bug
        log.error("%s returned data that does not match its output schema: %s", spec.name, exc)
        return dict(result.data)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Replace ``$ref``s into ``$defs`` by the definitions (some clients cannot resolve refs)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = dict(defs[ref.split("/")[-1]])
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **rest}, defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(x, defs) for x in node]
    return node
