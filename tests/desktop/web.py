"""A loopback HTTP server for the web fixture pages, recording what the pages report.

It serves ``tests/fixtures/web`` and accepts ``POST /event`` (a JSON object) from the pages'
``report()`` (``report.js``): what a person's action did on the page reaches the test through
this server, a channel the tools do not use.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskpilot._wait import async_wait_for

if TYPE_CHECKING:
    from tests.desktop.conftest import Call

PAGES = Path(__file__).parent.parent / "fixtures" / "web"


class _Quiet(ThreadingHTTPServer):
    """A browser that closes a connection early (a tab closed mid-request) is no error."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class PageServer:
    """Serves the fixture pages; ``events`` holds what they reported, in order."""

    def __init__(self, root: Path = PAGES) -> None:
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(root), **kwargs)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                try:
                    event = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    event = {"kind": "bad-json"}
                with server._lock:
                    server.events.append(event)
                self.send_response(204)
                self.end_headers()

            def end_headers(self) -> None:
                self.send_header("Cache-Control", "no-store")
                super().end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = _Quiet(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def url(self, page: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/{page}"

    def of(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        """The events of one kind (and with these field values) reported so far."""
        with self._lock:
            return [
                e
                for e in self.events
                if e.get("kind") == kind and all(e.get(k) == v for k, v in match.items())
            ]

    async def wait_for(self, kind: str, timeout: float = 10.0, **match: Any) -> dict[str, Any]:
        """The first event of ``kind`` (with these field values); waits until a page sends it."""

        async def seen() -> dict[str, Any] | None:
            found = self.of(kind, **match)
            return found[0] if found else None

        return await async_wait_for(seen, timeout=timeout, what=f"the page to report {kind!r}")

    def clear(self) -> None:
        with self._lock:
            self.events.clear()

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def color_center(png: bytes, rgb: tuple[int, int, int]) -> tuple[int, int]:
    """The centre of the pixels of exactly this colour in a screenshot (a test's eyes)."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        rgb_img = img.convert("RGB")
        width, height = rgb_img.size
        data = rgb_img.tobytes()
    want = bytes(rgb)
    xs: list[int] = []
    ys: list[int] = []
    for i in range(0, len(data), 3):
        if data[i : i + 3] == want:
            xs.append((i // 3) % width)
            ys.append((i // 3) // width)
    assert xs, f"no pixel of colour {rgb} in the {width}x{height} screenshot"
    return (min(xs) + max(xs)) // 2, (min(ys) + max(ys)) // 2


#: Controls whose icon a person clicks to press them.
CONTROLS = frozenset({"push-button", "toggle-button", "link", "menu-item", "page-tab"})


async def reached(
    desktop: Any, window: Any, operables: list[dict[str, Any]]
) -> list[tuple[str, tuple[str, str] | None, str]]:
    """For each operable element a page reported: (label, the node a read must show for it,
    what was hit). Its centre is hit-tested on the accessibility tree (``element_at``, a
    channel the read does not use); from the node hit, text nodes (and an icon inside a
    button) are passed up to the element they belong to."""
    snap = await desktop.snapshot(window, fresh=True)
    doc = next(n for n in snap.nodes() if n.role == "document-web" and "showing" in n.states)
    out = []
    for item in operables:
        x, y = doc.bounds.x + item["x"], doc.bounds.y + item["y"]
        node = await desktop.element_at(x, y)
        for _ in range(4):
            if node is None or node.parent_key is None:
                break
            if node.role in ("image", "icon"):  # an icon inside a button is the button
                parent = await desktop.inspect(node.parent_key)
                if parent is None or parent.role not in CONTROLS:
                    break
                node = parent
                continue
            if node.role not in ("static", "text", "label"):
                break
            node = await desktop.inspect(node.parent_key)
        what = f"{node.role} {node.name!r}" if node is not None else "nothing"
        out.append((item["label"], node.key if node is not None else None, f"at {x},{y}: {what}"))
    return out


async def uncovered(
    desktop: Any, ctx: Any, window: Any, operables: list[dict[str, Any]], shown: set[str]
) -> list[str]:
    """The page's operable elements (its ``operables`` report) that no ID of a read reaches:
    the node :func:`reached` finds for each must carry one of the IDs ``shown`` (whose
    session records give their keys)."""
    keys = {ctx.session.elements[eid].key for eid in shown}
    return [
        f"{label} ({where})"
        for label, key, where in await reached(desktop, window, operables)
        if key not in keys
    ]


async def open_page(call: Call, pages: PageServer, page: str) -> str:
    """Open a fixture page through the tools; its first read."""
    pages.clear()
    # a window of its own in the module's browser (closed when the test ends)
    opened = await call("open_urls", {"urls": [pages.url(page)], "new_window": True})
    assert not opened.is_error, opened.text
    read = await call("read_screen_ax")
    assert not read.is_error, read.text
    return read.text
