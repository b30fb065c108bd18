"""OpenAI Responses API (``POST /v1/responses``) over httpx.

Native tools are ``{"type": "function", name, description, parameters}``; the model answers
with ``function_call`` items (arguments as a JSON string) and gets ``function_call_output``
items back, whose ``output`` may be a list of ``input_text`` / ``input_image`` parts, so
screenshots travel with their result. ``store`` is false: every request carries the whole
conversation (no ``previous_response_id``), which is what lets the provider change mid-run.
The Responses API has no stop sequences; under the text protocol the parser alone cuts forged
result markers.
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
from deskpilot.agent.providers.base import (
    Provider,
    Request,
    args_from_json,
    result_text,
    safe_id,
    safe_name,
)
from deskpilot.errors import ProviderError
from deskpilot.events import Image
from deskpilot.tools.base import ToolSpec


def _image(image: Image) -> dict[str, Any]:
    return {"type": "input_image", "image_url": data_url(image)}


def _user(text: str, images: Sequence[Image]) -> dict[str, Any]:
    parts = [{"type": "input_text", "text": text}] if text else []
    return {"role": "user", "content": parts + [_image(i) for i in images]}


class OpenAIProvider(Provider):
    name = "openai"
    default_base_url = "https://api.openai.com/v1"

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        items: list[dict[str, Any]] = []
        for m in self.messages(conversation):
            if m.role == "user":
                items.append(_user(m.text, m.images))
            elif m.role == "assistant" and protocol == "text":
                items.append({"role": "assistant", "content": textproto.render_assistant(m)})
            elif m.role == "assistant":
                if m.text:
                    items.append({"role": "assistant", "content": m.text})
                items += [
                    {
                        "type": "function_call",
                        "call_id": safe_id(c.id),
                        "name": safe_name(c.name),
                        "arguments": json.dumps(c.arguments, ensure_ascii=False),
                    }
                    for c in m.tool_calls
                ]
            elif protocol == "text":
                items.append(
                    _user(
                        textproto.render_results(m.results),
                        [i for r in m.results for i in r.images],
                    )
                )
            else:
                for r in m.results:
                    text = result_text(r.text, r.is_error) or "(no output)"
                    output: str | list[dict[str, Any]] = text
                    if r.images:
                        output = [{"type": "input_text", "text": text}]
                        output += [_image(i) for i in r.images]
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": safe_id(r.call_id),
                            "output": output,
                        }
                    )
        body: dict[str, Any] = {
            "model": self.model,
            "input": items,
            "store": False,
            "max_output_tokens": self.max_tokens,
        }
        system = self.system_prompt(conversation, tools, protocol)
        if system:
            body["instructions"] = system
        if protocol == "native" and tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                    "strict": False,
                }
                for t in tools
            ]
        headers = {"authorization": f"Bearer {self.api_key}", "content-type": "application/json"}
        return f"{self.base_url}/responses", headers, body

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        output = data.get("output")
        if not isinstance(output, list):
            raise ProviderError(f"openai: unexpected reply (no output list): {str(data)[:200]}")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for item in output:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "message":
                for part in item.get("content") or []:
                    if isinstance(part, dict) and part.get("type") in ("output_text", "refusal"):
                        texts.append(str(part.get("text") or part.get("refusal") or ""))
            elif item.get("type") == "function_call":
                name = str(item.get("name", ""))
                args, error = args_from_json(name, str(item.get("arguments") or ""))
                calls.append(
                    ToolCall(
                        id=str(item.get("call_id") or item.get("id") or ""),
                        name=name,
                        arguments=args,
                        error=error,
                        raw=str(item.get("arguments") or ""),
                    )
                )
        status = str(data.get("status") or "")
        details = data.get("incomplete_details")
        if status == "incomplete" and isinstance(details, dict):
            status = f"incomplete: {details.get('reason', '')}"
        return self.turn(
            "".join(texts),
            protocol,
            calls=calls,
            stop_reason=status,
            usage=data.get("usage"),
        )
