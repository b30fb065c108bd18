"""Every trial gets one explicit status; errors of the harness are never the agent's failures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from deskpilot import _procfs
from tests.eval_runs import Eval, statuses

TASKS = {
    "s.passed": """goal = "nothing to do"
[[setup]]
write = "~/a.txt"
text = "a"
[[check]]
kind = "file"
path = "~/a.txt"
equals = "a"
[[oracle]]
tool = "list_windows"
""",
    "s.failed": """goal = "make b.txt"
[[check]]
kind = "file"
path = "~/b.txt"
[[oracle]]
tool = "list_windows"
""",
    "s.setup": """goal = "x"
[[setup]]
run = ["sh", "-c", "echo cannot-set-up-xyz >&2; exit 3"]
[[check]]
kind = "file"
path = "~/b.txt"
""",
    "s.checker": """goal = "x"
[[setup]]
write = "~/a.txt"
text = "a"
[[check]]
kind = "file"
path = "~/other.txt"
exists = false
[[check]]
kind = "command"
run = ["nothing-captured-no-such-program"]
""",
    "s.timeout": """goal = "x"
timeout = 1
[[check]]
kind = "file"
path = "~/b.txt"
exists = false
[[oracle]]
tool = "wait"
args = { seconds = 30 }
""",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("status-suite")
    for task_id, text in TASKS.items():
        (root / f"{task_id}.toml").write_text(text)
    return root


def test_each_outcome_has_its_status_and_only_scored_ones_count(
    suite: Path, deskpilot_eval: Eval, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    summary = deskpilot_eval.run(str(suite), "--policy", "oracle", "-j", "2", "--out", str(out))
    assert statuses(summary) == {
        "s.checker": ["checker_error"],
        "s.failed": ["failed"],
        "s.passed": ["passed"],
        "s.setup": ["setup_error"],
        "s.timeout": ["timeout"],
    }
    overall = summary["overall"]
    assert (overall["passed"], overall["scored"], overall["total"]) == (1, 3, 5)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    by_task = {r["task"]: r for r in lines}
    assert "cannot-set-up-xyz" in by_task["s.setup"]["detail"] and by_task["s.setup"]["steps"] == 0
    assert "nothing-captured" in by_task["s.checker"]["detail"]
    assert by_task["s.timeout"]["time"]["agent"] < 10
    assert len(lines) == 5  # no error here is an infrastructure error: nothing was retried
    md = (out / "summary.md").read_text()
    assert "**1/3 passed**" in md and "checker_error 1" in md


def test_an_infrastructure_failure_is_retried_then_reported(
    suite: Path, deskpilot_eval: Eval, tmp_path: Path
) -> None:
    broken = Eval(deskpilot_eval.home, {**deskpilot_eval.env, "PATH": str(tmp_path)})  # no Xvfb
    out = tmp_path / "run"
    summary = broken.run(
        str(suite),
        "--policy",
        "oracle",
        "--tasks",
        "s.passed",
        "--isolation",
        "none",
        "--out",
        str(out),
    )
    assert statuses(summary) == {"s.passed": ["infra_error"]}
    assert summary["overall"]["scored"] == 0
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["attempt"], r["status"]) for r in lines] == [(1, "infra_error"), (2, "infra_error")]
    assert "Xvfb" in lines[0]["detail"]
    assert "after 1 retry" in (out / "summary.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["starter", "--policy", "oracle", "--model", "scripted:x"], "exclude each other"),
        (["starter"], "who should do the tasks"),
        (["no-such-suite", "--policy", "noop"], "no suite 'no-such-suite'"),
        (["starter", "--policy", "noop", "--tasks", "nope.*"], "no task of suite 'starter'"),
        (["starter", "--model", "anthropic:claude-x"], "ANTHROPIC_API_KEY"),
    ],
)
def test_bad_invocations_say_what_to_do(
    deskpilot_eval: Eval, args: list[str], message: str
) -> None:
    env = {k: v for k, v in deskpilot_eval.env.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        deskpilot_eval.command(*args),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_resume_needs_a_run(deskpilot_eval: Eval, tmp_path: Path) -> None:
    done = subprocess.run(
        deskpilot_eval.command("starter", "--policy", "noop", "--resume", "--out", str(tmp_path)),
        env=deskpilot_eval.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "nothing to resume" in done.stderr


@pytest.mark.trial
def test_a_trial_past_its_deadline_is_killed_with_its_process_group(tmp_path: Path) -> None:
    from deskpilot._wait import wait_for
    from deskpilot.eval.attempt import Attempt, run_attempt
    from deskpilot.eval.policies import PolicySpec
    from deskpilot.eval.store import TrialKey
    from deskpilot.eval.suite import load_suite
    from tests.eval_runs import trial_processes

    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "hang.toml").write_text(
        'goal = "x"\n[[setup]]\nrun = ["sleep", "31.25"]\n[[check]]\nkind = "file"\npath = "~/a"\n'
    )
    task = load_suite(tmp_path / "suite").tasks[0]
    spec = {
        "task": task.model_dump(mode="json", by_alias=True),
        "policy_label": "oracle",
        "policy": PolicySpec("oracle").to_dict(),
    }
    out = tmp_path / "trial"

    def sleeping() -> list[int]:
        return [p for p in _procfs.parents() if b"31.25" in _procfs.read(f"/proc/{p}/cmdline")]

    # 10 s: the trial reaches its setup in 1-4 s on a loaded 2-core machine (python, bwrap,
    # the desktop); the setup's sleep outlasts the deadline by 21 s
    result = run_attempt(Attempt(TrialKey("hang", 1), 1, spec), out, deadline_s=10)
    assert result["status"] == "setup_error" and "killed at its deadline" in result["detail"]
    wait_for(lambda: not sleeping(), timeout=10, what="the setup's command to be killed")
    assert not trial_processes(str(out))
