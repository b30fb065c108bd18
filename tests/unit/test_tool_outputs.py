"""Every structured tool result matches the outputSchema MCP clients validate it against."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema
import pytest

from deskpilot.config import Settings
from deskpilot.desktop.fake import FAKE_APPS, FakeDesktop
from deskpilot.events import discard
from deskpilot.pages.patterns import parse_patterns
from deskpilot.pages.store import open_library
from deskpilot.pages.tools import PAGE_TOOL_NAMES
from deskpilot.pages.tree import structure
from deskpilot.session import Session
from deskpilot.tools.base import ToolResult
from deskpilot.tools.builtin import all_tools, computer_use_tools
from deskpilot.tools.context import ToolContext
from deskpilot.tools.outputs import OUTPUTS, output_schema, structured

TOOLS = computer_use_tools()
CALCULATOR = FAKE_APPS[0]


def run(ctx: ToolContext, name: str, args: dict[str, Any]) -> Any:
    return asyncio.run(TOOLS.call(name, args, ctx))


def test_the_tools_with_structure_declare_it() -> None:
    declared = {s.name for s in TOOLS.list() if output_schema(s) is not None}
    assert declared == {n for n in OUTPUTS if n in TOOLS}
    assert {"list_windows", "read_screen_ax", "computer_use_screenshot"} <= declared
    for spec in TOOLS.list():
        schema = output_schema(spec)
        if schema is not None:
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object" and "$ref" not in str(schema)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("list_windows", {}),
        ("open_app", {"bundleId": "Calculator"}),
        ("read_screen_ax", {}),
        ("computer_use_screenshot", {}),
        ("scroll", {"milliseconds": 500}),
        ("perform_sequence", {"steps": [{"action": "type", "text": "1"}]}),
        ("open_urls", {"urls": ["https://example.org/"]}),
    ],
)
def test_structured_results_validate_against_the_schema(
    settings: Settings, tool: str, args: dict[str, Any]
) -> None:
    desktop = FakeDesktop()
    window = desktop.add_window(CALCULATOR)
    ctx = ToolContext(desktop=desktop, settings=settings, audit=discard, session=Session())
    ctx.session.track(window.stable_id)
    result = run(ctx, tool, args)
    assert not result.is_error, result.text
    spec = TOOLS.get(tool)
    data = structured(spec, result)
    assert data is not None
    jsonschema.validate(data, output_schema(spec))


def test_errors_and_plain_tools_carry_no_structure(settings: Settings) -> None:
    ctx = ToolContext(desktop=FakeDesktop(), settings=settings, audit=discard, session=Session())
    failed = run(ctx, "read_screen_ax", {"windowID": "1/2"})
    assert failed.is_error
    assert structured(TOOLS.get("read_screen_ax"), failed) is None
    waited = run(ctx, "wait", {"seconds": 0.01})
    assert structured(TOOLS.get("wait"), waited) is None
    assert output_schema(TOOLS.get("wait")) is None


def test_every_tool_with_a_structured_result_declares_it() -> None:
    """Only the tools whose result is text alone go without an outputSchema (a new tool with
    data must get a model in deskpilot.tools.outputs)."""
    every = all_tools()
    assert {s.name for s in every.list() if output_schema(s) is None} == {"perform", "wait"}
    for name in PAGE_TOOL_NAMES:
        schema = output_schema(every.get(name))
        assert schema is not None
        jsonschema.Draft202012Validator.check_schema(schema)


def test_the_rule_library_listing_validates(settings: Settings) -> None:
    with open_library(settings) as lib:
        folder = lib.create_folder(
            "Site", label="S", include=parse_patterns(["https://a.test/*"], "include")
        )
        group = lib.create_group(folder.id, "Articles")
        lib.create_group(folder.id, "Empty")
        lib.create_rule(group.id, "Collapse", css="a{}", js="return 1;", origin="model")
        data = structure(lib.tree())
    spec = all_tools().get("list_structure")
    result = ToolResult("", data=data)
    checked = structured(spec, result)
    assert checked == data
    jsonschema.validate(checked, output_schema(spec))
    # a PaneSet keeps only the fields the pane gave (no nulls for the other kind's fields)
    pane = structured(
        all_tools().get("set_temp_pane_code"),
        ToolResult("", data={"ok": True, "applied": True, "rules_parsed": 2}),
    )
    assert pane == {"ok": True, "applied": True, "rules_parsed": 2}
