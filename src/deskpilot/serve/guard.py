"""The console's front door for HTTP: every request is checked here before any route runs.

In order (each answer is final, nothing behind it runs):

1. ``Host`` must name this server (127.0.0.1, localhost or [::1] at our port, or the address
   it was told to listen on): else 421 (DNS rebinding).
2. ``Origin``, when sent, must be this server's own origin: else 403 (another site, or another
   local server: ports do not separate cookies). ``Sec-Fetch-Site``, when sent, must be
   ``same-origin`` or ``none`` (typed or bookmarked): else 403.
3. Only GET, HEAD and POST; a POST must be ``application/json`` (else 415), and one that
   relies on the cookie must carry our ``Origin`` (browsers always send it on POST).
4. Outside the public paths (login, health, the login page's files) the cookie or
   ``Authorization: Bearer`` is required: else 401. ``/mcp`` has its own bearer check
   (:class:`deskpilot.mcp.transports.BearerAuth`), so this one is skipped there. A page
   opened without a login (a bookmark; a tab reopened after a restart) is sent to the login
   page instead (303 to ``/login?next=…``, with ``why=expired`` when it had an old cookie),
   which comes back to it after logging in.

Every answer gets a strict Content-Security-Policy (scripts and styles only from this server,
no inline code, images from here or blob:, no framing), ``X-Frame-Options: DENY``, nosniff and
no referrer, so text from a screen can never run as code in the page that approves actions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import quote

from starlette.responses import JSONResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deskpilot.serve.auth import ConsoleAuth

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
PUBLIC = (
    "/login",
    "/api/login",
    "/healthz",
    "/static/login.js",
    "/static/console.css",
    "/favicon.ico",
)
#: The console's pages (what a browser opens; the API and static files are not pages).
PAGES = re.compile(r"/(s/[^/]+|audit(/[^/]+)?|prices)?")
MCP_PREFIX = "/mcp"


class Guard:
    """ASGI middleware doing the checks above (see the module docstring)."""

    def __init__(self, app: ASGIApp, auth: ConsoleAuth, hosts: Iterable[str]) -> None:
        self.app = app
        self.auth = auth
        self.hosts = {h.lower() for h in hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self.check(scope, headers)
        if problem is not None:
            status, text = problem
            if status == 401 and scope["method"] == "GET" and PAGES.fullmatch(scope["path"]):
                await _to_login(scope, receive, send, headers, self.auth.cookie_name)
                return
            await _answer(scope, receive, send, status, text)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                extra = [h for h in SECURITY_HEADERS if h[0] not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, secured)

    def check(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        """None when the request may go on, else (status, reason)."""
        host = headers.get("host", "").lower()
        if host not in self.hosts:
            return 421, f"Host {host or '(none)'!r} is not this console"
        origin = headers.get("origin")
        if origin is not None and origin.lower() != f"http://{host}":
            return 403, f"requests from {origin!r} are refused (not this console's origin)"
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return 403, f"cross-site requests are refused (Sec-Fetch-Site: {site})"
        method = scope["method"]
        path = str(scope["path"])
        if path == MCP_PREFIX or path.startswith((MCP_PREFIX + "/", "/.well-known/")):
            return None  # the MCP app checks its bearer token and its own headers
        if method not in ("GET", "HEAD", "POST"):
            return 405, f"method {method} is not allowed"
        if method == "POST":
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return 415, "state changes must be JSON POSTs (Content-Type: application/json)"
        if path in PUBLIC:
            return None
        if self.auth.bearer_ok(headers.get("authorization")):
            return None
        if self.auth.cookie_ok(_cookie(headers.get("cookie", ""), self.auth.cookie_name)):
            if method == "POST" and origin is None:
                return 403, "a POST made with the console's cookie must carry its Origin"
            return None
        return 401, (
            "not logged in: open the link `deskpilot serve` printed, or send "
            "'Authorization: Bearer TOKEN' (`deskpilot mcp token` prints it)"
        )


def _cookie(header: str, name: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


async def _answer(scope: Scope, receive: Receive, send: Send, status: int, text: str) -> None:
    headers = {"cache-control": "no-store", **{k.decode(): v.decode() for k, v in SECURITY_HEADERS}}
    await JSONResponse({"error": text}, status, headers=headers)(scope, receive, send)


async def _to_login(
    scope: Scope, receive: Receive, send: Send, headers: dict[str, str], cookie: str
) -> None:
    """A page opened without a login: to the login page, which brings the person back."""
    stale = _cookie(headers.get("cookie", ""), cookie) is not None
    target = f"/login?next={quote(str(scope['path']), safe='/')}" + ("&why=expired" * stale)
    extra = {k.decode(): v.decode() for k, v in SECURITY_HEADERS}
    response = RedirectResponse(target, 303, headers={"cache-control": "no-store", **extra})
    await response(scope, receive, send)
