"""Google Gemini ``generateContent`` (``POST {base}/models/{model}:generateContent``) over httpx.

Native tools are ``functionDeclarations`` (their schemas reduced to the OpenAPI subset Gemini
takes: ``$ref`` inlined, ``additionalProperties`` dropped); the model answers with
``functionCall`` parts and gets ``functionResponse`` parts back, followed by ``inlineData``
images (protocols.md §3). Gemini 3 models sign their function calls (``thoughtSignature``);
signatures are kept on the neutral call and echoed back, and calls written by another provider
carry Google's documented placeholder signature, so a conversation can move to Gemini midway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deskpilot.agent import textproto
from deskpilot.agent.conversation import (
    AssistantTurn,
    Conversation,
    ToolCall,
    ToolProtocol,
    b64,
    new_call_id,
)
from deskpilot.agent.providers.base import Provider, Request, result_text, safe_name
from deskpilot.errors import ProviderError
from deskpilot.events import Image
from deskpilot.tools.base import ToolSpec

#: Google's documented stand-in for calls that no Gemini model signed (other providers' calls).
FOREIGN_SIGNATURE = "skip_thought_signature_validator"
_SCHEMA_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
    }
)
MALFORMED_RETRIES = 2


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema → Gemini's Schema subset (refs inlined, unsupported keywords dropped)."""
    defs = schema.get("$defs", {})

    def walk(node: Any, depth: int = 0) -> Any:
        if not isinstance(node, dict) or depth > 20:
            return node
        if "$ref" in node:
            target = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}}, depth + 1)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key not in _SCHEMA_KEYS:
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {k: walk(v, depth + 1) for k, v in value.items()}
            elif key == "items":
                out[key] = walk(value, depth + 1)
            elif key == "anyOf" and isinstance(value, list):
                options = [walk(v, depth + 1) for v in value if v != {"type": "null"}]
                if len(options) < len(value):
                    out["nullable"] = True
                if len(options) == 1:
                    out.update(options[0])
                else:
                    out[key] = options
            else:
                out[key] = value
        return out

    result: dict[str, Any] = walk(schema)
    return result


def _image(image: Image) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.mime, "data": b64(image)}}


class GeminiProvider(Provider):
    name = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"

    async def complete(
        self,
        conversation: Conversation,
        tools: Sequence[ToolSpec],
        *,
        tool_protocol: ToolProtocol | None = None,
    ) -> AssistantTurn:
        turn = await super().complete(conversation, tools, tool_protocol=tool_protocol)
        for _ in range(MALFORMED_RETRIES):  # Gemini's own advice: retry a malformed call
            if turn.stop_reason != "MALFORMED_FUNCTION_CALL":
                break
            turn = await super().complete(conversation, tools, tool_protocol=tool_protocol)
        if turn.stop_reason == "MALFORMED_FUNCTION_CALL":
            raise ProviderError(
                f"gemini: the model sent a malformed function call {MALFORMED_RETRIES + 1} "
                "times in a row"
            )
        return turn

    def build_request(
        self, conversation: Conversation, tools: Sequence[ToolSpec], protocol: ToolProtocol
    ) -> Request:
        contents: list[dict[str, Any]] = []

        def add(role: str, parts: list[dict[str, Any]]) -> None:
            if not parts:
                parts = [{"text": "(empty)"}]
            if contents and contents[-1]["role"] == role:
                contents[-1]["parts"].extend(parts)
            else:
                contents.append({"role": role, "parts": parts})

        for m in self.messages(conversation):
            if m.role == "user":
                add("user", ([{"text": m.text}] if m.text else []) + [_image(i) for i in m.images])
            elif m.role == "assistant" and protocol == "text":
                add("model", [{"text": textproto.render_assistant(m) or "(empty)"}])
            elif m.role == "assistant":
                parts: list[dict[str, Any]] = [{"text": m.text}] if m.text else []
                for index, call in enumerate(m.tool_calls):
                    part: dict[str, Any] = {
                        "functionCall": {"name": safe_name(call.name), "args": call.arguments}
                    }
                    signature = call.extra.get("gemini", {}).get("thoughtSignature")
                    if signature or index == 0:
                        part["thoughtSignature"] = signature or FOREIGN_SIGNATURE
                    parts.append(part)
                add("model", parts)
            elif protocol == "text":
                add(
                    "user",
                    [{"text": textproto.render_results(m.results)}]
                    + [_image(i) for r in m.results for i in r.images],
                )
            else:
                responses = [
                    {
                        "functionResponse": {
                            "name": safe_name(r.name),
                            "response": {
                                "error" if r.is_error else "output": result_text(r.text, r.is_error)
                            },
                        }
                    }
                    for r in m.results
                ]
                add("user", responses + [_image(i) for r in m.results for i in r.images])
        body: dict[str, Any] = {
            "contents": contents,
            "generationConfig": {"maxOutputTokens": self.max_tokens},
        }
        system = self.system_prompt(conversation, tools, protocol)
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if protocol == "native" and tools:
            body["tools"] = [
                {
                    "functionDeclarations": [
                        {
                            "name": t.name,
                            "description": t.description,
                            "parameters": gemini_schema(t.input_schema),
                        }
                        for t in tools
                    ]
                }
            ]
        if protocol == "text":
            body["generationConfig"]["stopSequences"] = list(textproto.STOP_SEQUENCES)
        headers = {"x-goog-api-key": self.api_key or "", "content-type": "application/json"}
        return f"{self.base_url}/models/{self.model}:generateContent", headers, body

    def parse_response(self, data: dict[str, Any], protocol: ToolProtocol) -> AssistantTurn:
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = data.get("promptFeedback") or {}
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if reason:
                return self.turn(
                    f"(Gemini blocked the request: {reason})", protocol, stop_reason=str(reason)
                )
            raise ProviderError(f"gemini: unexpected reply (no candidates): {str(data)[:200]}")
        candidate = candidates[0] if isinstance(candidates[0], dict) else {}
        content = candidate.get("content") or {}
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in content.get("parts") or []:
            if not isinstance(part, dict) or part.get("thought"):
                continue
            if "text" in part:
                texts.append(str(part["text"]))
            call = part.get("functionCall")
            if isinstance(call, dict):
                name = str(call.get("name", ""))
                args = call.get("args")
                extra = (
                    {"gemini": {"thoughtSignature": part["thoughtSignature"]}}
                    if part.get("thoughtSignature")
                    else {}
                )
                calls.append(
                    ToolCall(
                        id=str(call.get("id") or new_call_id("gem")),
                        name=name,
                        arguments=args if isinstance(args, dict) else {},
                        extra=extra,
                    )
                )
        return self.turn(
            "".join(texts),
            protocol,
            calls=calls,
            stop_reason=str(candidate.get("finishReason") or ""),
            usage=data.get("usageMetadata"),
        )
