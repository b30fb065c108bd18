"""The grants of one task: :class:`TaskGrants`, kept by the context every call of the task runs
in (``ToolContext.grants``).

A task begins with the person's goal (:meth:`TaskGrants.begin`: its grants, derived by
:func:`deskpilot.policy.goals.derive`, replace any before), gains a person's yes for the task
(:meth:`TaskGrants.add`), loses one revoked from the console (:meth:`TaskGrants.revoke`) and
ends with the task (:meth:`TaskGrants.end`): every change is recorded (``policy.grants``,
``grant.added``, ``grant.revoked``) through the recorder the task began with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from deskpilot.desktop.base import WindowInfo
from deskpilot.policy.effects import Finding
from deskpilot.policy.goals import derive
from deskpilot.policy.grants import Grant, best_reason, check

Recorder = Callable[[str, dict[str, Any]], None]


class TaskGrants:
    """The grants of the task a context runs (see the module docstring)."""

    def __init__(self) -> None:
        self.goal: str | None = None
        self.source = ""
        self._grants: list[Grant] = []
        self._record: Recorder | None = None
        self.withheld: list[str] = []  # acts the goal names but forbids ("do not submit")
        self._pending: dict[str, Any] | None = None  # policy.grants, not yet recorded

    @property
    def active(self) -> bool:
        """Whether a task with a goal of the person's is running."""
        return self.goal is not None

    def grants(self) -> list[Grant]:
        return list(self._grants)

    def begin(
        self,
        goal: str,
        *,
        source: str,
        record: Recorder | None = None,
        custom_words: Iterable[str] | None = None,
        announce: bool = True,
    ) -> list[Grant]:
        """Start a task with the person's ``goal``: its grants replace any before. They are
        recorded (``policy.grants``) now, or with ``announce=False`` at :meth:`announce` (a run
        records them right after its ``run.started``), else with the task's first decision."""
        derived = derive(goal, custom_words=custom_words)
        self.goal, self.source, self._record = goal, source, record
        self._grants = list(derived.grants)
        self.withheld = list(derived.withheld)
        data = {"goal": goal, "source": source, "grants": [g.data() for g in self._grants]}
        if self.withheld:
            data["withheld"] = self.withheld
        self._pending = data
        if announce:
            self.announce()
        return self.grants()

    def announce(self) -> None:
        """Record what the task's goal grants (``policy.grants``), once."""
        data, self._pending = self._pending, None
        if data is not None:
            self._emit("policy.grants", data)

    def end(self) -> None:
        """The task is over: its grants end with it."""
        self.goal, self.source, self._grants, self.withheld = None, "", [], []
        self._record, self._pending = None, None

    def add(self, grant: Grant, record: Recorder | None = None) -> Grant:
        """A person's yes for the task (recorded as ``grant.added``)."""
        self._grants.append(grant)
        self._emit("grant.added", grant.data(), record)
        return grant

    def revoke(self, grant_id: str, by: str) -> Grant | None:
        """End one grant now (recorded as ``grant.revoked``); None when it is not held."""
        grant = next((g for g in self._grants if g.id == grant_id), None)
        if grant is None:
            return None
        self._grants.remove(grant)
        self._emit("grant.revoked", {"id": grant.id, "by": by, "text": grant.describe()})
        return grant

    def cover(self, finding: Finding, window: WindowInfo | None) -> tuple[Grant | None, str]:
        """The grant that covers ``finding``, or None and why none does."""
        if not self._grants:
            return None, "" if self.active else "no goal of the person's"
        misses = []
        for grant in self._grants:
            why = check(grant, finding, window)
            if why is None:
                return grant, ""
            misses.append(why)
        return None, best_reason(misses)

    def _emit(self, kind: str, data: dict[str, Any], record: Recorder | None = None) -> None:
        sink = record or self._record
        if sink is not None:
            sink(kind, data)
