"""ToolSet: the one door every surface uses to call a tool.

``ToolSet.call(name, args, ctx)`` looks the tool up, validates the arguments, decides whether a
person must approve (declared risk, raised per call by the tool's ``assess`` hook, against the
confirm mode), emits the events the audit log and the chips are made of, runs the tool, and turns
expected failures into error results the model can read. Bugs become a fixed-phrase error result
(never a traceback in the model's context) and are logged with their traceback.
"""

from __future__ import annotations

import builtins
import json
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from deskpilot.desktop.live import lost_reason
from deskpilot.errors import (
    ActionDeclined,
    DeskpilotError,
    InvalidArguments,
    ToolError,
    UnknownTool,
)
from deskpilot.events import Event
from deskpilot.policy import ApprovalRequest, Risk, needs_confirmation
from deskpilot.tools.base import ToolResult, ToolSpec
from deskpilot.tools.context import ToolContext

log = logging.getLogger(__name__)

GONE = (
    "Nothing more can be done on this desktop until it is back. Tell the user (they may need "
    "to restart their desktop session or the sandbox)."
)


def parse_args(name: str, args: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """Accept a mapping or a JSON object string; anything else is an InvalidArguments."""
    if args is None:
        return {}
    if isinstance(args, str):
        text = args.strip() or "{}"
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidArguments(
                f"Invalid arguments for {name}: not valid JSON ({exc.msg} at line {exc.lineno} "
                f'column {exc.colno}); pass a JSON object such as {{"windowID": "123/456"}}'
            ) from exc
        args = parsed
    if not isinstance(args, Mapping):
        raise InvalidArguments(
            f"Invalid arguments for {name}: expected a JSON object, got {type(args).__name__}"
        )
    return dict(args)


class ToolSet:
    """A registry of tools plus the policy and event plumbing around every call."""

    def __init__(self, tools: Iterable[ToolSpec] = ()) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for spec in tools:
            self.add(spec)

    def add(self, spec: ToolSpec) -> None:
        if spec.name in self._tools:
            raise ValueError(f"duplicate tool name {spec.name!r}")
        self._tools[spec.name] = spec

    def get(self, name: str) -> ToolSpec:
        try:
            return self._tools[name]
        except KeyError:
            known = ", ".join(sorted(self._tools))
            raise UnknownTool(f"Unknown tool {name!r}. Available tools: {known}.") from None

    def list(self) -> builtins.list[ToolSpec]:
        return list(self._tools.values())

    def names(self) -> builtins.list[str]:
        return list(self._tools)

    def subset(self, names: Iterable[str]) -> ToolSet:
        return ToolSet(self.get(n) for n in names)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    async def call(
        self,
        name: str,
        args: Mapping[str, Any] | str | None,
        ctx: ToolContext,
        *,
        call_id: str | None = None,
    ) -> ToolResult:
        call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
        shown_args: Any = args if not isinstance(args, str) else _maybe_json(args)
        ctx.emit(
            Event(
                "tool.call",
                {"tool": name, "args": shown_args, "call_id": call_id, "surface": ctx.surface},
                run_id=ctx.run_id,
            )
        )
        try:
            result = await self._run(name, args, ctx, call_id)
        except BaseException as exc:  # cancellation: record it, then let it propagate
            try:
                ctx.emit(
                    Event(
                        "tool.result",
                        {
                            "tool": name,
                            "call_id": call_id,
                            "ok": False,
                            "summary": f"cancelled ({type(exc).__name__})",
                            "text": "",
                        },
                        run_id=ctx.run_id,
                    )
                )
            except Exception:  # the cancellation must not turn into an audit error
                log.exception("could not record the cancelled call %s", call_id)
            raise
        ctx.emit(
            Event(
                "tool.result",
                {
                    "tool": name,
                    "call_id": call_id,
                    "ok": not result.is_error,
                    "summary": result.summary,
                    "text": result.text,
                },
                run_id=ctx.run_id,
                images=tuple(result.images),
            )
        )
        return result

    async def _run(
        self, name: str, args: Mapping[str, Any] | str | None, ctx: ToolContext, call_id: str
    ) -> ToolResult:
        try:
            spec = self.get(name)
            values = spec.validate(parse_args(name, args))
            risk, reason = spec.risk, ""
            if spec.assess is not None:
                raised = await spec.assess(ctx, values)
                # a higher risk, or the same one with a reason of its own (what a yes is for)
                if raised is not None and raised[0].rank >= risk.rank:
                    risk, reason = raised
            if needs_confirmation(risk, ctx.settings.confirm):
                await self._confirm(spec, values, risk, reason, ctx, call_id)
            ctx.notices.clear()
            result = await spec.func(ctx, **values)
            if ctx.notices:
                result.text = "\n".join([*ctx.notices, result.text])
                ctx.notices.clear()
            return result
        except ToolError as exc:
            return ToolResult.error(str(exc))
        except DeskpilotError as exc:
            return ToolResult.error(f"{name} failed: {exc}")
        except Exception as exc:  # a bug: keep the traceback out of the model's context
            gone = lost_reason(ctx.desktop)
            if gone is not None:  # the display or its bus died under the call: no bug
                log.info("tool %s: the desktop went away (%s)", name, gone)
                return ToolResult.error(f"{name} failed: the desktop went away: {gone}. {GONE}")
            log.exception("tool %s crashed", name)
            return ToolResult.error(
                f"{name} failed with an internal error ({type(exc).__name__}). This is a "
                "deskpilot bug, not something you did; try another approach."
            )

    async def _confirm(
        self,
        spec: ToolSpec,
        values: dict[str, Any],
        risk: Risk,
        reason: str,
        ctx: ToolContext,
        call_id: str,
    ) -> None:
        shown = _plain(values)  # what a person approves: arguments, not Python reprs
        why = reason or f"{spec.name} is {risk.value}"
        details = tuple(await spec.explain(ctx, values)) if spec.explain is not None else ()
        request = ApprovalRequest(
            tool=spec.name, args=shown, risk=risk, reason=why, call_id=call_id, details=details
        )
        asked = {"tool": spec.name, "args": _jsonable(shown), "call_id": call_id, "reason": why}
        if details:
            asked["details"] = list(details)
        ctx.emit(Event("confirm.asked", asked, run_id=ctx.run_id))
        declined: ActionDeclined | None = None
        try:
            approved = (await ctx.approver.approve(request)) is True
        except ActionDeclined as exc:  # declined, with the reason the model should read
            approved, declined = False, exc
        except Exception:
            log.exception("approver failed")
            approved = False
        ctx.emit(
            Event(
                "confirm.answered",
                {
                    "tool": spec.name,
                    "call_id": call_id,
                    "approved": approved,
                    "by": type(ctx.approver).__name__,
                },
                run_id=ctx.run_id,
            )
        )
        if declined is not None:
            raise declined
        if not approved:
            raise ActionDeclined(
                f"Declined: the user did not approve {spec.name} ({why}). Nothing was done. "
                "Do not retry it; continue without it or report that it needs the user's approval."
            )


def _maybe_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _plain(value: Any) -> Any:
    """Validated arguments as plain data (a sequence's steps as dicts), None values left out."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
