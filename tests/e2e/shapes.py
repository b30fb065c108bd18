"""Request-shape checks per provider, after each vendor's API reference and the text protocol
(deskpilot.agent.textproto)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.e2e.wire import Recorded, is_png

STOP = ["@@RESULT"]


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node] + [x for v in node.values() for x in _walk(v)]
    if isinstance(node, list):
        return [x for v in node for x in _walk(v)]
    return []


def text_mode(system: str, body: dict[str, Any]) -> bool:
    return "tools" not in body and "@@TOOL@@" in system


def check_anthropic(rec: Recorded, key: str) -> None:
    body = rec.body
    assert rec.path == "/v1/messages"
    assert rec.headers["x-api-key"] == key
    assert rec.headers["anthropic-version"] == "2023-06-01"
    assert isinstance(body["model"], str) and isinstance(body["max_tokens"], int)
    roles = [m["role"] for m in body["messages"]]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))
    pending: list[str] = []
    for m in body["messages"]:
        kinds = [b["type"] for b in m["content"]]
        assert m["content"], "empty content"
        if m["role"] == "assistant":
            assert not pending, "tool_use without tool_result"
            pending = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
            continue
        answered = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
        assert answered == pending, (answered, pending)
        assert kinds[: len(answered)] == ["tool_result"] * len(answered), "results go first"
        pending = []
        for block in m["content"]:
            inner = block["content"] if block["type"] == "tool_result" else [block]
            for part in inner:
                assert part["type"] in ("text", "image")
                if part["type"] == "image":
                    assert part["source"]["type"] == "base64"
                    assert part["source"]["media_type"] == "image/png"
                    assert is_png(part["source"]["data"])
                else:
                    assert part["text"], "empty text block"
    for t in body.get("tools", []):
        assert set(t) == {"name", "description", "input_schema"}
        assert t["input_schema"]["type"] == "object"
    if text_mode(body.get("system", ""), body):
        assert body["stop_sequences"] == STOP
        assert all(b["type"] in ("text", "image") for m in body["messages"] for b in m["content"])


def check_openai(rec: Recorded, key: str) -> None:
    body = rec.body
    assert rec.path == "/v1/responses"
    assert rec.headers["authorization"] == f"Bearer {key}"
    assert body["store"] is False and isinstance(body["input"], list)
    calls: list[str] = []
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "function_call":
            assert "id" not in item, "item ids are not resent (store=false)"
            json.loads(item["arguments"])
            calls.append(item["call_id"])
        elif kind == "function_call_output":
            assert item["call_id"] in calls, "output without its call"
            calls.remove(item["call_id"])
            out = item["output"]
            assert isinstance(out, str) or all(
                p["type"] in ("input_text", "input_image") for p in out
            )
        else:
            assert item["role"] in ("user", "assistant")
    assert not calls, "a function_call without output"
    for part in _walk(body["input"]):
        if part.get("type") == "input_image":
            prefix = "data:image/png;base64,"
            assert part["image_url"].startswith(prefix) and is_png(part["image_url"][len(prefix) :])
    for t in body.get("tools", []):
        assert t["type"] == "function" and t["parameters"]["type"] == "object"
    if text_mode(body.get("instructions", ""), body):
        assert not any(i.get("type", "").startswith("function_call") for i in body["input"])


def check_compatible(rec: Recorded, key: str | None) -> None:
    body = rec.body
    assert rec.path == "/v1/chat/completions"
    if key:
        assert rec.headers["authorization"] == f"Bearer {key}"
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    pending: list[str] = []
    for m in messages[1:]:
        if m["role"] == "tool":
            assert m["tool_call_id"] == pending.pop(0) and isinstance(m["content"], str)
            continue
        assert not pending, "tool_calls not all answered before the next message"
        if m["role"] == "assistant":
            pending = [c["id"] for c in m.get("tool_calls", [])]
            for c in m.get("tool_calls", []):
                assert (
                    c["type"] == "function" and json.loads(c["function"]["arguments"]) is not None
                )
        elif isinstance(m["content"], list):
            for part in m["content"]:
                assert part["type"] in ("text", "image_url")
                if part["type"] == "image_url":
                    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    for t in body.get("tools", []):
        assert t["type"] == "function" and t["function"]["parameters"]["type"] == "object"
    if text_mode(messages[0]["content"], body):
        assert body["stop"] == STOP
        assert not any(m["role"] == "tool" or m.get("tool_calls") for m in messages)


def check_gemini(rec: Recorded, key: str, model: str) -> None:
    body = rec.body
    assert rec.path == f"/models/{model}:generateContent"
    assert rec.headers["x-goog-api-key"] == key
    roles = [c["role"] for c in body["contents"]]
    assert roles[0] == "user" and set(roles) <= {"user", "model"}
    assert all(a != b for a, b in itertools.pairwise(roles))
    expected = 0
    for c in body["contents"]:
        calls = [p for p in c["parts"] if "functionCall" in p]
        responses = [p for p in c["parts"] if "functionResponse" in p]
        if c["role"] == "model":
            assert expected == 0
            expected = len(calls)
            if calls:
                assert calls[0].get("thoughtSignature"), "first call of a step must be signed"
        else:
            assert len(responses) == expected
            expected = 0
            for p in responses:
                assert set(p["functionResponse"]["response"]) <= {"output", "error"}
            for p in c["parts"]:
                if "inlineData" in p:
                    assert p["inlineData"]["mimeType"] == "image/png"
                    assert is_png(p["inlineData"]["data"])
    for tool in body.get("tools", []):
        for decl in tool["functionDeclarations"]:
            keys = {k for node in _walk(decl["parameters"]) for k in node}
            assert not keys & {"additionalProperties", "$ref", "$defs", "title"}, keys
    system = "".join(p["text"] for p in body.get("systemInstruction", {}).get("parts", []))
    if text_mode(system, body):
        assert body["generationConfig"]["stopSequences"] == STOP


def check(provider: str, rec: Recorded, key: str = "test-key", model: str = "test-model") -> None:
    if provider == "anthropic":
        check_anthropic(rec, key)
    elif provider == "openai":
        check_openai(rec, key)
    elif provider == "compatible":
        check_compatible(rec, None)
    else:
        check_gemini(rec, key, model)
