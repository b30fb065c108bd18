"""The audit log: append every Event, read runs back, verify and export them.

Each event is committed on its own (WAL, synchronous=FULL): a SIGKILL loses nothing already
recorded; a failed write raises :class:`~deskpilot.errors.AuditError`, never drops the event.
Runs are created implicitly by the first event carrying a new run_id; events without one join
this log's ad-hoc run.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deskpilot.audit.chain import canonical_json, chain_row, image_ref, new_run_id, row_hash
from deskpilot.audit.export import markdown
from deskpilot.audit.schema import migrate
from deskpilot.audit.verify import Problem, VerifyReport, check_log
from deskpilot.errors import AuditError
from deskpilot.events import Event, Image


@dataclass(frozen=True)
class RunInfo:
    id: str
    started: float
    ended: float
    events: int
    goal: str = ""
    model: str = ""
    outcome: str | None = None
    answer: str = ""
    steps: int | None = None


class AuditLog:
    """The audit log at ``path`` (created with its directory); an EventSink: ``log(event)``."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._adhoc_run_id: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            with self._transaction():
                migrate(self._db)
        except (sqlite3.Error, OSError) as exc:
            if hasattr(self, "_db"):
                self._db.close()
            raise AuditError(f"cannot open the audit log at {self.path}: {exc}") from exc

    # -- writing

    @property
    def adhoc_run_id(self) -> str:
        """The run that events recorded without a run_id join (one per AuditLog)."""
        if self._adhoc_run_id is None:
            self._adhoc_run_id = new_run_id()
        return self._adhoc_run_id

    def __call__(self, event: Event) -> None:
        self.record(event)

    def record(self, event: Event) -> int:
        """Append and commit one event; return its seq. Raises AuditError if it cannot."""
        run_id, ts = event.run_id or self.adhoc_run_id, float(event.ts)
        try:
            payload_text = canonical_json(event.data)
            payload = json.loads(payload_text)
            images = [image_ref(image) for image in event.images]
            with self._lock, self._transaction():
                head_seq, head_hash = self._db.execute(
                    "SELECT seq, hash FROM chain_head WHERE id = 1"
                ).fetchone()
                seq = int(head_seq) + 1
                digest = row_hash(
                    head_hash, chain_row(seq, run_id, event.kind, ts, payload, images)
                )
                for image, ref in zip(event.images, images, strict=True):
                    self._db.execute(
                        "INSERT OR IGNORE INTO blobs VALUES (?, ?, ?)",
                        (ref["sha256"], ref["bytes"], image.data),
                    )
                row = (seq, run_id, event.kind, ts, payload_text, canonical_json(images))
                self._db.execute(
                    "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*row, head_hash, digest)
                )
                self._db.execute("INSERT OR IGNORE INTO runs VALUES (?, ?)", (run_id, seq))
                self._db.execute(
                    "UPDATE chain_head SET seq = ?, hash = ? WHERE id = 1", (seq, digest)
                )
        except sqlite3.Error as exc:
            raise AuditError(
                f"cannot write {event.kind} to the audit log {self.path}: {exc}{_hint(exc)}"
            ) from exc
        except (ValueError, TypeError) as exc:
            raise AuditError(
                f"cannot write {event.kind} to the audit log {self.path}: {exc}"
            ) from exc
        return seq

    def start_run(
        self, goal: str, model: str, window: str | None = None, run_id: str | None = None
    ) -> str:
        """Record ``run.started`` for a new (or given) run id and return the id."""
        run_id = run_id or new_run_id()
        self.record(
            Event("run.started", {"goal": goal, "model": model, "window": window}, run_id=run_id)
        )
        return run_id

    def finish_run(
        self, run_id: str, outcome: str, answer: str = "", steps: int = 0, reason: str = ""
    ) -> None:
        """Record ``run.finished`` (outcome: done, needs_attention or stopped)."""
        data = {"outcome": outcome, "answer": answer, "steps": steps, "reason": reason}
        self.record(Event("run.finished", data, run_id=run_id))

    # -- reading

    def list_runs(self, limit: int | None = None) -> list[RunInfo]:
        """Runs, newest first."""
        rows = self._query(
            """SELECT r.id, COUNT(e.seq), MIN(e.ts), MAX(e.ts) FROM runs r
               JOIN events e ON e.run_id = r.id GROUP BY r.id ORDER BY r.first_seq DESC
               LIMIT ?""",
            (-1 if limit is None else limit,),
        )
        info: dict[str, dict[str, Any]] = {r[0]: {} for r in rows}
        for run_id, kind, payload in self._query(
            "SELECT run_id, kind, payload FROM events "
            "WHERE kind IN ('run.started', 'run.finished') ORDER BY seq"
        ):
            if run_id in info and (kind == "run.finished" or kind not in info[run_id]):
                info[run_id][kind] = json.loads(payload)  # the first start, the last finish
        out = []
        for run_id, count, first_ts, last_ts in rows:
            started = info[run_id].get("run.started", {})
            finished = info[run_id].get("run.finished")
            out.append(
                RunInfo(
                    id=run_id,
                    started=first_ts,
                    ended=last_ts,
                    events=count,
                    goal=str(started.get("goal") or ""),
                    model=str(started.get("model") or ""),
                    outcome=None if finished is None else str(finished.get("outcome") or ""),
                    answer="" if finished is None else str(finished.get("answer") or ""),
                    steps=None if finished is None else finished.get("steps"),
                )
            )
        return out

    def resolve_run(self, ref: str) -> str:
        """The full id of the run ``ref`` names: an exact id, a unique prefix, or ``last``."""
        if ref == "last":
            row = self._query("SELECT id FROM runs ORDER BY first_seq DESC LIMIT 1")
            if not row:
                raise AuditError("the audit log has no runs yet")
            return str(row[0][0])
        if self._query("SELECT 1 FROM runs WHERE id = ?", (ref,)):
            return ref
        like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        found = [
            r[0]
            for r in self._query(
                "SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' ORDER BY first_seq", (like,)
            )
        ]
        if len(found) == 1:
            return str(found[0])
        if not found:
            raise AuditError(f"no run {ref!r} in the audit log (see `deskpilot log list`)")
        raise AuditError(f"run id {ref!r} is ambiguous: it matches {', '.join(found[:5])}")

    def run_events(self, run_id: str, *, images: bool = True) -> list[Event]:
        """A run's events in order, rebuilt as Events (images loaded from blobs if asked)."""
        events = []
        for kind, ts, payload, refs_text in self._query(
            "SELECT kind, ts, payload, images FROM events WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ):
            refs = json.loads(refs_text)
            loaded = tuple(
                Image(self._blob(r["sha256"]), r["mime"], r["width"], r["height"])
                for r in (refs if images else ())
            )
            events.append(Event(kind, json.loads(payload), run_id=run_id, images=loaded, ts=ts))
        return events

    def head(self) -> tuple[int, str]:
        """The last event's seq and hash: keep it elsewhere to detect a rewritten chain."""
        rows = self._query("SELECT seq, hash FROM chain_head WHERE id = 1")
        if not rows:
            raise AuditError(f"the audit log {self.path} has no chain head (it was deleted)")
        return int(rows[0][0]), str(rows[0][1])

    def export_markdown(
        self, run_id: str, image_dir: Path | None = None, link_prefix: str = ""
    ) -> str:
        """A readable trace of a run; images are written to ``image_dir`` and linked."""
        events = self.run_events(run_id)
        if not events:
            raise AuditError(f"no run {run_id!r} in the audit log")
        return markdown(run_id, events, image_dir, link_prefix)

    # -- verification

    def verify(self) -> VerifyReport:
        """Recompute the chain, the head and every blob hash; report each broken row."""
        problems: list[Problem] = []
        with self._lock:
            try:
                self._db.execute("BEGIN")  # one consistent snapshot
                try:
                    report = check_log(self._db, problems)
                finally:
                    self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise AuditError(f"cannot read the audit log {self.path}: {exc}") from exc
        return report

    # -- plumbing

    def _blob(self, digest: str) -> bytes:
        rows = self._query("SELECT data FROM blobs WHERE sha256 = ?", (digest,))
        if not rows:
            raise AuditError(f"blob {digest[:16]} is missing from the audit log")
        return bytes(rows[0][0])

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            with self._lock:
                return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise AuditError(f"cannot read the audit log {self.path}: {exc}") from exc

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE … COMMIT, else ROLLBACK: one writer at a time, across processes."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _hint(exc: sqlite3.Error) -> str:
    """What a failed write most likely means, for the errors a full disk gives."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_FULL", "SQLITE_IOERR")):
        return (
            " (the disk may be full, or a file size limit reached). Nothing more is done "
            "without a record: free some space and run it again"
        )
    return ""
