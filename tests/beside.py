"""A part of the run in a second pytest process, beside the rest: the tests that mostly wait.

Most desktop tests wait — for an app to start, for the tools to settle after input (a quiet
period after the app's last event), for a console's agent session or a trial in a sandbox of
its own — and leave the machine's second core idle: in the full suite of 5 December 2026 on a
2-core machine (1,056 s, everything in one process), ``/proc/stat`` had the machine 2.0 cores
busy for the first 300 s (the proof's and the safety trials' runs beside, tests/eval_runs.py and
tests/desktop/safety_beside.py, with the first desktop tests) and 0.4–0.97 cores busy in every
minute after. The parts of :data:`PARTS` run in a child pytest session started with the main
loop (its own sandbox desktop, console and proof), and their reports are relayed into this
session once its own tests are done: the terminal, ``--durations``, the cost table and the exit
status are the same as if they had run here.

* :data:`PARTS` names the tests that go beside (path prefixes); only costly tests go (a test
  with a cost marker: see tests/tiers.py), and only when costly tests stay here too: a run of
  the console alone runs here as before.
* ``--no-beside`` runs everything here (to debug one of them with ``pdb``, say).
* The child's own output is in ``<basetemp>/beside/output.log``; a test the child never
  reported (it crashed) fails here with that file's end.

The child writes one JSON line per report (pytest's own serialisation, as pytest-xdist does)
and one per test's cost to a pipe this session reads as they come (a thread).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from typing import IO, Any

import pytest

from tests import tiers

#: tests that run beside the rest (path prefixes from the root, "/"-separated): the console's and
#: the eval tests (processes of their own: a console, trials), and the desktop modules that kept
#: the machine under half a core busy while they ran (measured in the full suite of 5 December
#: 2026; docs/testing.md says how). The safety modules stay: their trials run beside already.
PARTS = (
    "tests/desktop/console/",
    "tests/eval/",
    "tests/desktop/test_editor.py",
    "tests/desktop/test_effects_real.py",
    "tests/desktop/test_element_ids.py",
    "tests/desktop/test_fill_checked.py",
    "tests/desktop/test_forms.py",
    "tests/desktop/test_gtk_clicks.py",
    "tests/desktop/test_impress_save_as.py",
    "tests/desktop/test_menus.py",
    "tests/desktop/test_native_run.py",
    "tests/desktop/test_native_scaling.py",
    "tests/desktop/test_native_vendors.py",
    "tests/desktop/test_screenshot_popups.py",
    "tests/desktop/test_scroll_wait.py",
    "tests/desktop/test_snapshot_engine.py",
    "tests/desktop/test_task_views.py",
    "tests/desktop/test_toolkits.py",
)
#: how long the child is given to end after it was asked to (SIGINT: its fixtures tear down)
STOP_S = 60.0

CHILD = pytest.StashKey["Child"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("beside", "tests that mostly wait, in a second process")
    group.addoption(
        "--no-beside",
        action="store_true",
        help="run every selected test in this process (by default the console's and the eval "
        "tests run in a second pytest process beside the rest: tests/beside.py)",
    )
    group.addoption("--beside-parts", default=",".join(PARTS), help=argparse.SUPPRESS)
    group.addoption("--beside-fd", type=int, default=None, help=argparse.SUPPRESS)


def _goes_beside(item: pytest.Item, parts: tuple[str, ...]) -> bool:
    """A costly test of a part; never a safety case (its figures are recorded by this
    session: tests/safety_figures.py)."""
    return (
        item.nodeid.startswith(parts)
        and bool(tiers.cost_markers(item))
        and item.get_closest_marker("safety") is None
    )


def split(items: list[pytest.Item], parts: tuple[str, ...]) -> tuple[list[Any], list[Any]]:
    """(the tests that stay, the tests that go beside): none go unless costly ones stay."""
    away = [item for item in items if _goes_beside(item, parts)]
    if not away:
        return items, []
    gone = set(map(id, away))
    here = [item for item in items if id(item) not in gone]
    if not any(tiers.cost_markers(item) for item in here):
        return items, []
    return here, away


class Child:
    """The child pytest session: started with the tests it runs, read as it reports."""

    def __init__(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        self.config = config
        self.items = items
        folder = Path(str(config._tmp_path_factory.getbasetemp())) / "beside"  # type: ignore[attr-defined]
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "output.log"
        read_fd, write_fd = os.pipe()
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.tiers",
            "-p",
            "tests.beside",
            "--basetemp",
            str(folder / "tmp"),
            "--beside-fd",
            str(write_fd),
            *(item.nodeid for item in items),
        ]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                command,
                cwd=str(config.invocation_params.dir),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
                start_new_session=True,  # stopped as a group, not by a terminal's Ctrl-C
            )
        os.close(write_fd)
        self.reports: dict[str, list[dict[str, Any]]] = {}
        self.costs: dict[str, dict[str, Any] | None] = {}
        self.ended = False
        self.news = threading.Condition()
        # read as the child writes, whatever this session is doing: a child whose pipe is full
        # waits (measured: 22 tests in, the rest of the run lost)
        self.reader = threading.Thread(
            target=self._read, args=(os.fdopen(read_fd, "r", encoding="utf-8"),), daemon=True
        )
        self.reader.start()

    def _read(self, pipe: IO[str]) -> None:
        with pipe:
            for line in pipe:
                record = json.loads(line)
                with self.news:
                    if record["kind"] == "cost":
                        self.costs[record["nodeid"]] = record["cost"]
                    else:
                        self.reports.setdefault(record["nodeid"], []).append(record["report"])
                    self.news.notify_all()
        with self.news:
            self.ended = True
            self.news.notify_all()

    def _wait_for(self, nodeid: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The child's reports of ``nodeid`` and its cost (its last line), once it sent them
        or ended."""
        with self.news:
            self.news.wait_for(lambda: nodeid in self.costs or self.ended)
            return self.reports.pop(nodeid, []), self.costs.pop(nodeid, None)

    def relay(self, item: pytest.Item) -> None:
        """Report ``item`` here as the child ran it (or as failed, when it never did)."""
        reports, cost = self._wait_for(item.nodeid)
        hook = item.ihook
        hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for data in reports:
            report = self.config.hook.pytest_report_from_serializable(config=self.config, data=data)
            hook.pytest_runtest_logreport(report=report)
        seen = {data.get("when") for data in reports}
        if "teardown" not in seen:  # the child ended during the test: its part, failed
            report = self._lost(item, "teardown" if "call" in seen else "call")
            hook.pytest_runtest_logreport(report=report)
        hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        if cost is not None:
            tiers.add_cost(self.config, tiers.Cost(**cost))

    def _lost(self, item: pytest.Item, when: str) -> pytest.TestReport:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_S)
        tail = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
        return pytest.TestReport(
            item.nodeid,
            item.location,
            {},
            "failed",
            f"the pytest process beside this one (tests/beside.py) ended (exit status "
            f"{self.proc.returncode}) without reporting this test; the end of its output "
            f"({self.log}):\n{tail}",
            when,
        )

    def stop(self) -> None:
        """End the child: at once when it is done, else asked (SIGINT), then killed."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, Any, None]:
    config = session.config
    parts = tuple(p for p in config.getoption("--beside-parts").split(",") if p)
    active = not (
        config.getoption("--no-beside")
        or config.getoption("--beside-fd") is not None
        or config.option.collectonly
        or session.testsfailed  # collection errors: pytest stops before any test
    )
    here, away = split(session.items, parts) if active else (session.items, [])
    if not away:
        yield
        return
    child = Child(config, away)
    session.items[:] = here
    try:
        outcome = yield
        if outcome.excinfo is None:  # not stopped (-x, Ctrl-C): the beside tests, reported
            for item in away:
                child.relay(item)
                if session.shouldfail or session.shouldstop:
                    break
    finally:
        child.stop()
        session.items[:] = here + away


# -- in the child -------------------------------------------------------------------------------


class Reporter:
    """The child's side: each report and each test's cost, one JSON line each, to the pipe."""

    def __init__(self, config: pytest.Config, fd: int) -> None:
        os.set_inheritable(fd, False)  # the tests' own processes must not hold it open
        self.config = config
        self.pipe = os.fdopen(fd, "w", encoding="utf-8")

    def send(self, record: dict[str, Any]) -> None:
        self.pipe.write(json.dumps(record) + "\n")
        self.pipe.flush()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        self.send({"kind": "report", "nodeid": report.nodeid, "report": data})

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outside tiers' clock: its cost is in
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, None]:
        yield
        cost = tiers.last_cost(self.config, item.nodeid)
        self.send({"kind": "cost", "nodeid": item.nodeid, "cost": cost})

    def pytest_unconfigure(self) -> None:
        self.pipe.close()


def pytest_configure(config: pytest.Config) -> None:
    fd = config.getoption("--beside-fd")
    if fd is not None:
        config.pluginmanager.register(Reporter(config, fd), "beside-reporter")
