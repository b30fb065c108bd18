"""Verifying the audit log: recompute the chain, the head and every blob hash.

Any edited, reordered, inserted or deleted row (the last one too, via ``chain_head``) or edited
blob is reported as a :class:`Problem` naming its seq and run. Rewriting the whole chain is only
caught against a head hash kept elsewhere (``deskpilot log verify`` prints it).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from deskpilot.audit.chain import GENESIS, canonical_json, chain_row, row_hash, sha256_hex
from deskpilot.errors import AuditIntegrityError


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


def check_log(db: sqlite3.Connection, problems: list[Problem]) -> VerifyReport:
    """Check every row, the head, the blobs and the runs table of ``db`` (read in one snapshot
    by the caller); each broken thing is appended to ``problems``."""
    prev_hash, prev_seq = GENESIS, 0
    referenced: set[str] = set()
    first_seq: dict[str, int] = {}
    count = 0
    for seq, run_id, kind, ts, payload_text, refs_text, stored_prev, stored in db.execute(
        "SELECT seq, run_id, kind, ts, payload, images, prev_hash, hash FROM events ORDER BY seq"
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
            digest = row_hash(stored_prev, chain_row(seq, run_id, kind, ts, payload, refs))
            referenced.update(r["sha256"] for r in refs)
        except (ValueError, TypeError, KeyError):
            bad("payload or image refs are not valid JSON (the row was edited)")
            digest = ""
        if digest and digest != stored:
            bad("hash mismatch: the row's content was edited")
        prev_hash, prev_seq = stored, seq
    head_seq, head_hash = _check_head(db, problems, prev_seq, prev_hash)
    blobs = _check_blobs(db, problems, referenced)
    runs = _check_runs(db, problems, first_seq)
    return VerifyReport(count, runs, blobs, head_seq, head_hash, problems)


def _check_head(
    db: sqlite3.Connection, problems: list[Problem], seq: int, digest: str
) -> tuple[int, str]:
    head = db.execute("SELECT seq, hash FROM chain_head WHERE id = 1").fetchone()
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


def _check_blobs(db: sqlite3.Connection, problems: list[Problem], referenced: set[str]) -> int:
    seen = set()
    for digest, size, data in db.execute("SELECT sha256, size, data FROM blobs"):
        seen.add(digest)
        if sha256_hex(bytes(data)) != digest or len(data) != size:
            problems.append(Problem("content does not match its hash (edited)", blob=digest))
        elif digest not in referenced:
            problems.append(Problem("not referenced by any event (inserted)", blob=digest))
    for digest in sorted(referenced - seen):
        problems.append(Problem("referenced by an event but missing (deleted)", blob=digest))
    return len(seen)


def _check_runs(db: sqlite3.Connection, problems: list[Problem], first_seq: dict[str, int]) -> int:
    runs = {r[0]: r[1] for r in db.execute("SELECT id, first_seq FROM runs")}
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
