"""Vendor translators: each vendor's wire JSON ↔ the action model, both ways."""

from __future__ import annotations

import base64
import json

import pytest

from deskpilot.agent.providers.anthropic import (
    TOOLSET,
    V20250124,
    V20251124,
    AnthropicComputer,
    version_for_model,
)
from deskpilot.agent.providers.gemini import GeminiComputer, GeminiProvider
from deskpilot.agent.providers.openai import OpenAIComputer
from deskpilot.native.actions import (
    Click,
    CursorPosition,
    Drag,
    HoldKey,
    KeyDown,
    KeyPress,
    KeyUp,
    Move,
    Screenshot,
    Scroll,
    TypeText,
    Wait,
    Zoom,
)
from deskpilot.native.calls import (
    CallError,
    ComputerCall,
    ComputerResult,
    FunctionCall,
    FunctionResult,
    SafetyCheck,
    ScreenshotRef,
)
from deskpilot.native.wire import WireSetup
from deskpilot.policy import Risk
from deskpilot.tools.base import ToolResult, tool
from deskpilot.tools.context import ToolContext
from tests.wires import computer_wire, openai_computer_reply, viewport_for

PNG = b"\x89PNG-shot"
SHOT = ScreenshotRef(data=PNG)
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


# -- OpenAI ------------------------------------------------------------------------------------


def test_openai_ga_batches_are_scaled_and_parsed_in_order() -> None:
    conv = OpenAIComputer(WireSetup("gpt-5.5", viewport_for("openai", 3840, 2160)))  # factor 2
    assert conv.tools() == [{"type": "computer"}]
    first = conv.say("do it", PNG)
    assert first["input"][0]["content"][1] == {"type": "input_image", "image_url": DATA_URL}
    turn = conv.parse(
        openai_computer_reply(
            [
                {"type": "click", "button": "left", "x": 405, "y": 157, "keys": ["shift"]},
                {"type": "double_click", "x": 0, "y": 0},
                {"type": "click", "button": "wheel", "x": 1, "y": 1},
                {"type": "type", "text": "penguin"},
                {"type": "keypress", "keys": ["ctrl", "c"]},
                {"type": "scroll", "x": 10, "y": 10, "scroll_x": 0, "scroll_y": -300},
                {"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 9, "y": 9}]},
                {"type": "move", "x": 5, "y": 6},
                {"type": "wait"},
                {"type": "screenshot"},
            ],
            [{"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check it."}],
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_2",
                "name": "list_windows",
                "arguments": "{}",
            },
            {"type": "message", "content": [{"type": "output_text", "text": "Working."}]},
        )
    )
    call, func = turn.items
    assert isinstance(call, ComputerCall) and call.problem is None
    assert (call.id, call.call_id) == ("cu_1", "call_1")
    assert call.actions == (
        Click(811, 315, modifiers=("Shift_L",)),
        Click(1, 1, count=2),
        Click(3, 3, button="middle"),
        TypeText("penguin"),
        KeyPress(("Control_L", "c")),
        Scroll(21, 21, 0, -6),
        Drag(((3, 3), (19, 19))),
        Move(11, 13),
        Wait(1.0),
        Screenshot(),
    )
    assert call.pending_safety_checks == (
        SafetyCheck("cu_sc_1", "malicious_instructions", "Check it."),
    )
    assert func == FunctionCall("call_2", "list_windows", {}, id="fc_1")
    assert turn.text == "Working."

    body = conv.reply(
        [
            ComputerResult("call_1", SHOT, call.pending_safety_checks),
            FunctionResult("call_2", "Open Windows (0 total):"),
        ]
    )
    assert body["previous_response_id"] == "resp_1"
    assert body["input"] == [
        {
            "type": "computer_call_output",
            "call_id": "call_1",
            "output": {"type": "computer_screenshot", "image_url": DATA_URL},
            "acknowledged_safety_checks": [
                {"id": "cu_sc_1", "code": "malicious_instructions", "message": "Check it."}
            ],
        },
        {"type": "function_call_output", "call_id": "call_2", "output": "Open Windows (0 total):"},
    ]


def test_openai_preview_declares_its_display_and_takes_one_action() -> None:
    conv = OpenAIComputer(WireSetup("computer-use-preview", viewport_for("openai", 1280, 800)))
    assert conv.tools()[0] == {
        "type": "computer_use_preview",
        "display_width": 1280,
        "display_height": 800,
        "environment": "linux",
    }
    assert conv.say("go", None)["truncation"] == "auto"
    turn = conv.parse(
        {
            "id": "r",
            "output": [
                {
                    "type": "computer_call",
                    "id": "cu_2",
                    "call_id": "call_9",
                    "action": {"type": "click", "button": "right", "x": 135, "y": 193},
                }
            ],
        }
    )
    assert turn.items[0].actions == (Click(135, 193, button="right"),)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("action", "phrase"),
    [
        ({"type": "click", "button": "left", "x": 1280, "y": 1}, "outside the screenshot"),
        ({"type": "teleport"}, "unknown computer action type 'teleport'"),
        ({"type": "keypress", "keys": ["hyperdrive"]}, "unknown key"),
        ({"type": "click", "button": "left", "x": "1", "y": 1}, "must be integers"),
        ({"type": "click", "button": "left", "x": 1, "y": True}, "must be integers"),
        ({"type": "scroll", "x": 5, "y": 5, "scroll_y": "abc"}, "malformed input"),
        ({"type": "drag", "path": [5]}, "malformed input"),
        ("click", "malformed input"),
    ],
)
def test_openai_untranslatable_calls_do_not_run_and_say_why(
    action: dict[str, object], phrase: str
) -> None:
    conv = OpenAIComputer(WireSetup("gpt-5.5", viewport_for("openai", 1280, 800)))
    turn = conv.parse(
        {
            "output": [
                {
                    "type": "computer_call",
                    "id": "cu",
                    "call_id": "c",
                    "actions": [{"type": "screenshot"}, action],
                }
            ]
        }
    )
    call = turn.items[0]
    assert isinstance(call, ComputerCall) and call.actions == () and phrase in str(call.problem)


def test_openai_keys_given_as_one_string_are_one_key_not_its_letters() -> None:
    conv = OpenAIComputer(WireSetup("gpt-5.5", viewport_for("openai", 1280, 800)))
    presses = [{"type": "keypress", "keys": "Enter"}, {"type": "keypress", "keys": "ctrl+a"}]
    turn = conv.parse(
        {"output": [{"type": "computer_call", "id": "cu", "call_id": "c", "actions": presses}]}
    )
    call = turn.items[0]
    assert isinstance(call, ComputerCall) and call.problem is None
    assert call.actions == (KeyPress(("Return",)), KeyPress(("Control_L", "a")))


def test_openai_declines_and_cancellations_are_told_in_messages() -> None:
    conv = OpenAIComputer(WireSetup("gpt-5.5", viewport_for("openai", 1280, 800)))
    items = conv.reply(
        [
            CallError("c_1", "Declined: computer call c_1 was not run.", screenshot=SHOT),
            CallError("c_2", "Computer call c_2 was cancelled without a result.", True),
            CallError("f_1", "Function call f_1 was cancelled without a result.", computer=False),
            ComputerResult("c_3", SHOT, text="Action 2 of 2 failed: x", is_error=True),
        ]
    )["input"]
    kinds = [(i.get("type"), i.get("call_id")) for i in items]
    assert kinds == [
        ("computer_call_output", "c_1"),
        ("message", None),
        ("message", None),
        ("function_call_output", "f_1"),
        ("computer_call_output", "c_3"),
        ("message", None),
    ]
    assert items[0]["acknowledged_safety_checks"] == []
    assert "cancelled without a result" in items[2]["content"][0]["text"]
    assert "Action 2 of 2 failed" in items[5]["content"][0]["text"]


# -- Anthropic ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "version"),
    [
        ("claude-sonnet-4-5-20250929", V20250124),
        ("claude-3-7-sonnet-latest", V20250124),
        ("claude-opus-4-5", V20251124),
        ("claude-sonnet-4-6", V20251124),
        ("claude-opus-5-5", TOOLSET),
        ("claude-haiku-5-5", TOOLSET),
    ],
)
def test_anthropic_tool_version_follows_the_model(model: str, version: str) -> None:
    assert version_for_model(model) == version


def _tool_use(call_id: str, action: str, **inp: object) -> dict[str, object]:
    return {
        "type": "tool_use",
        "id": call_id,
        "name": "computer",
        "input": {"action": action, **inp},
    }


def test_anthropic_per_version_actions_scale_from_the_screenshot() -> None:
    conv = AnthropicComputer(WireSetup("claude-sonnet-4-5", viewport_for("anthropic", 2560, 1600)))
    assert conv.tools()[0] == {
        "type": V20250124,
        "name": "computer",
        "display_width_px": 1280,
        "display_height_px": 800,
    }
    assert conv.headers()["anthropic-beta"] == "computer-use-2025-01-24"
    conv.say("go", PNG)
    turn = conv.parse(
        {
            "content": [
                {"type": "text", "text": "Clicking."},
                _tool_use("t1", "left_click", coordinate=[100, 50], text="shift"),
                _tool_use("t2", "left_click", coordinate=[0, 0], key="ctrl"),
                _tool_use("t3", "key", text="ctrl+a Delete"),
                _tool_use(
                    "t4", "scroll", coordinate=[10, 10], scroll_direction="up", scroll_amount=3
                ),
                _tool_use("t5", "left_click_drag", start_coordinate=[1, 1], coordinate=[2, 2]),
                _tool_use("t6", "triple_click"),
                _tool_use("t7", "hold_key", text="shift", duration=1),
                _tool_use("t8", "cursor_position"),
                _tool_use("t9", "zoom", region=[0, 0, 10, 10]),
                {"type": "tool_use", "id": "t10", "name": "read_screen_ax", "input": {}},
            ]
        }
    )
    acts = [c.actions for c in turn.items if isinstance(c, ComputerCall)]
    assert acts[:8] == [
        (Click(201, 101, modifiers=("Shift_L",)),),
        (Click(1, 1, modifiers=("Control_L",)),),
        (KeyPress(("Control_L", "a")), KeyPress(("Delete",))),
        (Scroll(21, 21, 0, -3),),
        (Drag(((3, 3), (5, 5))),),
        (Click(count=3),),
        (HoldKey(("Shift_L",), 1.0),),
        (CursorPosition(),),
    ]
    zoom = turn.items[8]
    assert isinstance(zoom, ComputerCall) and "Unknown action 'zoom'" in str(zoom.problem)
    assert turn.items[9] == FunctionCall("t10", "read_screen_ax", {}, id="t10")
    assert turn.text == "Clicking."


def test_anthropic_20251124_zooms_into_target_pixels() -> None:
    conv = AnthropicComputer(WireSetup("claude-opus-4-6", viewport_for("anthropic", 2560, 1600)))
    assert conv.tools()[0]["enable_zoom"] is True
    conv.say("go", None)
    turn = conv.parse({"content": [_tool_use("t1", "zoom", region=[10, 20, 110, 70])]})
    assert turn.items[0].actions == (Zoom(20, 40, 220, 140),)  # type: ignore[union-attr]


def test_anthropic_toolset_members_and_results_echo_the_toolset() -> None:
    conv = AnthropicComputer(WireSetup("claude-opus-5-5", viewport_for("anthropic", 1280, 800)))
    assert conv.tools() == [{"type": TOOLSET}] and "anthropic-beta" not in conv.headers()
    conv.say("go", None)
    turn = conv.parse(
        {
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "toolset_name": "computer",
                    "name": "left_click",
                    "input": {"coordinate": [640, 360]},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "toolset_name": "computer",
                    "name": "type",
                    "input": {"text": "hi"},
                },
                {"type": "tool_use", "id": "t3", "name": "list_windows", "input": {}},
                {
                    "type": "tool_use",
                    "id": "t4",
                    "toolset_name": "computer",
                    "name": "screenshot",
                    "input": {},
                },
            ]
        }
    )
    assert turn.items[0].actions == (Click(640, 360),)  # type: ignore[union-attr]
    assert isinstance(turn.items[2], FunctionCall)
    body = conv.reply(
        [
            ComputerResult("t1", None),
            ComputerResult("t2", None, text="Action 1 of 1 failed: blocked", is_error=True),
            FunctionResult("t3", "Open Windows (0 total):"),
            CallError("t4", "Not executed: an earlier computer action in this turn failed."),
        ]
    )
    blocks = body["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["t1", "t2", "t3", "t4"]
    assert [b.get("toolset_name") for b in blocks] == ["computer", "computer", None, "computer"]
    assert [b["is_error"] for b in blocks] == [False, True, False, True]
    assert blocks[0]["content"] == [{"type": "text", "text": "Done."}]
    assert blocks[1]["content"] == [{"type": "text", "text": "Action 1 of 1 failed: blocked"}]
    assert blocks[3]["content"][0]["text"].startswith("Not executed")
    assert body["messages"][1]["role"] == "assistant"


def test_anthropic_results_carry_text_zoom_images_then_the_screenshot() -> None:
    conv = AnthropicComputer(WireSetup("claude-opus-4-6", viewport_for("anthropic", 1280, 800)))
    conv.say("go", None)
    conv.parse({"content": [_tool_use("t1", "cursor_position")]})
    zoomed = ScreenshotRef(data=b"zoom")
    body = conv.reply([ComputerResult("t1", SHOT, text="X=5,Y=6", images=(zoomed,))])
    block = body["messages"][-1]["content"][0]
    assert [c["type"] for c in block["content"]] == ["text", "image", "image"]
    assert block["content"][2]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }


# -- Gemini ------------------------------------------------------------------------------------


def _fc(name: str, **args: object) -> dict[str, object]:
    return {"functionCall": {"name": name, "args": args}}


def test_gemini_legacy_functions_map_from_the_grid() -> None:
    conv = GeminiComputer(
        WireSetup("gemini-2.5-computer-use-preview-10-2025", viewport_for("gemini", 2000, 1000))
    )
    decl = conv.tools()[0]["computerUse"]
    assert decl["environment"] == "ENVIRONMENT_BROWSER"
    assert decl["excludedPredefinedFunctions"] == ["open_web_browser", "search", "navigate"]
    endpoint = GeminiProvider(conv.setup.model).endpoint()  # the one the function calling uses too
    assert endpoint.endswith(
        "/v1beta/models/gemini-2.5-computer-use-preview-10-2025:generateContent"
    )
    conv.say("go", PNG)
    turn = conv.parse(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "On it."},
                            _fc("click_at", x=500, y=250),
                            _fc("type_text_at", x=0, y=0, text="hi", press_enter=True),
                            _fc("key_combination", keys="Control+C"),
                            _fc("scroll_at", x=999, y=999, direction="down", magnitude=100),
                            _fc("drag_and_drop", x=0, y=0, destination_x=10, destination_y=10),
                            _fc("hover_at", x=1, y=1),
                            _fc("wait_5_seconds"),
                            _fc("go_back"),
                            _fc("navigate", url="https://example.test"),
                        ],
                    }
                }
            ]
        }
    )
    acts = [c.actions for c in turn.items if isinstance(c, ComputerCall)]
    assert acts[:8] == [
        (Click(1001, 250),),
        (
            Click(1, 0),
            KeyPress(("Control_L", "a")),
            KeyPress(("BackSpace",)),
            TypeText("hi"),
            KeyPress(("Return",)),
        ),
        (KeyPress(("Control_L", "c")),),
        (Scroll(1999, 999, 0, 1),),
        (Drag(((1, 0), (21, 10))),),
        (Move(3, 1),),
        (Wait(5.0),),
        (KeyPress(("Alt_L", "Left")),),
    ]
    assert "not available on a desktop" in str(turn.items[8].problem)  # type: ignore[union-attr]
    assert [c.call_id for c in turn.items][:2] == ["gemini-call-1", "gemini-call-2"]
    assert turn.text == "On it."


def test_gemini_35_functions() -> None:
    conv = GeminiComputer(WireSetup("gemini-3.5-flash", viewport_for("gemini", 1000, 1000)))
    assert conv.tools()[0]["computerUse"]["environment"] == "ENVIRONMENT_DESKTOP"
    conv.say("go", None)
    turn = conv.parse(
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "functionCall": {
                                    "id": "fc-1",
                                    "name": "double_click",
                                    "args": {"x": 10, "y": 20},
                                }
                            },
                            _fc("right_click", x=1, y=2),
                            _fc("hotkey", keys=["ctrl", "shift", "t"]),
                            _fc("press_key", key="Enter"),
                            _fc("key_down", key="Shift"),
                            _fc("key_up", key="Shift"),
                            _fc("type", text="x", press_enter=False),
                            _fc("wait", seconds=2),
                            _fc("take_screenshot"),
                            _fc("scroll", x=500, y=500, direction="left", magnitude=250),
                        ]
                    }
                }
            ]
        }
    )
    assert [c.actions for c in turn.items] == [  # type: ignore[union-attr]
        (Click(10, 20, count=2),),
        (Click(1, 2, button="right"),),
        (KeyPress(("Control_L", "Shift_L", "t")),),
        (KeyPress(("Return",)),),
        (KeyDown(("Shift_L",)),),
        (KeyUp(("Shift_L",)),),
        (TypeText("x"),),
        (Wait(2.0),),
        (Screenshot(),),
        (Scroll(500, 500, -3, 0),),
    ]
    assert turn.items[0].call_id == "fc-1"


def test_gemini_safety_decisions_become_checks_and_acknowledgements() -> None:
    conv = GeminiComputer(WireSetup("gemini-3.5-flash", viewport_for("gemini", 1280, 800)))
    conv.say("go", None)
    turn = conv.parse(
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "functionCall": {
                                    "id": "fc-9",
                                    "name": "click",
                                    "args": {
                                        "x": 512,
                                        "y": 300,
                                        "safety_decision": {
                                            "decision": "require_confirmation",
                                            "explanation": "Accept cookie banner?",
                                        },
                                    },
                                }
                            },
                            _fc("read_screen_ax", windowID="1/2"),
                            _fc("click", x=1, y=1, safety_decision={"decision": "regular"}),
                        ]
                    }
                }
            ]
        }
    )
    flagged, local, plain = turn.items
    assert isinstance(flagged, ComputerCall) and isinstance(plain, ComputerCall)
    check = SafetyCheck("fc-9:safety_decision", "require_confirmation", "Accept cookie banner?")
    assert flagged.pending_safety_checks == (check,) and plain.pending_safety_checks == ()
    assert isinstance(local, FunctionCall) and local.arguments == {"windowID": "1/2"}
    body = conv.reply(
        [
            ComputerResult("fc-9", None, (check,)),
            FunctionResult(local.call_id, "tree"),
            ComputerResult(plain.call_id, SHOT),
        ]
    )
    parts = body["contents"][-1]["parts"]
    assert parts[0] == {
        "functionResponse": {
            "name": "click",
            "id": "fc-9",
            "response": {"status": "ok", "safety_acknowledgement": "true"},
        }
    }
    assert parts[1]["functionResponse"]["response"] == {"output": "tree"}
    last = parts[2]["functionResponse"]
    assert "safety_acknowledgement" not in last["response"] and "id" not in last
    assert last["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}}
    ]


def test_gemini_declines_tell_the_model() -> None:
    conv = GeminiComputer(WireSetup("gemini-3.5-flash", viewport_for("gemini", 1280, 800)))
    conv.say("go", None)
    conv.parse({"candidates": [{"content": {"parts": [_fc("click", x=1, y=1)]}}]})
    part = conv.reply([CallError("gemini-call-1", "Declined: not run.")])["contents"][-1]
    assert part["parts"][0]["functionResponse"]["response"] == {"error": "Declined: not run."}


def test_every_vendor_body_is_json() -> None:
    for vendor, model in (
        ("openai", "gpt-5.5"),
        ("anthropic", "claude-opus-4-6"),
        ("gemini", "gemini-3.5-flash"),
    ):
        conv = computer_wire(vendor, model, viewport_for(vendor, 1280, 800))
        json.dumps(conv.say("go", PNG))


def test_conversation_state_survives_a_checkpoint() -> None:
    for vendor, model in (
        ("openai", "gpt-5.5"),
        ("anthropic", "claude-opus-5-5"),
        ("gemini", "gemini-3.5-flash"),
    ):
        vp = viewport_for(vendor, 1280, 800)
        conv = computer_wire(vendor, model, vp)
        conv.say("go", PNG)
        conv.parse(
            {
                "id": "resp_1",
                "output": [],
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "toolset_name": "computer",
                        "name": "screenshot",
                        "input": {},
                    }
                ],
                "candidates": [
                    {
                        "content": {
                            "parts": [{"functionCall": {"name": "take_screenshot", "args": {}}}]
                        }
                    }
                ],
            }
        )
        saved = json.loads(json.dumps(conv.state()))
        again = computer_wire(vendor, model, vp)
        again.load(saved)
        assert again.state() == conv.state()
        assert json.dumps(again.reply([])) == json.dumps(conv.reply([]))


def test_gemini_leaves_out_local_tools_named_like_predefined_functions() -> None:
    @tool(risk=Risk.READ_ONLY, title="Wait")
    async def wait(ctx: ToolContext, seconds: float) -> ToolResult:
        """Pause."""
        return ToolResult(text="waited")

    @tool(risk=Risk.READ_ONLY, title="Read")
    async def read_screen_ax(ctx: ToolContext) -> ToolResult:
        """Read."""
        return ToolResult(text="tree")

    vp = viewport_for("gemini", 1280, 800)
    conv = GeminiComputer(WireSetup("gemini-3.5-flash", vp, functions=[wait, read_screen_ax]))
    decls = conv.tools()[1]["functionDeclarations"]
    assert [d["name"] for d in decls] == ["read_screen_ax"]
    assert "additionalProperties" not in decls[0]["parameters"]
