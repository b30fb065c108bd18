"""A local HTTP server that plays a scripted model: every POST gets the script's JSON reply.

Used by the native computer-use tests in place of a vendor's API: :func:`vendor_provider` is
the vendor's real adapter (the production HTTP client) with its base URL on the server.
Requests are recorded as sent (path, lower-cased headers, JSON body); a script that raises
answers HTTP 500 with the exception text and the error is recorded, so a test can assert there
were none. :func:`image_of` is the screenshot a vendor's first request carries (what a model
would look at).
"""

from __future__ import annotations

import base64
import io
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

from PIL import Image

from deskpilot.agent.providers import PROVIDERS, Provider


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Script = Callable[[Request, int], dict[str, Any]]  # (request, index) -> reply


class ReplayServer:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    index = len(server.requests)
                    server.requests.append(request)
                    try:
                        reply, status = server.script(request, index), 200
                    except Exception as exc:  # reported to the test, not swallowed
                        server.errors.append(f"request {index}: {type(exc).__name__}: {exc}")
                        reply, status = {"error": {"message": str(exc)}}, 500
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def vendor_provider(spec: str, server: ReplayServer, **options: Any) -> Provider:
    """``vendor:model``'s adapter with its API on ``server`` (e.g. ``…/v1`` for OpenAI)."""
    vendor, _, model = spec.partition(":")
    adapter = PROVIDERS[vendor]
    base = server.url + urlparse(adapter.default_base_url).path
    return adapter(model, api_key="test-key", base_url=base, **options)


def image_of(vendor: str, body: dict[str, Any]) -> Image.Image:
    """The screenshot in a vendor's first request (the goal message)."""
    if vendor == "openai":
        data = body["input"][0]["content"][1]["image_url"].split(",", 1)[1]
    elif vendor == "anthropic":
        data = body["messages"][0]["content"][1]["source"]["data"]
    else:
        data = body["contents"][0]["parts"][1]["inlineData"]["data"]
    return Image.open(io.BytesIO(base64.b64decode(data)))
