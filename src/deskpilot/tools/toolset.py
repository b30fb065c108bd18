"""ToolSet: the one door every surface uses to call a tool.

``ToolSet.call(name, args, ctx)``, for every surface alike:

1. records the call (``tool.call``, with the surface) in the audit log;
2. looks the tool up and validates the arguments (an error the model can read);
3. resolves what the call reaches (the tool's declared ``reach``, or the default: the window it
   names or would use, :mod:`deskpilot.tools.gate`);
4. hands the call to the policy, :func:`deskpilot.policy.door.decide`, which refuses a blocked
   app anywhere in the reach, judges the call's effect, lets through what the task's grants
   cover, asks the context's approver what needs a yes (``confirm.asked`` /
   ``confirm.answered``) and records its decision (``policy.decided``); the door has no
   policy of its own, so a new tool or surface gets the same decisions;
5. runs the tool (a yes to a ``covers`` tool covers the acting calls it makes);
6. screens the result: no blocked window's title in the text or data, blocked windows
   blacked out in every image;
7. records the result (``tool.result``; a refusal carries ``refused``: ``blocked`` or
   ``declined``), and with ``ctx.step_frames`` a screened frame of the session's window
   (``tool.frame``, :mod:`deskpilot.tools.frames`) when the result has no image of its own.

Expected failures become error results the model can read; bugs become a fixed-phrase error
result (never a traceback in the model's context) and are logged with their traceback. An
approver's :class:`~deskpilot.policy.ApprovalInterrupt` (stop, pause) and cancellation are
recorded and propagate.
"""

from __future__ import annotations

import builtins
import json
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from deskpilot.desktop.base import WindowInfo
from deskpilot.desktop.live import lost_reason
from deskpilot.errors import (
    ActionDeclined,
    AppBlocked,
    DeskpilotError,
    InvalidArguments,
    ToolError,
    UnknownTool,
)
from deskpilot.events import Event
from deskpilot.policy import ApprovalInterrupt
from deskpilot.policy.door import Call, covering, decide
from deskpilot.policy.judging import Scene
from deskpilot.policy.reach import Reach
from deskpilot.tools import frames, gate
from deskpilot.tools.base import ToolResult, ToolSpec
from deskpilot.tools.context import ToolContext
from deskpilot.tools.elements import lookup
from deskpilot.tools.pointer import element_under

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
                    **_refused(result),
                },
                run_id=ctx.run_id,
                images=tuple(result.images),
            )
        )
        if ctx.step_frames and not result.images:
            await frames.record(ctx, name, call_id)
        return result

    async def _run(
        self, name: str, args: Mapping[str, Any] | str | None, ctx: ToolContext, call_id: str
    ) -> ToolResult:
        target_before = ctx.session.target
        reach = Reach()
        try:
            spec = self.get(name)
            values = spec.validate(parse_args(name, args))
            reach = await self._reach(spec, ctx, values)
            decision = await decide(self._call(spec, ctx, values, reach, call_id))
            reach = decision.reach
            if decision.refusal is not None:
                raise decision.refusal
            ctx.notices.clear()
            with covering(decision):
                result = await spec.func(ctx, **values)
            if ctx.notices:
                result.text = "\n".join([*ctx.notices, result.text])
                ctx.notices.clear()
        except ApprovalInterrupt:  # stop or pause the run: recorded by call(), passed on
            raise
        except AppBlocked as exc:
            result = gate.refusal(exc)
        except ActionDeclined as exc:
            result = ToolResult(
                str(exc), is_error=True, data={"refused": "declined", "why": exc.why}
            )
        except ToolError as exc:
            result = ToolResult.error(str(exc))
        except DeskpilotError as exc:
            result = ToolResult.error(f"{name} failed: {exc}")
        except Exception as exc:  # a bug: keep the traceback out of the model's context
            gone = lost_reason(ctx.desktop)
            if gone is not None:  # the display or its bus died under the call: no bug
                log.info("tool %s: the desktop went away (%s)", name, gone)
                # nothing to screen: the text is ours, and the desktop cannot be listed
                return ToolResult.error(f"{name} failed: the desktop went away: {gone}. {GONE}")
            else:
                log.exception("tool %s crashed", name)
                result = ToolResult.error(
                    f"{name} failed with an internal error ({type(exc).__name__}). This is a "
                    "deskpilot bug, not something you did; try another approach."
                )
        return await self._screened(ctx, reach, result, target_before)

    def _call(
        self, spec: ToolSpec, ctx: ToolContext, values: dict[str, Any], reach: Reach, call_id: str
    ) -> Call:
        """The call as the policy sees it: what is called and reached, and what it may consult
        (the desktop, the session's element records, the settings, the approver, the task's
        grants, the audit log)."""

        def record(eid: str) -> Any:
            try:
                return lookup(ctx.session, eid)[1]
            except DeskpilotError:
                return None

        async def under(x: int, y: int, window: WindowInfo | None) -> Any:
            return await element_under(ctx, x, y, window)

        def write(kind: str, data: dict[str, Any]) -> None:
            ctx.emit(Event(kind, _jsonable(data), run_id=ctx.run_id))

        async def own() -> Any:
            assert spec.assess is not None
            return await spec.assess(ctx, values)

        async def explain() -> list[str]:
            assert spec.explain is not None
            return list(await spec.explain(ctx, values))

        async def again() -> Reach:
            return await self._reach(spec, ctx, values)

        return Call(
            tool=spec.name,
            args=_plain(values),
            call_id=call_id,
            risk=spec.risk,
            reach=reach,
            scene=Scene(ctx.desktop, record, under),
            settings=ctx.settings,
            rules=ctx.rules,
            approver=ctx.approver,
            grants=ctx.grants,
            record=write,
            surface=ctx.surface,
            own=own if spec.assess is not None else None,
            explain=explain if spec.explain is not None else None,
            covers=spec.covers,
            again=again,
        )

    async def _screened(
        self, ctx: ToolContext, reach: Reach, result: ToolResult, target_before: str | None
    ) -> ToolResult:
        try:
            return await gate.screen_result(ctx, reach, result, target_before)
        except Exception as exc:  # no desktop to list: no window to hide in the text
            gone = lost_reason(ctx.desktop)
            if not isinstance(exc, DeskpilotError) and gone is None:  # a bug: show nothing
                log.exception("could not screen a result")
                return ToolResult.error(
                    "The result could not be checked for blocked windows (an internal error), "
                    "so it is withheld. This is a deskpilot bug; try another approach."
                )
            log.warning("could not screen a result: %s", gone or exc)
            if result.images:  # but a picture taken before it went cannot be blacked out
                result.images = []
                result.text += "\n(Its image was withheld: the desktop could not be checked.)"
            return result

    @staticmethod
    async def _reach(spec: ToolSpec, ctx: ToolContext, values: dict[str, Any]) -> Reach:
        hook = spec.reach or gate.default_reach
        return await hook(ctx, values)


def _refused(result: ToolResult) -> dict[str, Any]:
    kind = (result.data or {}).get("refused") if result.is_error else None
    return {"refused": kind} if isinstance(kind, str) else {}


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
