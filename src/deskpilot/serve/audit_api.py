"""The console's view of the audit log: runs, one run's steps with their screenshots, verify,
Markdown export. Read-only, straight from the log (``settings.audit_db``) through
:class:`~deskpilot.audit.AuditLog`'s public reading methods, in a worker thread."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from deskpilot.audit import AuditLog
from deskpilot.audit.chain import image_ref
from deskpilot.errors import AuditError
from deskpilot.serve.chips import chip_data


class AuditViews:
    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    def routes(self) -> list[Route]:
        return [
            Route("/api/runs", self.runs),
            Route("/api/runs/{run}", self.run),
            Route("/api/runs/{run}/export.md", self.export),
            Route("/api/runs/{run}/images/{event:int}/{index:int}", self.image),
            Route("/api/audit/verify", self.verify),
        ]

    async def runs(self, request: Request) -> Response:
        limit = min(int(request.query_params.get("limit", "200") or 200), 2000)
        found = await asyncio.to_thread(self.audit.list_runs, limit)
        return JSONResponse(
            [
                {
                    "id": r.id, "started": r.started, "ended": r.ended, "events": r.events,
                    "goal": r.goal, "model": r.model, "outcome": r.outcome, "steps": r.steps,
                }
                for r in found
            ]
        )  # fmt: skip

    async def _events(self, request: Request) -> tuple[str, list[Any]]:
        run = await asyncio.to_thread(self.audit.resolve_run, request.path_params["run"])
        return run, await asyncio.to_thread(self.audit.run_events, run)

    async def run(self, request: Request) -> Response:
        try:
            run, events = await self._events(request)
        except AuditError as exc:
            return JSONResponse({"error": str(exc)}, 404)
        out = []
        for n, event in enumerate(events):
            item = chip_data(event)
            item["images"] = [
                {**image_ref(img), "url": f"/api/runs/{run}/images/{n}/{k}"}
                for k, img in enumerate(event.images)
            ]
            out.append(item)
        return JSONResponse({"id": run, "events": out})

    async def image(self, request: Request) -> Response:
        try:
            _, events = await self._events(request)
            event = events[request.path_params["event"]]
            image = event.images[request.path_params["index"]]
        except (AuditError, IndexError):
            return JSONResponse({"error": "no such image"}, 404)
        return Response(
            image.data, media_type=image.mime, headers={"cache-control": "private, max-age=3600"}
        )

    async def export(self, request: Request) -> Response:
        try:
            run = await asyncio.to_thread(self.audit.resolve_run, request.path_params["run"])
            text = await asyncio.to_thread(self.audit.export_markdown, run)
        except AuditError as exc:
            return JSONResponse({"error": str(exc)}, 404)
        return Response(
            text,
            media_type="text/markdown; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="deskpilot-run-{run}.md"'},
        )

    async def verify(self, request: Request) -> Response:
        report = await asyncio.to_thread(self.audit.verify)
        return JSONResponse(
            {
                "ok": report.ok,
                "problems": [str(p) for p in report.problems][:50],
                "events": report.events,
                "runs": report.runs,
                "head": {"seq": report.head_seq, "hash": report.head_hash},
            }
        )
