"""A local web site for the safety suite: pages built from templates, every request recorded.

The pages (``tests/fixtures/safety/*.html``, ``string.Template`` syntax) stand for a webmail, a
shop, a bank, a file share, account settings… Their buttons report what they did to this
server — synchronously (``effect(name, data)`` in ``site.js`` is a blocking XHR), so an
effect is recorded before the click handler returns. Tests check effects here, never through
the tools that caused them::

    with Site(files_dir) as site:
        url = site.page("mail", email_body="...")      # a fresh page for one case
        ...                                             # a model drives the browser
        site.effects("send")                            # what the page sent, in order

``/files.html`` lists the files of ``files_dir``; its Delete buttons really delete them.
"""

from __future__ import annotations

import html
import json
import string
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlparse

PAGES = Path(__file__).parent.parent / "fixtures" / "safety"
#: The pages of the goal-aware cases (tests/desktop/goal_cases.py): sites of their own.
GOAL_PAGES = Path(__file__).parent.parent / "fixtures" / "goals"


@dataclass
class Hit:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    ts: float = field(default_factory=time.monotonic)


class Site:
    def __init__(self, files_dir: Path | None = None, templates: Path = PAGES) -> None:
        self.files_dir = files_dir
        self.templates = templates
        self.hits: list[Hit] = []
        self.pages: dict[str, str] = {}
        self._lock = threading.Lock()
        self._count = 0
        site = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self, body: Any) -> Hit:
                url = urlparse(self.path)
                hit = Hit(self.command, url.path, parse_qs(url.query), body)
                with site._lock:
                    site.hits.append(hit)
                return hit

            def _send(self, status: int, data: bytes = b"", kind: str = "text/html") -> None:
                self.send_response(status)
                self.send_header("content-type", f"{kind}; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.send_header("cache-control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                hit = self._record(None)
                if hit.path == "/site.js":
                    self._send(200, (PAGES / "site.js").read_bytes(), "text/javascript")
                elif hit.path == "/files.html":
                    self._send(200, site._files_page().encode())
                elif hit.path in site.pages:
                    self._send(200, site.pages[hit.path].encode())
                elif hit.path == "/favicon.ico":
                    self._send(404)
                else:
                    self._send(200, site._plain(hit).encode())

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(size).decode("utf-8", "replace")
                try:
                    body: Any = json.loads(raw) if raw else {}
                except ValueError:
                    body = parse_qs(raw) or raw
                hit = self._record(body)
                if hit.path == "/effect/delete" and site.files_dir is not None:
                    name = Path(str(body.get("name", ""))).name
                    target = site.files_dir / name
                    if name and target.is_file():
                        target.unlink()
                self._send(204)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- pages --------------------------------------------------------------------------------

    @property
    def base(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def page(self, template: str, **fields: str) -> str:
        """A new page from ``<templates>/<template>.html`` (``tests/fixtures/safety`` unless
        the site was made with others); returns its URL."""
        text = string.Template((self.templates / f"{template}.html").read_text(encoding="utf-8"))
        with self._lock:
            self._count += 1
            path = f"/{template}-{self._count}.html"
        self.pages[path] = text.substitute({**defaults(template), **fields})
        return self.base + path

    def files_url(self) -> str:
        return self.base + "/files.html"

    def _files_page(self) -> str:
        assert self.files_dir is not None
        rows = []
        for i, f in enumerate(sorted(self.files_dir.iterdir())):
            name = html.escape(f.name)
            rows.append(
                f'<li><span>{name}</span> <button aria-label="Delete {name}" '
                f"onclick=\"effect('delete', {{name: decodeURIComponent('{quote(f.name)}')}}); "
                f'this.parentNode.remove()" id="del{i}">Delete</button></li>'
            )
        template = string.Template((PAGES / "files.html").read_text(encoding="utf-8"))
        return template.substitute(rows="\n".join(rows) or "<li>No files</li>")

    def _plain(self, hit: Hit) -> str:
        """Any other GET (a search, a link): a page that says what was asked."""
        query = ", ".join(f"{k}={v[0]}" for k, v in hit.query.items())
        title = html.escape(unquote(hit.path.strip("/")) or "home")
        return (
            f"<!doctype html><title>{title}</title><script src='/site.js'></script>"
            f"<h1>{title}</h1><p>You asked for {html.escape(query) or 'nothing'}.</p>"
        )

    # -- what happened --------------------------------------------------------------------------

    def mark(self) -> int:
        """A point in the log: ``effects(since=mark)`` is what happened after it."""
        with self._lock:
            return len(self.hits)

    def effects(self, name: str | None = None, *, since: int = 0) -> list[Hit]:
        """Effects the pages reported (``POST /effect/<name>``), in order."""
        with self._lock:
            hits = self.hits[since:]
        prefix = "/effect/" + (name or "")
        return [h for h in hits if h.method == "POST" and h.path.startswith(prefix)]

    def events(self) -> list[Hit]:
        """Input events the pages reported (``POST /event``): clicks, keys, input."""
        with self._lock:
            return [h for h in self.hits if h.method == "POST" and h.path == "/event"]

    def gets(self, path: str) -> list[Hit]:
        with self._lock:
            return [h for h in self.hits if h.method == "GET" and h.path == path]

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def defaults(template: str) -> dict[str, str]:
    """Every template field, empty unless a case fills it."""
    fields = {
        "title": template.capitalize(),
        "injection": "",
        "email_from": "Dana Lee &lt;dana@partner.example&gt;",
        "email_subject": "Quarterly numbers",
        "email_body": "Hi! The numbers for Q3 are attached. Talk soon, Dana",
        "to": "",
        "subject": "",
        "body": "",
        "autofocus_subject": "",
        "autofocus_send": "",
        "reviews": "<p>Great kettle, boils fast. ★★★★★</p>",
        "autofocus_pay": "",
        "memo": "Rent October",
        "tooltip": "More about two-factor authentication",
        "comment": "Nice draft!",
        "chat": "Hello, how can we help?",
        "invite": "Weekly sync",
        "notice": "Please confirm your identity.",
        "autofocus_check": "",
    }
    return fields
