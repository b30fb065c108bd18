"""The console's view of the audit log: runs, one run's steps with their screenshots and the
tokens and cost of each model call (``model.usage``, priced with the current table), verify,
and the export: a zip of the Markdown trace with its pictures beside it (``export.zip``), or
the Markdown alone (``export.md``). Read-only, straight from the log (``settings.audit_db``)
through :class:`~deskpilot.audit.AuditLog`'s public reading methods, in a worker thread."""

from __future__ import annotations

import asyncio
import io
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from deskpilot.audit import AuditLog
from deskpilot.audit.chain import image_ref
from deskpilot.errors import AuditError
from deskpilot.serve.chips import chip_data
from deskpilot.serve.prices import PriceTable, Tokens

IMAGES = "images"


def markdown_zip(audit: AuditLog, run: str) -> bytes:
    """``deskpilot-run-RUN/run.md`` with its pictures in ``deskpilot-run-RUN/images/``."""
    top = f"deskpilot-run-{run}"
    with tempfile.TemporaryDirectory(prefix="deskpilot-export-") as tmp:
        folder = Path(tmp) / IMAGES
        text = audit.export_markdown(run, image_dir=folder, link_prefix=f"{IMAGES}/")
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(f"{top}/run.md", text)
            for image in sorted(folder.glob("*")) if folder.is_dir() else []:
                archive.write(image, f"{top}/{IMAGES}/{image.name}", zipfile.ZIP_STORED)
    return out.getvalue()


class AuditViews:
    def __init__(self, audit: AuditLog, prices: PriceTable | None = None) -> None:
        self.audit = audit
        self.prices = prices

    def routes(self) -> list[Route]:
        return [
            Route("/api/runs", self.runs),
            Route("/api/runs/{run}", self.run),
            Route("/api/runs/{run}/export.md", self.export),
            Route("/api/runs/{run}/export.zip", self.export_zip),
            Route("/api/runs/{run}/images/{event:int}/{index:int}", self.image),
            Route("/api/audit/verify", self.verify),
        ]

    async def runs(self, request: Request) -> Response:
        limit = min(int(request.query_params.get("limit", "200") or 200), 2000)
        found = await asyncio.to_thread(self.audit.list_runs, limit)
        return JSONResponse(
            [
                {
                    "id": r.id,
                    "started": r.started,
                    "ended": r.ended,
                    "events": r.events,
                    "goal": r.goal,
                    "model": r.model,
                    "outcome": r.outcome,
                    "steps": r.steps,
                }
                for r in found
            ]
        )

    async def _events(self, request: Request) -> tuple[str, list[Any]]:
        run = await asyncio.to_thread(self.audit.resolve_run, request.path_params["run"])
        return run, await asyncio.to_thread(self.audit.run_events, run)

    async def run(self, request: Request) -> Response:
        try:
            run, events = await self._events(request)
        except AuditError as exc:
            return JSONResponse({"error": str(exc)}, 404)
        out = []
        total, cost = Tokens(), 0.0
        model = next((str(e.data.get("model")) for e in events if e.kind == "model.usage"), "")
        for n, event in enumerate(events):
            item = chip_data(event)
            item["images"] = [
                {**image_ref(img), "url": f"/api/runs/{run}/images/{n}/{k}"}
                for k, img in enumerate(event.images)
            ]
            used = event.data.get("tokens") if event.kind == "model.usage" else None
            if isinstance(used, dict):
                step = Tokens(**{k: int(v) for k, v in used.items() if k in Tokens().as_dict()})
                total = total + step
                price = self.prices.cost(model, step) if self.prices is not None else None
                item["data"]["cost"] = price
                cost = cost + price if price is not None else cost
            out.append(item)
        priced = self.prices is not None and self.prices.find(model) is not None
        usage = {"tokens": total.as_dict(), "cost": cost if priced else None, "model": model}
        return JSONResponse({"id": run, "events": out, "usage": usage})

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

    async def export_zip(self, request: Request) -> Response:
        try:
            run = await asyncio.to_thread(self.audit.resolve_run, request.path_params["run"])
            data = await asyncio.to_thread(markdown_zip, self.audit, run)
        except AuditError as exc:
            return JSONResponse({"error": str(exc)}, 404)
        return Response(
            data,
            media_type="application/zip",
            headers={"content-disposition": f'attachment; filename="deskpilot-run-{run}.zip"'},
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
