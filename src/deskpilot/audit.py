"""SQLite audit log: every Event, append-only, hash-chained, screenshots stored once by hash.

Tables: ``events`` (one row per Event: seq, run_id, kind, ts, canonical JSON payload, image refs,
``prev_hash``, ``hash``), ``blobs`` (image bytes keyed by SHA-256), ``runs`` (a run's id and its
first event, written with that event: runs are created implicitly by the first event carrying a
new run_id; events without one join this log's ad-hoc run), ``chain_head`` (last seq and hash,
updated in the same transaction) and ``_migrations``. Triggers refuse UPDATE and DELETE.

``hash = sha256(prev_hash + canonical_json(row))`` where ``row`` holds seq, run_id, kind, ts,
payload and image refs (blob SHA-256s), chaining every event in the log; the first prev_hash is
64 zeros. :meth:`AuditLog.verify` recomputes it all, so any edited, reordered, inserted or
deleted row (the last one too, via ``chain_head``) or edited blob is reported by seq and run.
Rewriting the whole chain is only caught against a head hash kept elsewhere (``verify`` prints
it). Each event is committed on its own (WAL, synchronous=FULL): a SIGKILL loses nothing
already recorded; a failed write raises :class:`AuditError`, never drops the event.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deskpilot.errors import AuditError, AuditIntegrityError
from deskpilot.events import Event, Image

GENESIS = "0" * 64


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 (lone surrogates escaped); other types as ``str()``."""
    try:
        text = _dumps(value)
    except TypeError:  # keys of mixed types: normalise through plain JSON once, then sort
        value = json.loads(json.dumps(value, default=str))
        text = _dumps(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _dumps(value, ascii_only=True)
    return text


def _dumps(value: Any, ascii_only: bool = False) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_only, default=str
    )


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def image_ref(image: Image) -> dict[str, Any]:
    """How an image appears in the log and in JSON output: its hash and size, not its bytes."""
    return {
        "sha256": sha256_hex(image.data),
        "mime": image.mime,
        "bytes": len(image.data),
        "width": image.width,
        "height": image.height,
    }


def row_hash(prev_hash: str, row: dict[str, Any]) -> str:
    """The chain link: SHA-256 of ``prev_hash`` + the canonical JSON of the row's content."""
    return sha256_hex((prev_hash + canonical_json(row)).encode("utf-8"))


def _row(seq: int, run_id: str, kind: str, ts: float, payload: Any, images: Any) -> dict[str, Any]:
    return {
        "seq": seq,
        "run_id": run_id,
        "kind": kind,
        "ts": ts,
        "payload": payload,
        "images": images,
    }


def new_run_id() -> str:
    return uuid.uuid4().hex[:16]


# -- migrations: ordered, each applied once, recorded in _migrations ----------------------------

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []
migration = MIGRATIONS.append


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.execute("""CREATE TABLE events (seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL,
        kind TEXT NOT NULL, ts REAL NOT NULL, payload TEXT NOT NULL, images TEXT NOT NULL,
        prev_hash TEXT NOT NULL, hash TEXT NOT NULL)""")
    db.execute("CREATE INDEX events_run ON events (run_id, seq)")
    db.execute("CREATE INDEX events_kind ON events (kind)")
    db.execute("""CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL,
        data BLOB NOT NULL)""")
    db.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, first_seq INTEGER NOT NULL UNIQUE)")
    db.execute("""CREATE TABLE chain_head (id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL, hash TEXT NOT NULL)""")
    db.execute("INSERT INTO chain_head VALUES (1, 0, ?)", (GENESIS,))
    for table in ("events", "blobs", "runs"):
        for op in ("UPDATE", "DELETE"):
            db.execute(f"""CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table}
                BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""")
    db.execute("""CREATE TRIGGER chain_head_no_delete BEFORE DELETE ON chain_head
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""")


def migrate(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    for fn in MIGRATIONS:
        if fn.__name__ not in done:
            fn(db)
            db.execute(
                "INSERT INTO _migrations VALUES (?, ?)",
                (fn.__name__, datetime.now(UTC).isoformat()),
            )


# -- reports ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One integrity failure: which event row (seq) or blob, in which run, and what is wrong."""

    message: str
    seq: int | None = None
    run_id: str | None = None
    blob: str | None = None

    def __str__(self) -> str:
        where = []
        if self.seq is not None:
            where.append(f"event #{self.seq}")
        if self.run_id:
            where.append(f"run {self.run_id}")
        if self.blob:
            where.append(f"blob {self.blob[:16]}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


@dataclass(frozen=True)
class VerifyReport:
    events: int
    runs: int
    blobs: int
    head_seq: int
    head_hash: str
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def raise_if_broken(self) -> None:
        if self.problems:
            more = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
            raise AuditIntegrityError(f"audit log broken at {self.problems[0]}{more}")


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


# -- the log ------------------------------------------------------------------------------------


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
                digest = row_hash(head_hash, _row(seq, run_id, event.kind, ts, payload, images))
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
        except (sqlite3.Error, ValueError, TypeError) as exc:
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
        return _markdown(run_id, events, image_dir, link_prefix)

    # -- verification

    def verify(self) -> VerifyReport:
        """Recompute the chain, the head and every blob hash; report each broken row."""
        problems: list[Problem] = []
        with self._lock:
            try:
                self._db.execute("BEGIN")  # one consistent snapshot
                try:
                    report = self._verify(problems)
                finally:
                    self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise AuditError(f"cannot read the audit log {self.path}: {exc}") from exc
        return report

    def _verify(self, problems: list[Problem]) -> VerifyReport:
        db = self._db
        prev_hash, prev_seq = GENESIS, 0
        referenced: set[str] = set()
        first_seq: dict[str, int] = {}
        count = 0
        for seq, run_id, kind, ts, payload_text, refs_text, stored_prev, stored in db.execute(
            "SELECT seq, run_id, kind, ts, payload, images, prev_hash, hash FROM events "
            "ORDER BY seq"
        ):
            count += 1
            first_seq.setdefault(run_id, seq)

            def bad(message: str, seq: int = seq, run_id: str = run_id) -> None:
                problems.append(Problem(message, seq=seq, run_id=run_id))

            if seq != prev_seq + 1:
                bad(
                    f"events #{prev_seq + 1}..#{seq - 1} are missing (deleted rows)"
                    if seq > prev_seq + 1
                    else "out of sequence"
                )
            if stored_prev != prev_hash:
                bad(
                    "prev_hash does not match the previous row's hash "
                    "(a row before it was deleted, inserted or rewritten)"
                )
            try:
                payload, refs = json.loads(payload_text), json.loads(refs_text)
                if canonical_json(payload) != payload_text or canonical_json(refs) != refs_text:
                    bad("payload is not in canonical form (the row was edited)")
                digest = row_hash(stored_prev, _row(seq, run_id, kind, ts, payload, refs))
                referenced.update(r["sha256"] for r in refs)
            except (ValueError, TypeError, KeyError):
                bad("payload or image refs are not valid JSON (the row was edited)")
                digest = ""
            if digest and digest != stored:
                bad("hash mismatch: the row's content was edited")
            prev_hash, prev_seq = stored, seq
        head_seq, head_hash = self._verify_head(problems, prev_seq, prev_hash)
        blobs = self._verify_blobs(problems, referenced)
        runs = self._verify_runs(problems, first_seq)
        return VerifyReport(count, runs, blobs, head_seq, head_hash, problems)

    def _verify_head(self, problems: list[Problem], seq: int, digest: str) -> tuple[int, str]:
        head = self._db.execute("SELECT seq, hash FROM chain_head WHERE id = 1").fetchone()
        if head is None:
            problems.append(Problem("chain_head is missing (it was deleted)"))
            return seq, digest
        if (head[0], head[1]) != (seq, digest):
            if head[0] > seq:
                problems.append(
                    Problem(
                        f"the chain ends at #{seq} but the head says "
                        f"#{head[0]}: the last rows were deleted"
                    )
                )
            else:
                problems.append(
                    Problem(
                        f"the head (#{head[0]}) does not match the last row "
                        f"(#{seq}): rows were appended or edited"
                    )
                )
        return int(head[0]), str(head[1])

    def _verify_blobs(self, problems: list[Problem], referenced: set[str]) -> int:
        seen = set()
        for digest, size, data in self._db.execute("SELECT sha256, size, data FROM blobs"):
            seen.add(digest)
            if sha256_hex(bytes(data)) != digest or len(data) != size:
                problems.append(Problem("content does not match its hash (edited)", blob=digest))
            elif digest not in referenced:
                problems.append(Problem("not referenced by any event (inserted)", blob=digest))
        for digest in sorted(referenced - seen):
            problems.append(Problem("referenced by an event but missing (deleted)", blob=digest))
        return len(seen)

    def _verify_runs(self, problems: list[Problem], first_seq: dict[str, int]) -> int:
        runs = {r[0]: r[1] for r in self._db.execute("SELECT id, first_seq FROM runs")}
        for run_id in sorted(set(runs) | set(first_seq)):
            if runs.get(run_id) != first_seq.get(run_id):
                problems.append(
                    Problem(
                        "runs table does not match the run's first event",
                        seq=runs.get(run_id),
                        run_id=run_id,
                    )
                )
        return len(runs)

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


# -- markdown export ----------------------------------------------------------------------------

_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def _fence(text: str, lang: str = "") -> str:
    ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _inline(value: object) -> str:
    return " ".join(str(value).split()) or "—"


def _markdown(run_id: str, events: list[Event], image_dir: Path | None, link_prefix: str) -> str:
    t0 = events[0].ts
    started = next((e.data for e in events if e.kind == "run.started"), {})
    finished = next((e.data for e in events if e.kind == "run.finished"), None)
    when = datetime.fromtimestamp(t0, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    out = [
        f"# deskpilot run `{run_id}`",
        "",
        f"- **Goal:** {_inline(started.get('goal', ''))}",
        f"- **Model:** {_inline(started.get('model', ''))}",
    ]
    if started.get("window"):
        out.append(f"- **Window:** {_inline(started['window'])}")
    out.append(f"- **Started:** {when}")
    if finished is not None:
        out.append(
            f"- **Outcome:** {_inline(finished.get('outcome'))} "
            + (f"— {_inline(finished['reason'])} " if finished.get("reason") else "")
            + f"({finished.get('steps', 0)} steps, {events[-1].ts - t0:.1f} s)"
        )
    else:
        out.append("- **Outcome:** unfinished (no run.finished event)")
    out.append("")
    for event in events:
        d, at = event.data, f"+{event.ts - t0:.1f}s"
        if event.kind == "run.started":
            continue
        if event.kind == "model.text":
            out += [f"### Model · {at}", "", str(d.get("text", "")).strip(), ""]
        elif event.kind == "tool.call":
            out += [
                f"### Tool call: `{d.get('tool')}` · {at}",
                "",
                _fence(
                    json.dumps(d.get("args"), indent=2, ensure_ascii=False, default=str), "json"
                ),
                "",
            ]
        elif event.kind == "confirm.asked":
            out += [
                f"> **Confirmation asked** for `{d.get('tool')}`: {_inline(d.get('reason'))}",
                "",
            ]
        elif event.kind == "confirm.answered":
            verdict = "Approved" if d.get("approved") else "Declined"
            out += [f"> **{verdict}** by {_inline(d.get('by'))}", ""]
        elif event.kind == "tool.result":
            mark = "✓" if d.get("ok") else "✗"
            out += [f"**{mark} `{d.get('tool')}`** — {_inline(d.get('summary'))}", ""]
            if str(d.get("text") or "").strip():
                out += [
                    "<details><summary>Result text</summary>",
                    "",
                    _fence(str(d["text"]).rstrip(), "text"),
                    "",
                    "</details>",
                    "",
                ]
            out += [_image_md(run_id, image, image_dir, link_prefix) for image in event.images]
            if event.images:
                out.append("")
        elif event.kind == "run.finished":
            out += [
                f"## Finished: {_inline(d.get('outcome'))} · {at}",
                "",
                str(d.get("answer") or "").strip() or "_(no answer)_",
                "",
            ]
        else:
            out += [f"### {event.kind} · {at}", "", _fence(canonical_json(d), "json"), ""]
    return "\n".join(out).rstrip() + "\n"


def _image_md(run_id: str, image: Image, image_dir: Path | None, link_prefix: str) -> str:
    digest = sha256_hex(image.data)
    alt = f"screenshot {image.width}×{image.height}" if image.width else "image"
    if image_dir is None:
        return f"_({alt}, {len(image.data)} bytes, sha256 {digest[:16]}; not exported)_  "
    name = f"{run_id[:12]}-{digest[:12]}.{_EXT.get(image.mime, 'bin')}"
    try:
        image_dir.mkdir(parents=True, exist_ok=True)
        if not (image_dir / name).exists():
            (image_dir / name).write_bytes(image.data)
    except OSError as exc:
        raise AuditError(f"cannot write {image_dir / name}: {exc.strerror}") from exc
    return f"![{alt}]({link_prefix}{name})"
