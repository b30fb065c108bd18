"""A trial cannot touch the host: a task that writes outside its home (in the host's home, its
/tmp, /usr — as root through sudo, too) leaves no file there, while /home/user is its own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.eval.conftest import Eval, statuses

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
    summary = deskpilot_eval.run(str(suite), "--policy", "oracle", "--isolation", "none",
                                 "--out", str(out))  # fmt: skip
    assert statuses(summary) == {"plain": ["passed"]}
    assert json.loads((out / "results.jsonl").read_text())["isolated"] is False
