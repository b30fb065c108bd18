"""Anthropic Messages API (``POST /v1/messages``) over httpx.

Native tools are ``tools: [{name, description, input_schema}]``; the model answers with
``tool_use`` blocks and gets ``tool_result`` blocks (text + base64 images) back in the next user
message (protocols.md §2.3). Under the text protocol no tools are declared, results are user
text, and ``stop_sequences`` stops the model at a result marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deskpilot.agent import textproto
from deskpilot.agent.conversation import AssistantTurn, Conversation, ToolCall, ToolProtocol, b64
from deskpilot.agent.providers.base import Provider, Request, result_text, safe_id, safe_name
from deskpilot.errors import ProviderError
from deskpilot.events import Image
from deskpilot.tools.base import ToolSpec

API_VERSION = "2023-06-01"
BAD_INPUT = "Invalid arguments for {name}: expected a JSON object; nothing was run."


def _image(image: Image) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime, "data": b64(image)},
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text or "(empty)"}


class AnthropicProvider(Provider):
    name = "anthropic"
    default_base_url = "https://api.anthropic.com"

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        messages: list[dict[str, Any]] = []

        def add(role: str, blocks: list[dict[str, Any]]) -> None:
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"].extend(blocks)
            else:
                messages.append({"role": role, "content": blocks})

        for m in self.messages(conversation):
            if m.role == "user":
                add(
                    "user",
                    ([_text(m.text)] if m.text or not m.images else [])
                    + [_image(i) for i in m.images],
                )
            elif m.role == "assistant":
                if protocol == "text":
                    add("assistant", [_text(textproto.render_assistant(m))])
                    continue
                blocks = [_text(m.text)] if m.text or not m.tool_calls else []
                blocks += [
                    {
                        "type": "tool_use",
                        "id": safe_id(c.id, "toolu"),
                        "name": safe_name(c.name),
                        "input": c.arguments,
                    }
                    for c in m.tool_calls
                ]
                add("assistant", blocks)
            elif protocol == "text":
                add(
                    "user",
                    [_text(textproto.render_results(m.results))]
                    + [_image(i) for r in m.results for i in r.images],
                )
            else:
                add(
                    "user",
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": safe_id(r.call_id, "toolu"),
                            "is_error": r.is_error,
                            "content": [_text(result_text(r.text, r.is_error))]
                            + [_image(i) for i in r.images],
                        }
                        for r in m.results
                    ],
                )
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
        }
        system = self.system_prompt(conversation, tools, protocol)
        if system:
            body["system"] = system
        if protocol == "native" and tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in tools
            ]
        if protocol == "text":
            body["stop_sequences"] = list(textproto.STOP_SEQUENCES)
        headers = {
            "x-api-key": self.api_key or "",
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
        }
        return f"{self.base_url}/v1/messages", headers, body

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        content = data.get("content")
        if not isinstance(content, list):
            raise ProviderError(f"anthropic: unexpected reply (no content list): {str(data)[:200]}")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                name = str(block.get("name", ""))
                args = block.get("input")
                calls.append(
                    ToolCall(
                        id=str(block.get("id") or f"toolu_{len(calls)}"),
                        name=name,
                        arguments=args if isinstance(args, dict) else {},
                        error=None if isinstance(args, dict) else BAD_INPUT.format(name=name),
                    )
                )
        return self.turn(
            "".join(texts),
            protocol,
            calls=calls,
            stop_reason=str(data.get("stop_reason") or ""),
            usage=data.get("usage"),
        )
