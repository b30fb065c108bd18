"""Shared fixtures. Desktop tests share ONE sandbox desktop per test run (see tests/desktop)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from deskpilot.config import Settings, load_settings

# No per-example deadline: time is measured in bench/, never asserted in a test, and a busy
# 2-core machine took one downscaling example 331 ms against hypothesis's default 200.
hypothesis_settings.register_profile("deskpilot", deadline=None)
hypothesis_settings.load_profile("deskpilot")

#: the safety suite's figures (`figures`, `--safety-json`); the tiers by cost (`--tier`); the
#: eval trials' fixtures, whose proof starts with the session (`tests.eval_runs`); the tests that
#: mostly wait, run in a second process beside the rest (`tests.beside`); pytester, to run the
#: plugins on small suites of their own
pytest_plugins = (
    "tests.safety_figures",
    "tests.tiers",
    "tests.eval_runs",
    "tests.beside",
    "pytester",
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private DESKPILOT_HOME (config, state and data dirs) for one test."""
    root = tmp_path / "deskpilot-home"
    root.mkdir()
    return root


@pytest.fixture
def settings(home: Path) -> Iterator[Settings]:
    env = {"HOME": str(home), "DESKPILOT_HOME": str(home), "PATH": os.environ.get("PATH", "")}
    yield load_settings(env=env)
