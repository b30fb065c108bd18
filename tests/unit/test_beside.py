"""The tests that mostly wait, run in a second pytest process (tests/beside.py), on a small
suite of its own: which process ran a test is written by the test itself, not by the plugin."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HERE = """
import os
import time
from pathlib import Path

import pytest


@pytest.mark.sandbox
def test_here():
    Path("here.pid").write_text(str(os.getpid()))


@pytest.mark.sandbox
def test_the_child_is_not_held_up_by_this_session():
    # its reports are read as they come: a child with 200 kB of output still ends its last
    # test while this session is busy here
    deadline = time.monotonic() + 60
    while not Path("last.done").exists():
        assert time.monotonic() < deadline, "the child did not reach its last test"
        time.sleep(0.05)
"""

AWAY = """
import os
from pathlib import Path

import pytest


@pytest.mark.sandbox
def test_passes():
    Path("away.pid").write_text(str(os.getpid()))
    print("a line of output\\n" * 12_000)  # more than a pipe holds, in its report


@pytest.mark.sandbox
def test_last_before_the_failures():
    Path("last.done").touch()


def test_fast_stays():
    Path("fast.pid").write_text(str(os.getpid()))


@pytest.mark.sandbox
@pytest.mark.safety
def test_a_safety_case_stays():
    Path("safety.pid").write_text(str(os.getpid()))


@pytest.mark.sandbox
def test_fails():
    assert 1 == 2, "said in the child"


@pytest.mark.sandbox
def test_ends_its_process():
    os._exit(3)


@pytest.mark.sandbox
def test_never_reached():
    pass
"""


def run(pytester: pytest.Pytester, away: str, *args: str) -> pytest.RunResult:
    """The two modules (``away`` under part/, which goes beside), run in this process."""
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    safety: a safety case (tests/safety_figures.py)\n"
    )
    pytester.makepyfile(test_here=HERE)
    (pytester.path / "part").mkdir()
    (pytester.path / "part" / "test_away.py").write_text(away)
    plugins = ("-p", "tests.tiers", "-p", "tests.beside", "-p", "no:cacheprovider")
    return pytester.runpytest(*plugins, "--beside-parts", "part/", *args)


def test_the_waiting_part_runs_in_another_process_and_reports_here(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the child imports the plugins
    result = run(pytester, AWAY, "-v")
    result.assert_outcomes(passed=6, failed=3)
    names = ("here", "away", "fast", "safety")
    pids = {name: (pytester.path / f"{name}.pid").read_text() for name in names}
    # in-process pytester: this one
    assert pids["here"] == pids["fast"] == pids["safety"] == str(os.getpid())
    assert pids["away"] != pids["here"]
    result.stdout.fnmatch_lines(
        [
            "*part/test_away.py::test_passes PASSED*",
            "*said in the child*",
            "*_ test_ends_its_process _*",
            "the pytest process beside this one * ended (exit status 3) without reporting this*",
            "*_ test_never_reached _*",
            "the pytest process beside this one * ended (exit status 3) without reporting this*",
        ]
    )


def test_no_beside_runs_everything_here(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = run(pytester, AWAY.split("@pytest.mark.sandbox\ndef test_fails")[0], "--no-beside")
    result.assert_outcomes(passed=6)
    assert (pytester.path / "away.pid").read_text() == str(os.getpid())


def test_every_part_names_tests_that_exist() -> None:
    # a renamed or removed module would silently go back into the main session
    from tests.beside import PARTS

    missing = [part for part in PARTS if not (ROOT / part).exists()]
    assert not missing, f"tests/beside.py PARTS names what is not in the repository: {missing}"
