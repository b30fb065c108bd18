"""A trial cannot touch the host: a task that writes outside its home (in the host's home, its
/tmp, /usr — as root through sudo, too) leaves no file there, while /home/user is its own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.eval_runs import Eval, statuses

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is in scripts/apt-packages.txt"
)


def test_a_task_writing_outside_its_home_cannot_touch_the_host(
    deskpilot_eval: Eval, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:10]
    host_home = Path.home() / f".deskpilot-escape-{tag}"
    host_tmp = Path("/tmp") / f"deskpilot-escape-{tag}"
    host_usr = Path("/usr") / f"deskpilot-escape-{tag}"
    script = (
        f"mkdir -p /home/user/docs && echo inside > /home/user/docs/a.txt; "
        f"echo escaped > {host_home}; echo escaped > {host_tmp}; "
        f"echo pw | sudo -S sh -c 'id -u > /home/user/root-id; echo escaped > {host_usr}'; "
        "true"
    )
    suite = tmp_path / "suite"
    suite.mkdir()
    task = {
        "goal": "nothing",
        "tags": ["osworld"],  # the VM's programs (sudo) in its commands
        "setup": [{"run": ["sh", "-c", script]}],
        "check": [
            {"kind": "file", "path": "/home/user/docs/a.txt", "equals": "inside"},
            {"kind": "file", "path": "~/root-id", "equals": "0"},  # root inside, via sudo
            {"kind": "command", "run": ["sh", "-c", f"cat {host_tmp}"], "stdout": "escaped"},
        ],
        "oracle": [{"tool": "list_windows"}],
    }
    (suite / "escape.json").write_text(json.dumps(task))
    out = tmp_path / "run"
    summary = deskpilot_eval.run(str(suite), "--policy", "oracle", "--out", str(out))
    result = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    # inside, the writes to its own /tmp and /home/user held; /usr and the host's home did not
    assert statuses(summary) == {"escape": ["passed"]}, result["detail"]
    assert result["isolated"] is True
    for path in (host_home, host_tmp, host_usr):
        assert not path.exists(), f"the trial wrote {path} on the host"
    log = (out / "trials" / "escape" / "t1-a1" / "trial.log").read_text()
    assert "Traceback" not in log


def test_unisolated_runs_are_said_so(deskpilot_eval: Eval, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "plain.toml").write_text(
        'goal = "x"\n[[check]]\nkind = "file"\npath = "~/a"\nexists = false\n'
        '[[oracle]]\ntool = "list_windows"\n'
    )
    out = tmp_path / "run"
    summary = deskpilot_eval.run(
        str(suite), "--policy", "oracle", "--isolation", "none", "--out", str(out)
    )
    assert statuses(summary) == {"plain": ["passed"]}
    assert json.loads((out / "results.jsonl").read_text())["isolated"] is False


PROBE = r"""
import glob, json, os, sys
report = {"files": {}, "harness": {}}
for path in sys.argv[1:]:
    for p in glob.glob(path) or [path]:
        try:
            report["files"][p] = open(p, errors="replace").read()
        except OSError as exc:
            report["files"][p] = type(exc).__name__
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    if b"deskpilot.eval.trial" not in cmd or b"bwrap" in cmd:
        continue
    got = report["harness"][pid] = {}
    got["fds"] = []
    try:  # its descriptors: the hidden folders, the spec
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError as exc:
        got["fds"].append(type(exc).__name__)
        fds = []
    for fd in fds:
        try:
            os.stat(f"/proc/{pid}/fd/{fd}")
            got["fds"].append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            got["fds"].append(open(f"/proc/{pid}/fd/{fd}/gold.txt").read())
        except OSError as exc:
            got["fds"].append(type(exc).__name__)
    got["fds"] = sorted(set(got["fds"]))
    try:  # its memory
        with open(f"/proc/{pid}/mem", "rb") as mem:
            line = open(f"/proc/{pid}/maps").readline()
            mem.seek(int(line.split("-")[0], 16))
            got["mem"] = len(mem.read(4096))
    except (OSError, ValueError) as exc:
        got["mem"] = type(exc).__name__
print(json.dumps(report))
"""


def test_gold_files_and_checks_are_out_of_a_trials_reach(
    deskpilot_eval: Eval, tmp_path: Path
) -> None:
    """An app of the trial (what the agent would use) tries every way to the answer — the task
    file, the gold file beside it, the spec with the checks, the harness's descriptors and
    memory — and gets none, while the checks read the gold file (and pass)."""
    secret = "GOLD-" + uuid.uuid4().hex
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "gold.txt").write_text(secret)
    out = tmp_path / "run"
    task = {
        "goal": "nothing",
        "setup": [
            {"write": "~/probe.py", "text": PROBE},
            {
                "launch": [
                    "python3",
                    "~/probe.py",
                    str(suite / "gold.txt"),
                    str(suite / "leak.json"),
                    f"{out}/trials/*/.specs/*.json",
                    f"{out}/results.jsonl",
                ],
                "ready": "none",
                "capture": "probe",
            },
        ],
        "check": [
            {"kind": "output", "of": "probe", "stdout_re": "harness"},
            {"kind": "file", "path": "{task_dir}/gold.txt", "equals": secret},
            {"kind": "command", "run": ["cat", "{task_dir}/gold.txt"], "stdout": secret},
        ],
        "oracle": [{"tool": "list_windows"}],
    }
    (suite / "leak.json").write_text(json.dumps(task))
    summary = deskpilot_eval.run(str(suite), "--policy", "oracle", "--out", str(out))
    result = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert statuses(summary) == {"leak": ["passed"]}, result["detail"]  # the checks read it
    probe = (out / "trials" / "leak" / "t1-a1" / "probe.stdout").read_text()
    assert secret not in probe, probe
    report = json.loads(probe)
    assert report["files"][str(suite / "gold.txt")] == "FileNotFoundError"
    assert report["files"][str(suite / "leak.json")] == "FileNotFoundError"
    # it saw the harness process (and any child it was starting: a forked child has its
    # parent's command line until it runs its own program — seen once in a full suite)…
    assert report["harness"], report
    for seen in report["harness"].values():  # …and no way into any of them
        assert seen == {"fds": ["PermissionError"], "mem": "PermissionError"}, seen
    assert (out / "trials" / "leak" / ".specs" / "t1-a1.json").is_file()  # kept, out of reach
