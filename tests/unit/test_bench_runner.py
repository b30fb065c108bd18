"""`make bench`'s runner: every benchmark runs even when one before it fails; the failures are
named with their reasons at the end and the exit status says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bench.__main__ import reason_from, run_all

BENCHES = {
    "first": "import pathlib, sys\npathlib.Path(sys.argv[0]).with_suffix('.ran').touch()\n"
    "print('first figures')\n",
    "broken": "import pathlib, sys\npathlib.Path(sys.argv[0]).with_suffix('.ran').touch()\n"
    "class WaitTimeout(TimeoutError): pass\n"
    "raise WaitTimeout('timed out after 1.0s waiting for the probe bound; saw instead: "
    'title "the whole screen"\')\n',
    "silent": "import pathlib, sys\npathlib.Path(sys.argv[0]).with_suffix('.ran').touch()\n"
    "sys.exit(3)\n",
    "last": "import pathlib, sys\npathlib.Path(sys.argv[0]).with_suffix('.ran').touch()\n",
}


@pytest.fixture
def fake_benches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    package = tmp_path / "fakebench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, code in BENCHES.items():
        (package / f"{name}.py").write_text(code)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return package


def test_every_benchmark_runs_and_each_failure_says_why(fake_benches: Path) -> None:
    outcomes = run_all([f"fakebench.{n}" for n in BENCHES])
    assert [o.name for o in outcomes] == list(BENCHES)
    # each ran (its own mark on disk), also those after a failure
    assert all((fake_benches / f"{n}.ran").exists() for n in BENCHES)
    by_name = {o.name: o for o in outcomes}
    assert by_name["first"].ok and by_name["last"].ok
    assert not by_name["broken"].ok
    assert by_name["broken"].reason == (
        "WaitTimeout: timed out after 1.0s waiting for the probe bound; saw instead: "
        'title "the whole screen"'
    )
    assert not by_name["silent"].ok and by_name["silent"].reason == "exit status 3"


def test_the_command_exits_non_zero_after_running_all(fake_benches: Path) -> None:
    script = (
        "import sys, bench.__main__ as b\n"
        "outcomes = b.run_all(['fakebench.first', 'fakebench.broken', 'fakebench.last'])\n"
        "b.report(outcomes, sys.stdout)\n"
        "sys.exit(0 if all(o.ok for o in outcomes) else 1)\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": f"{fake_benches.parent}:{root}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=root
    )
    assert done.returncode == 1, done.stderr
    assert "1 of 3 benchmarks failed" in done.stdout
    assert "FAILED broken" in done.stdout and "waiting for the probe bound" in done.stdout
    assert (fake_benches / "last.ran").exists()


def test_reason_is_the_last_error_line() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        "OSError: first",
        "During handling of the above exception, another exception occurred:",
        "playwright._impl._errors.TimeoutError: Page.wait_for_selector: Timeout 30000ms",
        "",
    ]
    assert reason_from(lines, 1).startswith("playwright._impl._errors.TimeoutError: Page.")
    assert reason_from([], -9) == "killed by signal 9"
    assert reason_from(["some words"], 2) == "exit status 2; its last words: some words"
