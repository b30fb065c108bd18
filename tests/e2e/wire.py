"""Local stand-ins for the model providers: HTTP servers speaking each real wire format.

A :class:`ModelServer` listens on 127.0.0.1 in a thread, records every request, decodes it into
a neutral :class:`View` with this module's own (independent) reading of the wire format, asks a
*brain* what to do, and encodes the brain's :class:`Decision` as that provider's reply: native
tool calls when the request declared tools, ``@@TOOL@@`` blocks when the system prompt teaches
the text protocol. ``check_request`` asserts each vendor's request shapes (:mod:`tests.e2e.shapes`).
"""

from __future__ import annotations

import base64
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RESULT_BODY = re.compile(
    r"@@RESULT (\S+) tool=(\S+) status=(\w+)@@\n(.*?)\n@@END_RESULT \1@@", re.S
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class View:
    """What a brain sees: the tools on offer, and what came back since its last turn."""

    system: str
    tools: list[str]
    mode: str  # native | text | none (no tools offered)
    turns: int  # assistant turns so far
    user_texts: list[str]
    results: list[str]  # every tool result text so far, in order
    last_results: list[str]  # results since the last assistant turn
    images: int  # images sent in this request


@dataclass
class Decision:
    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: the reply's usage object, in the provider's own shape (None: a fixed small one)
    usage: dict[str, Any] | None = None


Brain = Callable[[View], Decision]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def text_results(text: str) -> list[str]:
    return [m.group(4) for m in RESULT_BODY.finditer(text)]


def blocks(decision: Decision) -> str:
    calls = [json.dumps({"tool": n, "args": a}) for n, a in decision.calls]
    return "\n".join([decision.text, *(f"@@TOOL@@ {c} @@END@@" for c in calls)]).strip()


def is_png(data: str) -> bool:
    return base64.b64decode(data).startswith(PNG_MAGIC)


# -- decoding requests (this module's own reading of each format) ---------------------------


def _text_mode_tools(system: str) -> list[str]:
    return re.findall(r"^## (\w+)$", system, re.M) if "@@TOOL@@" in system else []


def _view(
    system: str, native: list[str], turns: list[tuple[str, list[str], list[str]]], images: int
) -> View:
    """``turns``: (role, user texts, result texts) per message, in order."""
    tools = native or _text_mode_tools(system)
    mode = "native" if native else ("text" if tools else "none")
    results: list[str] = []
    last: list[str] = []
    users: list[str] = []
    count = 0
    for role, texts, found in turns:
        if role == "assistant":
            count += 1
            last = []
            continue
        for text in texts:
            parsed = text_results(text)
            found = found + parsed
            if not parsed:
                users.append(text)
        results += found
        last += found
    return View(system, tools, mode, count, users, results, last, images)


def decode_anthropic(body: dict[str, Any]) -> View:
    turns, images = [], 0
    for m in body["messages"]:
        texts, found = [], []
        for block in m["content"]:
            if block["type"] == "text":
                texts.append(block["text"])
            elif block["type"] == "tool_result":
                found.append("".join(c["text"] for c in block["content"] if c["type"] == "text"))
                images += sum(c["type"] == "image" for c in block["content"])
            elif block["type"] == "image":
                images += 1
        turns.append((m["role"], texts, found))
    native = [t["name"] for t in body.get("tools", [])]
    return _view(body.get("system", ""), native, turns, images)


def decode_openai(body: dict[str, Any]) -> View:
    turns: list[tuple[str, list[str], list[str]]] = []
    images = 0
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "function_call" or item.get("role") == "assistant":
            if not turns or turns[-1][0] != "assistant":
                turns.append(("assistant", [], []))
        elif kind == "function_call_output":
            out = item["output"]
            if isinstance(out, list):
                images += sum(p["type"] == "input_image" for p in out)
                out = "".join(p["text"] for p in out if p["type"] == "input_text")
            turns.append(("user", [], [out]))
        else:
            parts = item["content"]
            images += sum(p["type"] == "input_image" for p in parts)
            turns.append(("user", [p["text"] for p in parts if p["type"] == "input_text"], []))
    native = [t["name"] for t in body.get("tools", [])]
    return _view(body.get("instructions", ""), native, turns, images)


def decode_compatible(body: dict[str, Any]) -> View:
    turns: list[tuple[str, list[str], list[str]]] = []
    system, images = "", 0
    for m in body["messages"]:
        content = m.get("content")
        if m["role"] == "system":
            system = content
        elif m["role"] == "assistant":
            turns.append(("assistant", [], []))
        elif m["role"] == "tool":
            turns.append(("user", [], [content]))
        elif isinstance(content, str):
            turns.append(("user", [content], []))
        else:
            images += sum(p["type"] == "image_url" for p in content)
            turns.append(("user", [p["text"] for p in content if p["type"] == "text"], []))
    native = [t["function"]["name"] for t in body.get("tools", [])]
    return _view(system, native, turns, images)


def decode_gemini(body: dict[str, Any]) -> View:
    turns: list[tuple[str, list[str], list[str]]] = []
    images = 0
    for c in body["contents"]:
        texts, found = [], []
        for part in c["parts"]:
            if "text" in part:
                texts.append(part["text"])
            elif "functionResponse" in part:
                response = part["functionResponse"]["response"]
                found.append(response.get("output", response.get("error", "")))
            elif "inlineData" in part:
                images += 1
        turns.append(("assistant" if c["role"] == "model" else "user", texts, found))
    native = [d["name"] for t in body.get("tools", []) for d in t["functionDeclarations"]]
    system = "".join(p["text"] for p in body.get("systemInstruction", {}).get("parts", []))
    return _view(system, native, turns, images)


# -- encoding replies ------------------------------------------------------------------------


def encode_anthropic(d: Decision, view: View, n: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if view.mode == "native":
        content += [{"type": "text", "text": d.text}] if d.text else []
        content += [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(d.calls)
        ]
    else:
        content.append({"type": "text", "text": blocks(d)})
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use" if d.calls else "end_turn",
        "stop_sequence": None,
        "usage": d.usage or {"input_tokens": 10, "output_tokens": 5},
    }


def encode_openai(d: Decision, view: View, n: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = [{"type": "reasoning", "id": f"rs_{n}", "summary": []}]
    text = d.text if view.mode == "native" else blocks(d)
    if text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    if view.mode == "native":
        output += [
            {
                "type": "function_call",
                "id": f"fc_{n}_{i}",
                "call_id": f"call_{n}_{i}",
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
            for i, (name, args) in enumerate(d.calls)
        ]
    return {
        "id": f"resp_{n}",
        "object": "response",
        "status": "completed",
        "output": output,
        "usage": d.usage or {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    }


def encode_compatible(d: Decision, view: View, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if view.mode == "native":
        message["content"] = d.text or None
        if d.calls:
            message["tool_calls"] = [
                {
                    "id": f"chatcmpl-tool-{n}{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(d.calls)
            ]
    else:
        message["content"] = blocks(d)
    finish = "tool_calls" if d.calls and view.mode == "native" else "stop"
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "model": "local",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": d.usage or {"prompt_tokens": 10, "completion_tokens": 5},
    }


def encode_gemini(d: Decision, view: View, n: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if view.mode == "native":
        parts += [{"text": d.text}] if d.text else []
        parts += [
            {"functionCall": {"name": name, "args": args}, "thoughtSignature": f"sig-{n}-{i}"}
            for i, (name, args) in enumerate(d.calls)
        ]
    else:
        parts.append({"text": blocks(d)})
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": d.usage or {"promptTokenCount": 10, "candidatesTokenCount": 5},
    }


CODECS: dict[str, tuple[Callable[[dict[str, Any]], View], Callable[..., dict[str, Any]]]] = {
    "anthropic": (decode_anthropic, encode_anthropic),
    "openai": (decode_openai, encode_openai),
    "compatible": (decode_compatible, encode_compatible),
    "gemini": (decode_gemini, encode_gemini),
}


class QuietServer(ThreadingHTTPServer):
    """A client that hung up (a stopped run abandons its model call) is no error here."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ModelServer:
    """One fake provider endpoint. ``fail_next`` queues raw error replies before real ones;
    ``hang`` and ``stall`` make it never answer, or stop halfway through a reply."""

    def __init__(self, provider: str, brain: Brain) -> None:
        self.provider = provider
        self.brain = brain
        self.requests: list[Recorded] = []
        self.views: list[View] = []
        self.fail_next: list[tuple[int, dict[str, str], dict[str, Any]]] = []
        self.release = threading.Event()  # set to free a handler told to hang or stall
        self.hang = False  # take the request, never answer
        self.stall = False  # answer the headers and half the body, then nothing
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(size))
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append(Recorded(self.path, headers, body))
                if server.hang:
                    server.release.wait(30)
                    return
                if server.fail_next:
                    status, extra, payload = server.fail_next.pop(0)
                else:
                    decode, encode = CODECS[server.provider]
                    view = decode(body)
                    server.views.append(view)
                    status, extra = 200, {}
                    payload = encode(server.brain(view), view, len(server.requests))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                if server.stall:  # a stalled stream: half the body, then nothing
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    server.release.wait(30)
                    return
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        base = f"http://{host}:{port}"
        return f"{base}/v1" if self.provider in ("openai", "compatible") else base

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def serve(provider: str, brain: Brain) -> Iterator[ModelServer]:
    with ModelServer(provider, brain) as server:
        yield server
