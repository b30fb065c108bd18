"""Every structured tool result matches the outputSchema MCP clients validate it against."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema
import pytest

from deskpilot.config import Settings
from deskpilot.desktop.fake import FAKE_APPS, FakeDesktop
from deskpilot.events import discard
from deskpilot.session import Session
from deskpilot.tools.builtin import computer_use_tools
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
