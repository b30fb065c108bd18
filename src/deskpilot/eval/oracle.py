"""A task's oracle: one way to reach its goal, as deskpilot tool calls through ``ToolSet.call``.

Oracle steps name tools and arguments. Element IDs are never written down (they change from
run to run): an argument ``{find = {role = "push-button", name = "OK"}}`` becomes the ID of
the first element of the latest ``read_screen_ax`` with that role and name (``name_re``,
``states`` and ``index`` narrow it down); ``{window = "REGEX"}`` becomes the Stable Window ID of
a window whose title matches (from ``list_windows``). ``until`` repeats a read-only call until
the condition holds, within ``within`` seconds: ``find`` (an element is in the read), ``window``
(a ``list_windows`` title matches) or ``gone`` (no title matches). Strings may use
``{home}``, ``{server}`` and ``{task_dir}``; ``~/`` paths are in the sandbox's home.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

from deskpilot.ax.roles import clean_name
from deskpilot.errors import OracleFailed
from deskpilot.eval.task import Find, OracleStep, Until
from deskpilot.tools.base import ToolResult
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

#: how often an ``until`` condition is looked at again
POLL_S = 0.25


def _role(text: str) -> str:
    return text.strip().lower().replace(" ", "-").replace("_", "-")


def find_element(
    nodes: list[dict[str, Any]], find: Find, labels: dict[str, str] | None = None
) -> str | None:
    """The ID of the ``find.index``-th node matching. A name matches the toolkit's name, or
    the name the read showed for it (``labels``: "7 7" shows as "7", an unnamed field as the
    label beside it)."""
    matches = []
    for node in nodes:
        if find.role is not None and _role(str(node.get("role", ""))) != _role(find.role):
            continue
        raw = str(node.get("name") or "")
        names = {raw, clean_name(raw), (labels or {}).get(str(node.get("id")), raw)}
        if find.name is not None and find.name not in names:
            continue
        if find.name_re is not None and not any(re.search(find.name_re, n) for n in names):
            continue
        if not set(find.states) <= set(node.get("states") or []):
            continue
        if node.get("id"):
            matches.append(str(node["id"]))
    return matches[find.index] if len(matches) > find.index else None


def _titles(data: dict[str, Any] | None) -> list[dict[str, Any]]:
    return list((data or {}).get("windows") or [])


class Oracle:
    def __init__(
        self,
        steps: list[OracleStep],
        tools: ToolSet,
        ctx: ToolContext,
        expand: Callable[[str], str],
    ) -> None:
        self.steps, self.tools, self.ctx, self.expand = steps, tools, ctx, expand
        self.nodes: list[dict[str, Any]] | None = None
        self.windows: list[dict[str, Any]] | None = None
        self.calls = 0

    async def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        self.calls += 1
        result = await self.tools.call(tool, args, self.ctx)
        data = result.data or {}
        if tool == "read_screen_ax" and not result.is_error:
            self.nodes = list(data.get("nodes") or [])
        if tool == "list_windows" and not result.is_error:
            self.windows = _titles(data)
        return result

    def labels(self) -> dict[str, str]:
        """What the reads showed as each element's name (the session's records)."""
        return {eid: r.label for eid, r in self.ctx.session.elements.items() if r.label}

    async def resolve(self, value: Any, where: str) -> Any:
        if isinstance(value, str):
            return self.expand(value)
        if isinstance(value, list):
            return [await self.resolve(v, f"{where}.{i}") for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        if set(value) == {"find"}:
            find = Find.model_validate(value["find"])
            if self.nodes is None:
                raise OracleFailed(f"{where}: find needs a read_screen_ax before it")
            found = find_element(self.nodes, find, self.labels())
            if found is None:
                seen = "; ".join(
                    f"{n.get('role')} {n.get('name')!r} {sorted(n.get('states') or [])}"
                    for n in self.nodes[:12]
                )
                raise OracleFailed(
                    f"{where}: no element like {value['find']} in the last read (it has: {seen})"
                )
            return found
        if set(value) == {"window"}:
            pattern = re.compile(self.expand(str(value["window"])))
            for fresh in (False, True):  # the last list, then a new one (a window just opened)
                if fresh or self.windows is None:
                    await self.call("list_windows", {})
                for w in self.windows or []:
                    if pattern.search(str(w.get("title", ""))):
                        return w.get("stable_window_id")
            raise OracleFailed(f"{where}: no window titled /{pattern.pattern}/")
        return {k: await self.resolve(v, f"{where}.{k}") for k, v in value.items()}

    def _holds(self, until: Until, result: ToolResult) -> bool:
        if result.is_error:
            return False
        if until.find is not None and (
            self.nodes is None or find_element(self.nodes, until.find, self.labels()) is None
        ):
            return False
        titles = [str(w.get("title", "")) for w in _titles(result.data)]
        if until.window is not None and not any(
            re.search(self.expand(until.window), t) for t in titles
        ):
            return False
        return until.gone is None or not any(re.search(self.expand(until.gone), t) for t in titles)

    async def _poll(self, until: Until, step: OracleStep, args: Any) -> bool:
        """Call the step's tool until the condition holds (a few calls a second)."""
        deadline = time.monotonic() + step.within
        while True:
            if self._holds(until, await self.call(step.tool, args)):
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(POLL_S)

    async def run(self) -> int:
        """Run every step; return the number of steps. Raises OracleFailed at the first
        step that fails."""
        for i, step in enumerate(self.steps):
            where = f"oracle.{i} ({step.tool})"
            args = await self.resolve(step.args, f"{where}.args")
            if step.until is None:
                result = await self.call(step.tool, args)
                if result.is_error:
                    raise OracleFailed(f"{where}: {result.text[:300]}")
                continue
            if not await self._poll(step.until, step, args):
                raise OracleFailed(f"{where}: {step.until} did not hold within {step.within:g} s")
        return len(self.steps)
