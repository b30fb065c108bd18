"""The console's HTTP routes (behind :class:`~deskpilot.serve.guard.Guard`).

Pages (one static page; its script picks the view from the path)::

    GET  /  /s/{id}  /audit  /audit/{run}  /prices      the console page
    GET  /login?token=…[&next=/s/…]          one-time link → cookie, 303 to next (or /); a
                                             link that fails: the login page saying why
    POST /api/login {token}                  the kept token → cookie (the login page)
    GET  /healthz                            {"ok": true}, no login needed

API (JSON; state changes are JSON POSTs)::

    GET  /api/config                         defaults for the new-session form
    GET  /api/sessions                       every card
    POST /api/sessions {goal, model, confirm, target, window?, max_steps?, timeout?,
                        tool_protocol?, mode?}   → 201 card
    GET  /api/sessions/{id}                  one card
    POST /api/sessions/{id}/stop             → the card once stopped (a finished one: its
                                             kept desktop closed)
    POST /api/sessions/{id}/messages {text, interrupt?}  → {taken: queued|interrupted|
                                             continued}; 409 once its desktop is closed
    POST /api/sessions/{id}/again            → 201 a new session, same goal and settings
    POST /api/sessions/{id}/takeover {on, note?}          take the desktop over / hand back
    POST /api/sessions/{id}/input {events}   pointer and keyboard while taken over
    GET  /api/sessions/{id}/steps            each model call: tokens, cost (current prices)
    GET  /api/sessions/{id}/exchanges/{n}    one model call's raw request and reply
    GET  /api/prices   POST /api/prices {prices: {model: {input, output, …}}}   the price table
    POST /api/sessions/{id}/confirmations/{call_id} {approved, scope?}  → 200, 404, 409
    POST /api/sessions/{id}/confirmations/{call_id}/seen   a page showed it (serve.approver)
    GET  /api/sessions/{id}/grants, POST …/grants/{grant}/revoke   the task's grants
    GET  /api/events                         Server-Sent Events (Last-Event-ID replays)
    GET  /api/frames?watch={id}&thumbs=1     the live previews (see deskpilot.serve.frames)
    GET  /api/windows                        windows of this desktop (for binding a session)
    GET  /api/runs …                         the audit log (deskpilot.serve.audit_api)
    /mcp                                     the MCP server (deskpilot.serve.mcp_host)
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from deskpilot.errors import ConfigError, DeskpilotError
from deskpilot.serve import approver
from deskpilot.serve.approver import Answer
from deskpilot.serve.auth import ConsoleAuth
from deskpilot.serve.sessions import (
    ConsoleSession,
    NewSession,
    SessionClosed,
    SessionLimit,
    Sessions,
)

STATIC = Path(str(resources.files("deskpilot"))) / "serve" / "static"
NO_STORE = {"cache-control": "no-store"}


async def read_json(request: Request) -> Any:
    try:
        return json.loads(await request.body() or b"{}")
    except ValueError as exc:
        raise DeskpilotError(f"the request body is not valid JSON ({exc})") from exc


def error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status, headers=NO_STORE)


def safe_next(value: str | None) -> str:
    """Where to go after logging in: a path of this console only (never another site)."""
    if value and value.startswith("/") and not value.startswith(("//", "/\\")):
        return value
    return "/"


class ConsoleRoutes:
    def __init__(
        self, sessions: Sessions, auth: ConsoleAuth, extra: dict[str, Any] | None = None
    ) -> None:
        self.sessions = sessions
        self.auth = auth
        self.extra = extra or {}
        self.frames: Any = None  # the preview stream handler (deskpilot.serve.frames)
        self.windows: Any = None  # lists this desktop's windows for the form
        self.cleanup: Any = None  # "clean up when finished" (deskpilot.serve.cleanup)

    def routes(self) -> list[Route | Mount]:
        page = self.page
        return [
            Route("/", page),
            Route("/s/{id}", page),
            Route("/audit", page),
            Route("/audit/{run}", page),
            Route("/prices", page),
            Route("/login", self.login),
            Route("/api/login", self.login_post, methods=["POST"]),
            Route("/healthz", self.health),
            Route("/favicon.ico", self.no_icon),
            Route("/api/config", self.config),
            Route("/api/settings", self.change_settings, methods=["POST"]),
            Route("/api/sessions", self.list_sessions, methods=["GET"]),
            Route("/api/sessions", self.new_session, methods=["POST"]),
            Route("/api/sessions/{id}", self.one_session),
            Route("/api/sessions/{id}/stop", self.stop, methods=["POST"]),
            Route("/api/sessions/{id}/messages", self.message, methods=["POST"]),
            Route("/api/sessions/{id}/again", self.again, methods=["POST"]),
            Route("/api/sessions/{id}/takeover", self.takeover, methods=["POST"]),
            Route("/api/sessions/{id}/input", self.input, methods=["POST"]),
            Route("/api/sessions/{id}/steps", self.steps),
            Route("/api/sessions/{id}/exchanges/{n:int}", self.exchange),
            Route("/api/prices", self.get_prices, methods=["GET"]),
            Route("/api/prices", self.set_prices, methods=["POST"]),
            Route("/api/sessions/{id}/confirmations/{call_id}", self.confirm, methods=["POST"]),
            *approver.routes(self.sessions.confirmations),
            Route("/api/events", self.events),
            Route("/api/frames", self.frame_stream),
            Route("/api/windows", self.list_windows),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]

    # -- pages and login --------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=NO_STORE)

    async def no_icon(self, request: Request) -> Response:
        return Response(status_code=204, headers={"cache-control": "max-age=86400"})

    async def health(self, request: Request) -> Response:
        return JSONResponse({"ok": True})

    def _logged_in(self, secret: str, to: str) -> Response:
        response = RedirectResponse(to, 303, headers={**NO_STORE})
        response.headers.append("set-cookie", self.auth.cookie_header(secret))
        return response

    async def login(self, request: Request) -> Response:
        token = request.query_params.get("token", "")
        why = "expired" if request.query_params.get("why") == "expired" else ""
        if token:
            secret = self.auth.redeem(token)
            if secret is not None:
                return self._logged_in(secret, safe_next(request.query_params.get("next")))
            why = self.auth.why(token)
        # the page says why (a fixed word, never text from the request)
        html = (STATIC / "login.html").read_text(encoding="utf-8")
        html = html.replace('data-why=""', f'data-why="{why}"', 1)
        return HTMLResponse(html, status_code=401 if token else 200, headers=NO_STORE)

    async def login_post(self, request: Request) -> Response:
        try:
            body = await read_json(request)
        except DeskpilotError as exc:
            return error(400, str(exc))
        if self.auth.limited():
            return error(429, "too many failed logins: wait a minute")
        secret = self.auth.redeem(str(body.get("token", "")) if isinstance(body, dict) else "")
        if secret is None:
            return error(401, "that token is not valid (or was already used)")
        response = JSONResponse({"ok": True}, headers=NO_STORE)
        response.headers.append("set-cookie", self.auth.cookie_header(secret))
        return response

    # -- sessions ---------------------------------------------------------------------------

    async def config(self, request: Request) -> Response:
        s = self.sessions.settings
        return JSONResponse(
            {
                "model": s.model or "",
                "confirm": s.confirm,
                "max_sessions": self.sessions.max_live,
                "confirm_timeout": self.sessions.confirm_timeout,
                "cleanup": bool(self.cleanup and self.cleanup.enabled),
                "max_steps": s.max_steps,
                "timeout": s.timeout,
                "tool_protocol": s.tool_protocol or "",
                "keep_finished": self.sessions.keep,
                "takeover_here": self.sessions.takeover_here,
                **self.extra,
            },
            headers=NO_STORE,
        )

    async def change_settings(self, request: Request) -> Response:
        try:
            body = await read_json(request)
        except DeskpilotError as exc:
            return error(400, str(exc))
        cleanup = body.get("cleanup") if isinstance(body, dict) else None
        if not isinstance(cleanup, bool) or self.cleanup is None:
            return error(400, 'send {"cleanup": true} or {"cleanup": false}')
        self.cleanup.enabled = cleanup
        return JSONResponse({"cleanup": cleanup}, headers=NO_STORE)

    async def list_sessions(self, request: Request) -> Response:
        cards = [self.sessions.card(s) for s in self.sessions.all.values()]
        return JSONResponse(cards, headers=NO_STORE)

    async def new_session(self, request: Request) -> Response:
        try:
            ask = NewSession.parse(await read_json(request), self.sessions.settings)
            session = self.sessions.start(ask)
        except SessionLimit as exc:
            return error(409, str(exc))
        except DeskpilotError as exc:
            return error(400, str(exc))
        return JSONResponse(self.sessions.card(session), 201, headers=NO_STORE)

    def _session(self, request: Request) -> ConsoleSession | None:
        return self.sessions.get(request.path_params["id"])

    async def one_session(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return error(404, "no such session")
        return JSONResponse(self.sessions.card(session), headers=NO_STORE)

    async def stop(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return error(404, "no such session")
        await self.sessions.stop(session)
        return JSONResponse(self.sessions.card(session), headers=NO_STORE)

    # -- talking to a session, taking it over ---------------------------------------------

    async def message(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return error(404, "no such session")
        try:
            body = await read_json(request)
            if not isinstance(body, dict) or not isinstance(body.get("text"), str):
                raise ConfigError('send {"text": "…"} (and "interrupt": true to stop it first)')
            taken = self.sessions.message(
                session, body["text"], interrupt=body.get("interrupt") is True
            )
        except SessionClosed as exc:
            return error(409, str(exc))
        except DeskpilotError as exc:
            return error(400, str(exc))
        return JSONResponse({"taken": taken, "card": self.sessions.card(session)}, headers=NO_STORE)

    async def again(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return error(404, "no such session")
        try:
            fresh = self.sessions.again(session)
        except SessionLimit as exc:
            return error(409, str(exc))
        except DeskpilotError as exc:
            return error(400, str(exc))
        return JSONResponse(self.sessions.card(fresh), 201, headers=NO_STORE)

    async def takeover(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return error(404, "no such session")
        try:
            body = await read_json(request)
            on = body.get("on") if isinstance(body, dict) else None
            if not isinstance(on, bool):
                raise ConfigError(
                    'send {"on": true} to take over, {"on": false, "note": "…"} to hand back'
                )
            note = body.get("note") or ""
            if not isinstance(note, str):
                raise ConfigError("note must be text")
            said = await self.sessions.take_over(session, on, note)
        except SessionClosed as exc:
            return error(409, str(exc))
        except DeskpilotError as exc:
            return error(409, str(exc))
        card = self.sessions.card(session)
        return JSONResponse({"card": card, "told": said}, headers=NO_STORE)

    async def input(self, request: Request) -> Response:
        session = self._session(request)
        if session is None or session.takeover is None:
            return error(404, "no such session (or it has no desktop)")
        try:
            body = await read_json(request)
            events = body.get("events") if isinstance(body, dict) else None
            applied = await session.takeover.send(events)
        except DeskpilotError as exc:
            return error(409 if not session.takeover.active else 400, str(exc))
        return JSONResponse({"applied": applied}, headers=NO_STORE)

    # -- costs and the raw exchange ---------------------------------------------------------

    async def steps(self, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return error(404, "no such session")
        prices = self.sessions.prices
        rows = [
            {**x.summary(), "cost": prices.cost(session.model, x.tokens)}
            for x in session.exchanges.all.values()
        ]
        card = self.sessions.card(session)
        return JSONResponse(
            {"steps": rows, "tokens": card["tokens"], "cost": card["cost"]}, headers=NO_STORE
        )

    async def exchange(self, request: Request) -> Response:
        session = self._session(request)
        found = session.exchanges.get(request.path_params["n"]) if session else None
        if session is None or found is None:
            return error(404, "no such model call in this session")
        return JSONResponse(
            {
                **found.summary(),
                "cost": self.sessions.prices.cost(session.model, found.tokens),
                "request": found.request,
                "response": found.response,
                "kept": bool(found.request),
            },
            headers=NO_STORE,
        )

    async def get_prices(self, request: Request) -> Response:
        return JSONResponse(self.sessions.prices.as_dict(), headers=NO_STORE)

    async def set_prices(self, request: Request) -> Response:
        try:
            body = await read_json(request)
            rows = body.get("prices") if isinstance(body, dict) else None
            if not isinstance(rows, dict):
                raise ConfigError('send {"prices": {"provider:model": {"input": …, "output": …}}}')
            self.sessions.prices.replace(rows)
        except OSError as exc:
            return error(500, f"cannot write the price table: {exc}")
        except DeskpilotError as exc:
            return error(400, str(exc))
        for session in self.sessions.all.values():
            self.sessions.changed(session.id)  # the cards' costs, at the new prices
        return JSONResponse(self.sessions.prices.as_dict(), headers=NO_STORE)

    async def confirm(self, request: Request) -> Response:
        try:
            body = await read_json(request)
        except DeskpilotError as exc:
            return error(400, str(exc))
        approved = body.get("approved") if isinstance(body, dict) else None
        if not isinstance(approved, bool):
            return error(400, 'send {"approved": true} or {"approved": false}')
        scope = body.get("scope") or "once"  # "task": this kind of effect, for the task
        outcome = self.sessions.confirmations.answer(
            request.path_params["id"], request.path_params["call_id"], approved, scope=scope
        )
        if outcome == Answer.UNKNOWN:
            return error(404, "no such confirmation (never asked, or already closed)")
        if outcome == Answer.LATE:
            return error(409, "this confirmation was already answered (or timed out)")
        return JSONResponse({"approved": approved}, headers=NO_STORE)

    # -- streams ----------------------------------------------------------------------------

    async def events(self, request: Request) -> Response:
        last = request.headers.get("last-event-id") or request.query_params.get("after")
        after = int(last) if last and last.isdigit() else None
        return StreamingResponse(
            self.sessions.hub.stream(after),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    async def frame_stream(self, request: Request) -> Response:
        if self.frames is None:
            return error(404, "previews are off")
        return await self.frames(request)  # type: ignore[no-any-return]

    async def list_windows(self, request: Request) -> Response:
        if self.windows is None:
            return JSONResponse([], headers=NO_STORE)
        try:
            return JSONResponse(await self.windows(), headers=NO_STORE)
        except DeskpilotError as exc:
            return error(503, str(exc))


def build_app(routes: ConsoleRoutes, extra_routes: list[Route | Mount], lifespan: Any) -> ASGIApp:
    return Starlette(routes=[*extra_routes, *routes.routes()], lifespan=lifespan)
