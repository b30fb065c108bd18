"""A loopback web server for a trial: serves a task's pages and logs every request.

Checks of kind ``http`` read its log (method, path, query, form fields), which is how a web
task's end state is known: the page reported it to the server, not to the agent. GET serves
files from the directory; any POST is logged and answered with a short "Received" page.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

RECEIVED = b"""<!doctype html><html><head><title>Received</title></head>
<body><h1>Received</h1><p>Thank you, your request was received.</p></body></html>"""


class RequestLog:
    """Requests in arrival order; also appended to ``path`` (JSON lines) as evidence."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.entries: list[dict[str, Any]] = []

    def add(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.entries.append(entry)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry, sort_keys=True) + "\n")

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.entries)


def _form(content_type: str, body: bytes) -> dict[str, list[str]]:
    if content_type.startswith("application/x-www-form-urlencoded"):
        return parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    if content_type.startswith("application/json"):
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            return {}
        if isinstance(data, dict):
            return {str(k): [v if isinstance(v, str) else json.dumps(v)] for k, v in data.items()}
    return {}


def _handler(root: Path, log: RequestLog) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def _record(self, body: bytes = b"") -> None:
            parts = urlsplit(self.path)
            log.add(
                {
                    "ts": time.time(),
                    "method": self.command,
                    "path": parts.path,
                    "query": parse_qs(parts.query, keep_blank_values=True),
                    "form": _form(self.headers.get("Content-Type", ""), body),
                }
            )

        def do_GET(self) -> None:
            self._record()
            super().do_GET()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._record(self.rfile.read(min(length, 1 << 20)))
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(RECEIVED)))
            self.end_headers()
            self.wfile.write(RECEIVED)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the request log is the record

    return Handler


@contextmanager
def serve(root: Path, log: RequestLog) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (a free port); yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(root, log))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="eval-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
