"""Per-conversation state that tools share: the tracked target window and the element IDs shown.

A named session survives across CLI invocations as a small JSON file
(``$XDG_STATE_HOME/deskpilot/sessions/NAME.json``); long-lived processes (MCP server, agent
runs) keep one :class:`Session` in memory per conversation/client.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from deskpilot._files import write_atomic

#: How many element records a session keeps (oldest reads are dropped first).
MAX_ELEMENTS = 20000


@dataclass(frozen=True)
class ElementRecord:
    """What an element ID named when it was shown to the model (its fingerprint)."""

    bus: str
    path: str
    role: str
    name: str
    parent: str  # parent object path ("" for none)
    window: int  # X window id of the window it was read from
    pid: int
    label: str = ""  # the name the model was shown (derived from inner labels if unnamed)
    shown_role: str = ""  # the role the model was shown ("clickable", "tab"…)

    @property
    def key(self) -> tuple[str, str]:
        return (self.bus, self.path)


def _well_typed(record: ElementRecord) -> bool:
    texts = (
        record.bus,
        record.path,
        record.role,
        record.name,
        record.parent,
        record.label,
        record.shown_role,
    )
    numbers = (record.window, record.pid)
    return all(isinstance(t, str) for t in texts) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in numbers
    )


@dataclass
class Session:
    """State shared by the tools of one conversation."""

    name: str = "default"
    target: str | None = None  # stable window ID of the tracked target
    history: list[str] = field(default_factory=list)  # earlier targets, most recent last
    elements: dict[str, ElementRecord] = field(default_factory=dict)
    last_read: dict[str, dict[str, str]] = field(default_factory=dict)  # window handle → {id: line}
    guided: list[str] = field(default_factory=list)  # xids whose app guidance was shown
    ticking: dict[str, list[str]] = field(default_factory=dict)  # window handle → lines that ticked
    chrome: list[str] = field(default_factory=list)  # xids last read with the browser's controls
    #: folded bars a hover did not show (tools/revealing.py): not hovered again; not saved
    unrevealed: set[str] = field(default_factory=set)
    path: Path | None = None

    def track(self, window_id: str) -> None:
        """Make ``window_id`` the tracked target (the previous one goes to the history)."""
        if self.target and self.target != window_id:
            self.history = [*[w for w in self.history if w != self.target][-15:], self.target]
        self.target = window_id

    def remember(self, records: dict[str, ElementRecord]) -> None:
        for key in records:  # re-shown IDs become the newest (eviction drops the oldest)
            self.elements.pop(key, None)
        self.elements.update(records)
        overflow = len(self.elements) - MAX_ELEMENTS
        if overflow > 0:
            for key in list(self.elements)[:overflow]:
                del self.elements[key]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "name": self.name,
            "target": self.target,
            "history": self.history,
            "elements": {k: asdict(v) for k, v in self.elements.items()},
            "last_read": self.last_read,
            "guided": self.guided,
            "ticking": self.ticking,
            "chrome": self.chrome,
        }

    @classmethod
    def from_dict(cls, data: Any, path: Path | None = None) -> Session:
        """A session from its saved form; ``ValueError`` if any part has the wrong shape."""
        if not isinstance(data, dict):
            raise ValueError("a session is a JSON object")
        elements = data.get("elements", {})
        history = data.get("history", [])
        last_read = data.get("last_read", {})
        target = data.get("target")
        guided = data.get("guided", [])
        ticking = data.get("ticking", {})
        chrome = data.get("chrome", [])
        if not (
            isinstance(guided, list)
            and isinstance(chrome, list)
            and isinstance(ticking, dict)
            and all(isinstance(v, list) for v in ticking.values())
        ):
            raise ValueError("a session part has the wrong shape")
        if not (
            isinstance(elements, dict)
            and all(isinstance(v, dict) for v in elements.values())
            and isinstance(history, list)
            and isinstance(last_read, dict)
            and all(isinstance(v, dict) for v in last_read.values())
            and (target is None or isinstance(target, str))
        ):
            raise ValueError("a session part has the wrong shape")
        records = {str(k): ElementRecord(**v) for k, v in elements.items()}
        if not all(_well_typed(r) for r in records.values()):
            raise ValueError("an element record has the wrong shape")
        return cls(
            name=str(data.get("name", "default")),
            target=target,
            history=[str(w) for w in history],
            elements=records,
            last_read={
                str(k): {str(i): str(t) for i, t in v.items()} for k, v in last_read.items()
            },
            guided=[str(w) for w in guided],
            ticking={str(k): [str(i) for i in v] for k, v in ticking.items()},
            chrome=[str(w) for w in chrome],
            path=path,
        )

    @classmethod
    def load(cls, state_dir: Path, name: str) -> Session:
        """Load session ``name`` (a fresh one if it does not exist or cannot be parsed)."""
        path = state_dir / "sessions" / f"{name}.json"
        try:
            data = json.loads(path.read_text())
            return cls.from_dict(data, path)
        except (OSError, ValueError, TypeError, KeyError, RecursionError):
            return cls(name=name, path=path)

    def save(self) -> None:
        """Write atomically (no-op for in-memory sessions)."""
        if self.path is None:
            return
        write_atomic(self.path, json.dumps(self.to_dict(), separators=(",", ":")), mode=0o600)
