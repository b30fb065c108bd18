"""The audit log: append-only, hash-chained, verifiable; runs, markdown export, `deskpilot log`."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from deskpilot.audit import AuditLog
from deskpilot.audit.chain import canonical_json, row_hash
from deskpilot.cli import main
from deskpilot.config import Settings
from deskpilot.errors import AuditError, AuditIntegrityError
from deskpilot.events import Event, Fanout, Image

SHOT_A = b"\x89PNG\r\n\x1a\n" + b"screen-a" * 50
SHOT_B = b"\x89PNG\r\n\x1a\n" + b"screen-b" * 50


def populate(log: AuditLog, goal: str = "In the calculator, work out 12*7") -> str:
    """A realistic run: every event kind, two distinct screenshots, one of them twice."""
    run = log.start_run(goal, "scripted:calc.json", window="81/1")
    log(Event("model.text", {"text": "I'll read the calculator first."}, run_id=run))
    log(
        Event(
            "tool.call",
            {"tool": "read_screen_ax", "args": {"windowID": "81/1"}, "call_id": "c1"},
            run_id=run,
        )
    )
    log(
        Event(
            "tool.result",
            {
                "tool": "read_screen_ax",
                "call_id": "c1",
                "ok": True,
                "summary": "42 elements",
                "text": '[e1] button "7"',
            },
            run_id=run,
            images=(Image(SHOT_A, width=640, height=480),),
        )
    )
    log(
        Event(
            "tool.call", {"tool": "click", "args": {"elementID": "e9"}, "call_id": "c2"}, run_id=run
        )
    )
    log(
        Event(
            "confirm.asked",
            {
                "tool": "click",
                "args": {"elementID": "e9"},
                "call_id": "c2",
                "reason": "activates 'Submit'",
            },
            run_id=run,
        )
    )
    log(
        Event(
            "confirm.answered",
            {"tool": "click", "call_id": "c2", "approved": False, "by": "DenyAll"},
            run_id=run,
        )
    )
    log(
        Event(
            "tool.result",
            {
                "tool": "click",
                "call_id": "c2",
                "ok": False,
                "summary": "declined",
                "text": "Declined: ...",
            },
            run_id=run,
            images=(Image(SHOT_B), Image(SHOT_A)),
        )
    )
    log.finish_run(run, "done", answer="12*7 = 84", steps=2)
    return run


def tamper(path: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    """Edit the database as an attacker would: drop the append-only triggers, then write."""
    db = sqlite3.connect(path)
    try:
        triggers = db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for (name,) in triggers:
            db.execute(f"DROP TRIGGER {name}")
        for sql, params in statements:
            db.execute(sql, params)
        db.commit()
    finally:
        db.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "audit.sqlite3"


@pytest.fixture
def log(db_path: Path) -> Iterator[AuditLog]:
    with AuditLog(db_path) as audit:
        yield audit


@pytest.fixture
def populated(log: AuditLog) -> str:
    return populate(log)


def verify(path: Path) -> list[tuple[int | None, str]]:
    with AuditLog(path) as fresh:
        report = fresh.verify()
    return [(p.seq, str(p)) for p in report.problems]


# -- writing and verifying ----------------------------------------------------------------------


def test_verify_passes_on_a_real_log(log: AuditLog, populated: str) -> None:
    report = log.verify()
    assert report.ok, report.problems
    assert (report.events, report.runs, report.blobs) == (9, 1, 2)  # SHOT_A stored once
    assert report.head_seq == 9
    assert (report.head_seq, report.head_hash) == log.head()
    report.raise_if_broken()


def test_events_are_committed_one_by_one(log: AuditLog, db_path: Path) -> None:
    seqs = [log.record(Event("model.text", {"text": str(i)}, run_id="r1")) for i in range(3)]
    assert seqs == [1, 2, 3]
    other = sqlite3.connect(db_path)  # another connection sees each event at once
    try:
        rows = other.execute("SELECT seq, payload FROM events ORDER BY seq").fetchall()
        mode = other.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        other.close()
    assert rows == [(1, '{"text":"0"}'), (2, '{"text":"1"}'), (3, '{"text":"2"}')]
    assert mode == "wal"


def test_rows_are_canonical_json_and_chained(log: AuditLog, db_path: Path) -> None:
    log(
        Event(
            "tool.call",
            {"tool": "type", "args": {"text": "héllo ✓", "b": 1, "a": [1, 2]}},
            run_id="r1",
            ts=1000,
        )
    )
    log(Event("model.text", {"text": "two"}, run_id="r1", ts=1001.5))
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute(
            "SELECT seq, run_id, kind, ts, payload, images, prev_hash, hash "
            "FROM events ORDER BY seq"
        ).fetchall()
    finally:
        db.close()
    first, second = rows
    assert first[4] == '{"args":{"a":[1,2],"b":1,"text":"héllo ✓"},"tool":"type"}'
    assert first[6] == "0" * 64 and second[6] == first[7]
    for seq, run_id, kind, ts, payload, images, prev, digest in rows:
        content = {
            "seq": seq,
            "run_id": run_id,
            "kind": kind,
            "ts": ts,
            "payload": json.loads(payload),
            "images": json.loads(images),
        }
        assert digest == row_hash(prev, content)
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


def test_raw_updates_and_deletes_are_refused(populated: str, db_path: Path) -> None:
    db = sqlite3.connect(db_path)
    try:
        for sql in (
            "UPDATE events SET kind = 'x' WHERE seq = 2",
            "DELETE FROM events",
            "UPDATE blobs SET data = x'00'",
            "DELETE FROM runs",
            "DELETE FROM chain_head",
        ):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                db.execute(sql)
    finally:
        db.close()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE events SET payload = replace(payload, '42 elements', '41 elements') WHERE seq = 4",
        "UPDATE events SET payload = replace(payload, ':', ': ') WHERE seq = 4",
        "UPDATE events SET kind = 'model.text' WHERE seq = 4",
        "UPDATE events SET run_id = 'other' WHERE seq = 4",
        "UPDATE events SET ts = ts + 1 WHERE seq = 4",
        "UPDATE events SET images = '[]' WHERE seq = 4",
        "UPDATE events SET hash = prev_hash WHERE seq = 4",
        "UPDATE events SET prev_hash = hash WHERE seq = 4",
    ],
    ids=["payload", "whitespace", "kind", "run_id", "ts", "images", "hash", "prev_hash"],
)
def test_verify_detects_any_row_edit(populated: str, db_path: Path, sql: str) -> None:
    tamper(db_path, (sql, ()))
    problems = verify(db_path)
    assert problems, "the edit went unnoticed"
    assert problems[0][0] in (4, 5)  # the edited row, or the row that links to it
    assert all(seq is None or seq >= 4 for seq, _ in problems)


def test_verify_detects_an_edit_whose_row_hash_was_recomputed(
    populated: str, db_path: Path
) -> None:
    db = sqlite3.connect(db_path)
    seq, run_id, kind, ts, payload, images, prev = db.execute(
        "SELECT seq, run_id, kind, ts, payload, images, prev_hash FROM events WHERE seq = 3"
    ).fetchone()
    db.close()
    forged = json.loads(payload) | {"args": {"windowID": "evil"}}
    content = {
        "seq": seq,
        "run_id": run_id,
        "kind": kind,
        "ts": ts,
        "payload": forged,
        "images": json.loads(images),
    }
    tamper(
        db_path,
        (
            "UPDATE events SET payload = ?, hash = ? WHERE seq = 3",
            (canonical_json(forged), row_hash(prev, content)),
        ),
    )
    problems = verify(db_path)
    assert problems[0][0] == 4
    assert "prev_hash" in problems[0][1]


def test_verify_detects_reordered_rows(populated: str, db_path: Path) -> None:
    tamper(
        db_path,
        ("UPDATE events SET seq = -2 WHERE seq = 2", ()),
        ("UPDATE events SET seq = 2 WHERE seq = 3", ()),
        ("UPDATE events SET seq = 3 WHERE seq = -2", ()),
    )
    problems = verify(db_path)
    assert [seq for seq, _ in problems][:1] == [2]


@pytest.mark.parametrize("seq", [1, 5, 9], ids=["first", "middle", "last"])
def test_verify_detects_a_deleted_row(populated: str, db_path: Path, seq: int) -> None:
    tamper(db_path, ("DELETE FROM events WHERE seq = ?", (seq,)))
    problems = verify(db_path)
    assert problems
    text = " | ".join(msg for _, msg in problems)
    if seq == 9:
        assert "the chain ends at #8 but the head says #9" in text
    else:
        assert problems[0][0] == seq + 1 and f"#{seq}" in problems[0][1]


def test_verify_detects_all_rows_deleted(populated: str, db_path: Path) -> None:
    tamper(db_path, ("DELETE FROM events", ()), ("DELETE FROM runs", ()))
    assert any("head says #9" in msg for _, msg in verify(db_path))


def test_verify_detects_a_forged_appended_row(populated: str, log: AuditLog, db_path: Path) -> None:
    head_seq, head_hash = log.head()
    content = {
        "seq": head_seq + 1,
        "run_id": populated,
        "kind": "model.text",
        "ts": 1.0,
        "payload": {"text": "forged"},
        "images": [],
    }
    tamper(
        db_path,
        (
            "INSERT INTO events VALUES (?, ?, 'model.text', 1.0, ?, '[]', ?, ?)",
            (head_seq + 1, populated, '{"text":"forged"}', head_hash, row_hash(head_hash, content)),
        ),
    )
    assert any("does not match the last row" in msg for _, msg in verify(db_path))


def test_a_rewound_head_is_caught_only_against_a_saved_head(
    populated: str, log: AuditLog, db_path: Path
) -> None:
    saved = log.head()
    prev = sqlite3.connect(db_path).execute("SELECT hash FROM events WHERE seq = 8").fetchone()[0]
    tamper(
        db_path,
        ("DELETE FROM events WHERE seq = 9", ()),
        ("UPDATE chain_head SET seq = 8, hash = ?", (prev,)),
    )
    with AuditLog(db_path) as fresh:
        report = fresh.verify()
    assert report.ok  # self-consistent: this is what an externally kept head is for
    assert (report.head_seq, report.head_hash) != saved


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("UPDATE blobs SET data = ? WHERE sha256 = ?", "does not match its hash"),
        ("DELETE FROM blobs WHERE sha256 = ? OR ? = ''", "missing"),
    ],
    ids=["edited", "deleted"],
)
def test_verify_detects_blob_tampering(
    populated: str, db_path: Path, sql: str, expected: str
) -> None:
    import hashlib

    digest = hashlib.sha256(SHOT_B).hexdigest()
    params = (b"\x89PNG forged", digest) if "UPDATE" in sql else (digest, "x")
    tamper(db_path, (sql, params))
    problems = verify(db_path)
    assert any(expected in msg and digest[:16] in msg for _, msg in problems)


def test_raise_if_broken_names_the_row(populated: str, db_path: Path) -> None:
    tamper(db_path, ("UPDATE events SET ts = 0 WHERE seq = 6", ()))
    with AuditLog(db_path) as fresh, pytest.raises(AuditIntegrityError, match="event #6"):
        fresh.verify().raise_if_broken()


def test_concurrent_writers_keep_one_chain(log: AuditLog, db_path: Path) -> None:
    second = AuditLog(db_path)  # another connection, as another process would have
    barrier = threading.Barrier(8)

    def write(sink: AuditLog, n: int) -> None:
        barrier.wait()
        for i in range(25):
            sink(Event("model.text", {"text": f"{n}-{i}"}, run_id=f"run{n}"))

    threads = [threading.Thread(target=write, args=(log if n % 2 else second, n)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    second.close()
    report = log.verify()
    assert report.ok, report.problems
    assert (report.events, report.runs) == (200, 8)


def test_a_failed_write_raises_instead_of_dropping(db_path: Path) -> None:
    audit = AuditLog(db_path)
    audit.close()
    with pytest.raises(AuditError, match=r"cannot write model\.text"):
        audit(Event("model.text", {"text": "lost?"}, run_id="r"))


def test_migrations_are_recorded_and_applied_once(log: AuditLog, db_path: Path) -> None:
    populate(log)
    with AuditLog(db_path) as again:  # reopening applies nothing and keeps the chain
        again(Event("model.text", {"text": "after reopen"}, run_id="r2"))
        assert again.verify().ok
    db = sqlite3.connect(db_path)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM _migrations")]
    finally:
        db.close()
    assert names == ["m001_initial"]


def test_open_fails_clearly_on_a_non_database(tmp_path: Path) -> None:
    bad = tmp_path / "audit.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(AuditError, match="cannot open the audit log"):
        AuditLog(bad)


# -- runs and reading ---------------------------------------------------------------------------


def test_runs_are_created_by_their_first_event(log: AuditLog) -> None:
    log(Event("tool.call", {"tool": "list_windows", "args": {}}, run_id="implicit"))
    log(Event("tool.call", {"tool": "list_windows", "args": {}}))  # no run id: ad-hoc run
    log(Event("tool.call", {"tool": "list_windows", "args": {}}))
    runs = log.list_runs()
    assert [r.id for r in runs] == [log.adhoc_run_id, "implicit"]
    assert runs[0].events == 2 and runs[0].outcome is None and runs[0].goal == ""
    assert log.verify().ok


def test_list_runs_newest_first_with_outcome(log: AuditLog) -> None:
    first = populate(log, goal="first goal")
    second = log.start_run("second goal", "openai:gpt-x")
    runs = log.list_runs()
    assert [r.id for r in runs] == [second, first]
    assert (runs[1].goal, runs[1].model, runs[1].outcome) == (
        "first goal",
        "scripted:calc.json",
        "done",
    )
    assert (runs[1].answer, runs[1].steps, runs[1].events) == ("12*7 = 84", 2, 9)
    assert runs[0].outcome is None
    assert [r.id for r in log.list_runs(limit=1)] == [second]


def test_resolve_run_by_id_prefix_or_last(log: AuditLog) -> None:
    with pytest.raises(AuditError, match="no runs yet"):
        log.resolve_run("last")
    for run_id in ("abc123", "abd456", "a_c"):
        log.start_run("g", "m", run_id=run_id)
    assert log.resolve_run("abc") == "abc123"
    assert log.resolve_run("abd456") == "abd456"
    assert log.resolve_run("last") == "a_c"
    with pytest.raises(AuditError, match="ambiguous"):
        log.resolve_run("ab")
    with pytest.raises(AuditError, match="no run 'zz'"):
        log.resolve_run("zz")
    with pytest.raises(AuditError, match="no run"):
        log.resolve_run("a%")  # LIKE wildcards are literal


def test_run_events_round_trip(log: AuditLog) -> None:
    run = populate(log)
    events = log.run_events(run)
    assert [e.kind for e in events] == [
        "run.started",
        "model.text",
        "tool.call",
        "tool.result",
        "tool.call",
        "confirm.asked",
        "confirm.answered",
        "tool.result",
        "run.finished",
    ]
    assert events[3].images[0] == Image(SHOT_A, "image/png", 640, 480)
    assert [i.data for i in events[7].images] == [SHOT_B, SHOT_A]
    assert events[6].data == {"tool": "click", "call_id": "c2", "approved": False, "by": "DenyAll"}
    assert all(e.run_id == run for e in events)
    assert log.run_events(run, images=False)[3].images == ()


def test_integer_timestamps_and_odd_payloads_still_verify(log: AuditLog) -> None:
    log(
        Event(
            "tool.result",
            {"text": "lone \ud800 surrogate", 3: "int key", "p": Path("/x")},
            run_id="r",
            ts=5,
        )
    )
    assert log.verify().ok
    assert log.run_events("r")[0].data["3"] == "int key"


def test_the_log_is_an_event_sink_beside_others(log: AuditLog) -> None:
    seen: list[Event] = []
    sink = Fanout(log, seen.append)
    sink(Event("model.text", {"text": "hi"}, run_id="r"))
    assert [e.data for e in log.run_events("r")] == [e.data for e in seen]


# -- markdown export ----------------------------------------------------------------------------


def test_export_markdown_reads_like_a_trace(log: AuditLog, tmp_path: Path) -> None:
    run = populate(log)
    log(
        Event(
            "tool.result",
            {"tool": "read_text", "ok": True, "text": "a fence ``` inside"},
            run_id=run,
        )
    )
    out_dir = tmp_path / "export"
    md = log.export_markdown(run, out_dir)
    assert md.startswith(f"# deskpilot run `{run}`")
    assert "- **Goal:** In the calculator, work out 12*7" in md
    assert "- **Model:** scripted:calc.json" in md
    assert "- **Outcome:** done (2 steps" in md
    assert "I'll read the calculator first." in md
    assert "### Tool call: `read_screen_ax`" in md and '"windowID": "81/1"' in md
    assert "> **Confirmation asked** for `click`: activates 'Submit'" in md
    assert "> **Declined** by DenyAll" in md
    assert "**✓ `read_screen_ax`** — 42 elements" in md
    assert "**✗ `click`** — declined" in md
    assert '[e1] button "7"' in md
    assert "12*7 = 84" in md
    assert "````" in md  # a longer fence around text that contains ```
    links = [line[line.index("](") + 2 : -1] for line in md.splitlines() if line.startswith("![")]
    assert len(links) == 3
    assert {(out_dir / name).read_bytes() for name in links} == {SHOT_A, SHOT_B}
    assert md.index("Confirmation asked") < md.index("Declined") < md.index("## Finished")


def test_export_without_an_image_dir_mentions_the_screenshots(log: AuditLog) -> None:
    md = log.export_markdown(populate(log))
    assert "screenshot 640×480" in md and "not exported" in md and "![" not in md


def test_export_of_an_unfinished_or_stopped_run(log: AuditLog) -> None:
    run = log.start_run("g", "m")
    assert "- **Outcome:** unfinished" in log.export_markdown(run)
    log.finish_run(run, "needs_attention", "partial", steps=8, reason="budget")
    assert "- **Outcome:** needs_attention — budget (8 steps" in log.export_markdown(run)


def test_export_unknown_run(log: AuditLog) -> None:
    with pytest.raises(AuditError, match="no run"):
        log.export_markdown("nope")


# -- deskpilot log ------------------------------------------------------------------------------


def cli(home: Path, *args: str) -> tuple[int, str, str]:
    runner = CliRunner()
    env = {"DESKPILOT_HOME": str(home), "DESKPILOT_CONFIG": None, "HOME": str(home)}
    result = runner.invoke(main, ["log", *args], env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_without_a_log(home: Path, settings: Settings) -> None:
    code, out, _ = cli(home, "list")
    assert code == 0 and "No audit log yet" in out
    for args in (["verify"], ["show", "last"], ["export", "last"]):
        code, _, err = cli(home, *args)
        assert code == 1 and f"no audit log yet at {settings.audit_db}" in err
    assert not settings.audit_db.exists()


def test_cli_list_show_export_verify(home: Path, settings: Settings, tmp_path: Path) -> None:
    with AuditLog(settings.audit_db) as audit:
        run = populate(audit)
    code, out, _ = cli(home, "list")
    assert code == 0 and run[:12] in out and "done" in out and "In the calculator" in out

    code, out, _ = cli(home, "show", run[:6])
    assert code == 0
    assert "▶ run" in out and "→ click  elementID=e9" in out and "✗ declined click" in out
    assert "■ done" in out

    code, out, _ = cli(home, "show", "--events", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["kind"] for r in records][:2] == ["run.started", "model.text"]
    assert records[3]["images"][0]["bytes"] == len(SHOT_A)

    code, _, err = cli(home, "show", "zzzz")
    assert code == 1 and "no run 'zzzz'" in err

    code, out, _ = cli(home, "verify")
    assert code == 0 and "audit log OK: 9 events in 1 runs, 2 blobs" in out

    target = tmp_path / "out" / "trace.md"
    target.parent.mkdir()
    code, _, err = cli(home, "export", run, "--markdown", "-o", str(target))
    assert code == 0 and f"wrote {target}" in err
    assert target.read_text().startswith(f"# deskpilot run `{run}`")
    assert len(list(target.parent.glob("*.png"))) == 2

    code, out, _ = cli(home, "export", "last")
    assert code == 0 and "- **Goal:** In the calculator" in out


def test_cli_verify_names_the_broken_row(home: Path, settings: Settings) -> None:
    with AuditLog(settings.audit_db) as audit:
        run = populate(audit)
    tamper(
        settings.audit_db, ('UPDATE events SET payload = \'{"text":"edited"}\' WHERE seq = 2', ())
    )
    code, _, err = cli(home, "verify")
    assert code == 1
    assert "audit log BROKEN" in err and f"event #2, run {run}: hash mismatch" in err


def test_cli_help_explains_the_commands(home: Path) -> None:
    code, out, _ = cli(home, "--help")
    assert code == 0
    for name in ("list", "show", "verify", "export"):
        assert name in out
