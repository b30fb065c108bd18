"""OpenAI-compatible Chat Completions (``POST {base_url}/chat/completions``) over httpx.

For local and self-hosted servers — vLLM, llama.cpp's ``llama-server``, Ollama, LM Studio —
given by ``--base-url`` (e.g. ``http://127.0.0.1:8000/v1``). The API key is optional.

Native tools are ``tools: [{"type": "function", "function": {...}}]``, answered by
``role: "tool"`` messages. Tool messages carry text only, so a result's images follow in a user
message. Under the text protocol, ``stop`` ends generation at a result marker. Servers whose
model has no tool-call template should be used with ``--tool-protocol text``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from deskpilot.agent import textproto
from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    ToolCall,
    ToolProtocol,
    data_url,
)
from deskpilot.agent.providers import base
from deskpilot.agent.providers.base import Provider, Request
from deskpilot.errors import ProviderError
from deskpilot.events import Image
from deskpilot.tools.base import ToolSpec


def _user(text: str, images: Sequence[Image]) -> dict[str, Any]:
    if not images:
        return {"role": "user", "content": text}
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [{"type": "image_url", "image_url": {"url": data_url(i)}} for i in images]
    return {"role": "user", "content": parts}


class CompatibleProvider(Provider):
    name = "compatible"
    needs_key = False
    no_computer_tool = (
        "OpenAI-compatible servers (vLLM, llama.cpp server, Ollama) offer function calling only"
    )

    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        messages: list[dict[str, Any]] = []
        system = self.system_prompt(conversation, tools, protocol)
        if system:
            messages.append({"role": "system", "content": system})
        for m in self.messages(conversation):
            if m.role == "user":
                messages.append(_user(m.text, m.images))
            elif m.role == "assistant" and protocol == "text":
                messages.append({"role": "assistant", "content": textproto.render_assistant(m)})
            elif m.role == "assistant":
                message: dict[str, Any] = {"role": "assistant", "content": m.text or None}
                if m.tool_calls:
                    message["tool_calls"] = [
                        {
                            "id": base.safe_id(c.id),
                            "type": "function",
                            "function": {
                                "name": base.safe_name(c.name),
                                "arguments": json.dumps(c.arguments, ensure_ascii=False),
                            },
                        }
                        for c in m.tool_calls
                    ]
                messages.append(message)
            elif protocol == "text":
                images = [i for r in m.results for i in r.images]
                messages.append(_user(textproto.render_results(m.results), images))
            else:
                for r in m.results:
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": base.safe_id(r.call_id),
                            "content": base.result_text(r.text, r.is_error) or "(no output)",
                        }
                    )
                pictures = [i for r in m.results for i in r.images]
                if pictures:
                    names = ", ".join(sorted({r.name for r in m.results if r.images}))
                    messages.append(_user(f"Images returned by {names}:", pictures))
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
        }
        if protocol == "native" and tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in tools
            ]
        if protocol == "text":
            body["stop"] = list(textproto.STOP_SEQUENCES)
        return self.endpoint(), self.headers(), body

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError(f"{self.name}: unexpected reply (no choices): {str(data)[:200]}")
        message = choices[0].get("message") or {}
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        calls: list[ToolCall] = []
        for index, call in enumerate(message.get("tool_calls") or []):
            if not isinstance(call, dict):
                continue
            function = call.get("function") or {}
            name = str(function.get("name", ""))
            raw = function.get("arguments")
            if isinstance(raw, dict):  # Ollama sends an object
                args, error, raw = raw, None, json.dumps(raw)
            else:
                args, error = base.args_from_json(name, str(raw or ""))
            calls.append(
                ToolCall(
                    id=str(call.get("id") or f"call_{index}"),
                    name=name,
                    arguments=args,
                    error=error,
                    raw=str(raw or ""),
                )
            )
        return self.turn(
            str(content or ""),
            protocol,
            calls=calls,
            stop_reason=str(choices[0].get("finish_reason") or ""),
            usage=data.get("usage"),
        )
