"""Native runs, pure parts: which models have a computer tool, image pruning, the last call
(each vendor's computer-use wire)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from deskpilot.agent.providers import PROVIDERS, anthropic, gemini
from deskpilot.native.wire import OMITTED_IMAGE
from tests.wires import computer_wire, viewport_for


def wire(vendor: str) -> Any:
    model = {"openai": "gpt-5.5", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-3.5-flash"}
    return computer_wire(vendor, model[vendor], viewport_for(vendor, 1280, 800))


@pytest.mark.parametrize(
    ("spec", "native"),
    [
        ("openai:computer-use-preview", True),
        ("openai:computer-use-preview-2025-03-11", True),
        ("openai:gpt-5.4", True),
        ("openai:gpt-5.5-mini", True),
        ("openai:gpt-6", True),
        ("openai:gpt-5", False),
        ("openai:gpt-5.1", False),
        ("openai:gpt-4o", False),
        ("anthropic:claude-sonnet-4-5", True),
        ("anthropic:claude-sonnet-4-20250514", True),
        ("anthropic:claude-opus-4-6", True),
        ("anthropic:claude-haiku-4-5", True),
        ("anthropic:claude-opus-5-5", True),
        ("anthropic:claude-3-7-sonnet-latest", True),
        ("anthropic:claude-haiku-4", False),
        ("anthropic:claude-3-5-haiku-latest", False),
        ("gemini:gemini-2.5-computer-use-preview-10-2025", True),
        ("gemini:gemini-3-flash-preview", True),
        ("gemini:gemini-3.1-pro-preview", True),
        ("gemini:gemini-3.5-flash", True),
        ("gemini:gemini-2.5-flash", False),
        ("compatible:qwen2.5-vl", False),
    ],
)
def test_which_models_have_a_native_computer_tool(spec: str, native: bool) -> None:
    vendor, _, model = spec.partition(":")
    assert PROVIDERS[vendor].speaks_computer(model) is native


def image(n: int) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": f"IMG{n}"},
    }


def anthropic_body() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "goal"}, image(1)]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "computer",
                        "input": {"action": "screenshot"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [image(2)]}],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "computer",
                        "input": {"action": "zoom"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t2", "content": [image(3), image(4)]}
                ],
            },
        ],
    }


def test_anthropic_keeps_the_newest_images_and_leaves_the_history_alone() -> None:
    body = anthropic_body()
    before = copy.deepcopy(body)
    pruned = anthropic.prune_images(body, keep=2)
    assert body == before  # shared with the conversation: never changed in place
    text = json.dumps(pruned)
    assert [n for n in range(1, 5) if f"IMG{n}" in text] == [3, 4]
    assert pruned["messages"][0]["content"][1] == {"type": "text", "text": OMITTED_IMAGE}
    assert pruned["messages"][2]["content"][0]["content"] == [
        {"type": "text", "text": OMITTED_IMAGE}
    ]
    assert anthropic.prune_images(body, keep=10) == body


def test_gemini_drops_old_inline_images_and_notes_it_in_the_response() -> None:
    shot = {"inlineData": {"mimeType": "image/png", "data": "OLD"}}
    new = {"inlineData": {"mimeType": "image/png", "data": "NEW"}}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "goal"}, dict(shot)]},
            {"role": "model", "parts": [{"functionCall": {"name": "click_at", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "click_at",
                            "response": {"status": "ok"},
                            "parts": [dict(shot)],
                        }
                    }
                ],
            },
            {"role": "model", "parts": [{"functionCall": {"name": "click_at", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "click_at",
                            "response": {"status": "ok"},
                            "parts": [new],
                        }
                    }
                ],
            },
        ]
    }
    pruned = gemini.prune_images(body, keep=1)
    assert "OLD" not in json.dumps(pruned) and "NEW" in json.dumps(pruned)
    assert pruned["contents"][0]["parts"][1] == {"text": OMITTED_IMAGE}
    old = pruned["contents"][2]["parts"][0]["functionResponse"]
    assert old == {"name": "click_at", "response": {"status": "ok", "note": OMITTED_IMAGE}}
    assert "OLD" in json.dumps(body)


def test_openai_requests_are_sent_as_they_are() -> None:
    body = {"input": [{"type": "computer_call_output", "call_id": "c", "output": {}}]}
    assert wire("openai").pruned(body, keep=0) == body


def test_the_last_call_switches_tools_off_and_says_why() -> None:
    openai = wire("openai")
    openai.say("goal", None)
    openai.parse(
        {
            "id": "r1",
            "output": [
                {
                    "type": "computer_call",
                    "call_id": "c",
                    "id": "cu",
                    "actions": [{"type": "screenshot"}],
                }
            ],
        }
    )
    openai.reply([])
    openai.say("NOTE")
    last = {**openai.body(), **openai.tools_off}
    assert last["tool_choice"] == "none" and last["previous_response_id"] == "r1"
    assert last["input"][-1] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "NOTE"}],
    }
    claude = wire("anthropic")
    claude.load({"messages": anthropic_body()["messages"]})
    before = copy.deepcopy(claude.messages)
    sent = claude.body()
    claude.say("NOTE")
    last = {**claude.body(), **claude.tools_off}
    assert last["tool_choice"] == {"type": "none"}
    assert last["messages"][-1]["content"][-1] == {"type": "text", "text": "NOTE"}
    assert len(last["messages"]) == len(before)  # the note joins the results' user turn
    assert sent["messages"][-1]["content"][-1]["type"] == "tool_result"  # a sent body stays
    assert before[-1]["content"][-1]["type"] == "tool_result"
    gem = wire("gemini")
    gem.load({"contents": [{"role": "model", "parts": []}]})
    gem.say("NOTE")
    last = {**gem.body(), **gem.tools_off}
    assert last["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    assert last["contents"][-1] == {"role": "user", "parts": [{"text": "NOTE"}]}


def test_calls_in_the_last_reply_are_dropped_and_its_text_kept() -> None:
    openai = wire("openai").without_calls(
        {
            "output": [
                {"type": "computer_call", "call_id": "c"},
                {"type": "function_call", "call_id": "f"},
                {"type": "message", "content": [{"type": "output_text", "text": "Done"}]},
            ]
        }
    )
    assert [i["type"] for i in openai["output"]] == ["message"]
    reply = {"content": [{"type": "text", "text": "Done"}, {"type": "tool_use", "id": "t"}]}
    claude = wire("anthropic").without_calls(reply)
    assert claude["content"] == [{"type": "text", "text": "Done"}]
    gem = wire("gemini").without_calls(
        {
            "candidates": [
                {"content": {"parts": [{"text": "Done"}, {"functionCall": {"name": "click_at"}}]}}
            ]
        }
    )
    assert gem["candidates"][0]["content"]["parts"] == [{"text": "Done"}]
