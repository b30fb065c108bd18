"""A task's oracle: one way to reach its goal, as deskpilot tool calls through ``ToolSet.call``.

Oracle steps name tools and arguments. Element IDs are never written down (they change from
run to run): an argument ``{find = {role = "push-button", name = "OK"}}`` becomes the ID of
the first element of the latest ``read_screen_ax`` with that role and name (``name_re``,
``states`` and ``index`` narrow it down); ``{window = "REGEX"}`` becomes the Stable Window ID of
a window whose title matches (from ``list_windows``). ``until`` repeats a read-only call until
the condition holds, within ``within`` seconds: ``find`` (an element is in the read), ``window``
(a ``list_windows`` title matches), ``gone`` (no title matches), ``file`` with ``contains``/
``equals`` (a file's text) or with ``cell`` (a spreadsheet cell's text), ``request`` (the
loopback server logged a request whose "METHOD /path" matches). ``find`` also matches by
``value``/``value_re`` (what an element shows) and by relation: ``in_row`` (on the row of an
element whose text matches), ``in_group`` (in the group or list item holding one). Strings may use
``{home}``, ``{server}`` and ``{task_dir}``; ``~/`` paths are in the sandbox's home.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

from deskpilot.ax.roles import clean_name
from deskpilot.errors import DeskpilotError, OracleFailed
from deskpilot.eval import office
from deskpilot.eval.check_env import CheckEnv
from deskpilot.eval.task import GROUP_ROLES, Find, OracleStep, Until
from deskpilot.tools.base import ToolResult
from deskpilot.tools.context import ToolContext
from deskpilot.tools.toolset import ToolSet

#: how often an ``until`` condition is looked at again
POLL_S = 0.25


def _role(text: str) -> str:
    return text.strip().lower().replace(" ", "-").replace("_", "-")


def _shown(node: dict[str, Any]) -> list[str]:
    """What an element shows: its text, its value, its name."""
    out = [str(node.get("text") or "").strip()]
    value = node.get("value")
    if value is not None:
        out.append(f"{value:g}" if isinstance(value, float) else str(value))
    out.append(str(node.get("name") or "").strip())
    return [s for s in out if s]


def _box(node: dict[str, Any]) -> tuple[int, int, int, int] | None:
    b = node.get("bounds")
    return (int(b[0]), int(b[1]), int(b[2]), int(b[3])) if b and b[2] > 0 and b[3] > 0 else None


def _related(nodes: list[dict[str, Any]], node: dict[str, Any], find: Find) -> bool:
    """``in_row``: a matching element shares the node's row (overlapping vertically);
    ``in_group``: a group, row or list item holds both the node and a matching element."""
    box = _box(node)
    if box is None:
        return False
    _x, y, _w, h = box
    cy = y + h / 2
    if find.in_row is not None:
        row = re.compile(find.in_row)
        if not any(
            (b := _box(n)) is not None
            and n is not node
            and b[1] <= cy <= b[1] + b[3]
            and any(row.search(t) for t in _shown(n))
            for n in nodes
        ):
            return False
    if find.in_group is not None:
        group = re.compile(find.in_group)

        def inside(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
            return (
                outer[0] <= inner[0]
                and outer[1] <= inner[1]
                and inner[0] + inner[2] <= outer[0] + outer[2]
                and inner[1] + inner[3] <= outer[1] + outer[3]
            )

        holders = sorted(
            (
                b
                for n in nodes
                if _role(str(n.get("role", ""))) in GROUP_ROLES
                and (b := _box(n)) is not None
                and inside(box, b)
            ),
            key=lambda b: b[2] * b[3],
        )
        if not holders:
            return False
        tight = holders[0]  # the smallest group around it
        if not any(
            (b := _box(n)) is not None
            and inside(b, tight)
            and n is not node
            and any(group.search(t) for t in _shown(n))
            for n in nodes
        ):
            return False
    return True


def find_element(
    nodes: list[dict[str, Any]], find: Find, labels: dict[str, str] | None = None
) -> str | None:
    """The ID of the ``find.index``-th node matching. A name matches the toolkit's name, or
    the name the read showed for it (``labels``: "7 7" shows as "7", an unnamed field as the
    label beside it); ``value``/``value_re`` match what it shows (text or value);
    ``in_row``/``in_group`` place it beside or with an element whose text matches."""
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
        shown = _shown(node)[:2] if (node.get("text") or node.get("value") is not None) else []
        if find.value is not None and find.value not in shown:
            continue
        if find.value_re is not None and not any(re.search(find.value_re, t) for t in shown):
            continue
        if not set(find.states) <= set(node.get("states") or []):
            continue
        if (find.in_row is not None or find.in_group is not None) and not _related(
            nodes, node, find
        ):
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
        env: CheckEnv | None = None,
    ) -> None:
        self.steps, self.tools, self.ctx, self.expand = steps, tools, ctx, expand
        self.env = env
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

    def _state_holds(self, until: Until) -> bool:
        """The parts of ``until`` read from the trial's state: a file, a cell, a request."""
        if until.file is not None:
            if self.env is None:
                return False
            path = self.env.path(until.file)
            if until.cell is not None:
                try:
                    text = office.read_cell(path, until.cell).text
                except (DeskpilotError, OSError, ValueError):
                    return False
                if until.equals is not None and text != self.expand(until.equals):
                    return False
                if until.contains is not None and self.expand(until.contains) not in text:
                    return False
            else:
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    return False
                if until.contains is not None and self.expand(until.contains) not in text:
                    return False
                if until.equals is not None and text.rstrip() != self.expand(until.equals):
                    return False
        if until.request is not None:
            log = self.env.http if self.env is not None else None
            if log is None:
                return False
            pattern = re.compile(until.request)
            if not any(pattern.search(f"{e['method']} {e['path']}") for e in log.snapshot()):
                return False
        return True

    def _holds(self, until: Until, result: ToolResult) -> bool:
        if result.is_error or not self._state_holds(until):
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
