"""The test tiers (tests/tiers.py) on small suites of their own: cost markers from fixtures,
the fast tier's guard against costly programs, and its budget."""

from __future__ import annotations

import sys

import pytest

SUITE = """
import subprocess
import sys

import pytest


@pytest.fixture
def sandbox():
    return "a desktop"


def test_pure():
    assert 1 + 1 == 2


def test_on_the_desktop(sandbox):
    assert sandbox


@pytest.mark.trial
def test_a_trial():
    pass
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester.runpytest("-p", "tests.tiers", "-p", "no:cacheprovider", *args)


def test_the_fast_tier_leaves_out_what_a_fixture_or_a_marker_says_costs(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    fast = run(pytester, "--tier", "fast", "-v")
    fast.assert_outcomes(passed=1, deselected=2)
    fast.stdout.fnmatch_lines(["*test_pure PASSED*"])
    run(pytester, "--tier", "eval").assert_outcomes(passed=1, deselected=2)
    run(pytester, "-m", "sandbox").assert_outcomes(passed=1, deselected=2)
    run(pytester).assert_outcomes(passed=3)


def test_a_fast_test_that_starts_a_costly_program_fails_naming_its_marker(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_starts="""
import subprocess
import sys

def test_starts_xvfb():
    subprocess.run(["Xvfb", ":99"], capture_output=True)
"""
    )
    result = run(pytester, "--tier", "fast")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*is in the fast tier but started Xvfb*sandbox, app*"])


def test_the_fast_tier_fails_past_its_budget_and_names_the_costliest_tests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_burns="""
def test_burns_cpu():
    total = 0
    for i in range(300_000):
        total += i * i
"""
    )
    over = run(pytester, "--tier", "fast", "--budget", "0.001")
    assert over.ret == pytest.ExitCode.TESTS_FAILED
    over.stdout.fnmatch_lines(["*::test_burns_cpu*", "*OVER BUDGET*CPU at full speed*"])
    within = run(pytester, "--tier", "fast", "--budget", "600")
    assert within.ret == pytest.ExitCode.OK
    within.stdout.fnmatch_lines(["*within budget*"])


def test_bytecode_is_cached_whatever_the_environment() -> None:
    """PYTHONDONTWRITEBYTECODE=1 (set on this project's machines) would make every run compile
    and rewrite again each module changed since the last caching run (tests/tiers.py)."""
    assert sys.dont_write_bytecode is False
