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

The package: :mod:`~deskpilot.audit.log` (:class:`AuditLog`), :mod:`~deskpilot.audit.chain`
(canonical JSON and hashes), :mod:`~deskpilot.audit.schema` (tables and migrations),
:mod:`~deskpilot.audit.verify` (integrity checks) and :mod:`~deskpilot.audit.export` (Markdown).
"""

from __future__ import annotations

from deskpilot.audit.log import AuditLog, RunInfo
from deskpilot.audit.verify import Problem, VerifyReport

__all__ = ["AuditLog", "Problem", "RunInfo", "VerifyReport"]
