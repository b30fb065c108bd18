"""Test tiers by cost, and what every test costs.

A test's cost markers come from the fixtures it uses, not from its folder (:data:`COSTS`):

============  =====================================================  =========================
marker        what it costs                                          set by the fixtures
============  =====================================================  =========================
``sandbox``   a headless desktop (Xvfb or a compositor, D-Bus,       ``sandbox``, and all that
              the accessibility bus, a window manager)               use it (``desktop``…)
``app``       a real app (on that desktop, or LibreOffice headless)  ``apps``, asked for by
                                                                     the test itself
``browser``   a real Chromium                                        ``browser``, ``rig``
``trial``     eval trials: ``deskpilot eval`` processes, each with   ``deskpilot_eval``,
              its own sandbox                                        ``proof``, ``serial``
``process``   deskpilot's own processes: a server (``mcp --http``,   marked by the test
              ``serve``), a CLI on a terminal
============  =====================================================  =========================

(Every test under tests/desktop gets ``apps`` to clean up after it, so there ``app`` means the
test asks for it.) A test that pays for one of these without such a fixture (it starts
``deskpilot --sandbox`` in a subprocess, say) carries the marker itself
(``pytestmark = pytest.mark.sandbox``).

Tiers (``--tier``; the Makefile's ``test-fast``, ``test-eval`` and ``test``):

* ``fast`` — none of those: unit tests and the end-to-end tests in this process, on a fake
  desktop with local HTTP servers. Its budget (``--budget``, 60 s) is checked at the end (see
  below). Programs only a costly test starts (``Xvfb``, compositors, ``chromium``…) are
  shadowed on ``PATH`` by stubs that fail and name the test: a fast test that starts one fails
  with the marker it needs. Property tests of the safety suite run a quarter of their
  examples (``--fuzz-examples``; the full count in the other tiers).
* ``eval`` — only the eval trials.
* ``all`` — everything (CI).

The budget, on a shared machine. Wall time measures the machine's load as much as the tests:
on 2 cores shared by a dozen busy processes it grows tenfold. CPU time (this process and the
processes it waited for) grows too, but less — a busy virtual machine is descheduled and
its processes' caches are cold, so a loop of Python costs 1–2.5× what it costs alone. So the
plugin calibrates: after every test it times a fixed loop of Python (well under a
millisecond); the fastest of those, over the run, is the machine at full speed, and each
test's CPU time is scaled by how much slower the loop ran beside it. The run fails when that
*CPU at full speed* passes the budget, and when the wall time does on a machine other work
left alone (under half a core busy with other processes); the report gives all of them.

Every run can write what each test cost (``--timings-json PATH``: wall and CPU seconds per test
and per marker, and the machine's load from other processes); ``--timings N`` prints the
``N`` costliest tests and the totals per marker.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Generator, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

# Bytecode is cached, Python's default, even where the environment turns it off
# (PYTHONDONTWRITEBYTECODE=1, as on this project's machines): otherwise every module a run
# imports that changed since the last caching run — after a merge, all of them — is compiled
# and its assertions rewritten again at every run, which costs more than a short run's tests.
# The Makefile's test targets say so too (TEST_ENV); this covers `pytest` run directly. Set
# when this plugin loads, from tests/conftest.py: before any test module is collected.
sys.dont_write_bytecode = False

#: marker → what it costs (registered in pyproject.toml)
MARKERS = {
    "sandbox": "a headless sandbox desktop",
    "app": "a real app (a GUI app on the sandbox desktop, or LibreOffice headless)",
    "browser": "a real Chromium",
    "trial": "eval trials (deskpilot eval processes, each with its own sandbox)",
    "process": "deskpilot's own processes: a server (mcp --http, serve), a CLI on a terminal",
}
#: fixture → the cost markers a test that uses it (directly or through another fixture) gets
COSTS: dict[str, tuple[str, ...]] = {
    "sandbox": ("sandbox",),
    "browser": ("browser",),
    "rig": ("browser",),
    "deskpilot_eval": ("trial",),
    "proof": ("trial",),
    "serial": ("trial",),
    "serial_started": ("trial",),
    "proof_started": ("trial",),
}
#: fixture → the cost markers of a test that asks for it itself (not through autouse)
ASKED: dict[str, tuple[str, ...]] = {"apps": ("app",)}
#: what a test that is not fast starts: shadowed on PATH in the fast tier
COSTLY_PROGRAMS = (
    "Xvfb",
    "Xwayland",
    "sway",
    "mutter",
    "gnome-shell",
    "weston",
    "labwc",
    "cage",
    "chromium",
    "chromium-browser",
    "openbox",
    "gnome-calculator",
    "gedit",
    "gnome-text-editor",
    "libreoffice",
    "soffice",
    "keepassxc",
    "zenity",
    "xterm",
)
TIERS = ("fast", "eval", "all")
FAST_BUDGET = 60.0
#: the fast tier's share of the safety suite's fuzzing examples
FAST_FUZZ_SHARE = 4
#: other processes' load (cores) under which the machine counts as idle for the wall check
IDLE_OTHERS = 0.5


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tiers", "test tiers by cost (tests/tiers.py)")
    group.addoption(
        "--tier",
        choices=TIERS,
        default="all",
        help="fast: no sandbox/app/browser/trial, within --budget; eval: the eval "
        "trials; all: everything (default)",
    )
    group.addoption(
        "--budget",
        type=float,
        default=FAST_BUDGET,
        help="the fast tier's budget in seconds (CPU; wall on an idle machine)",
    )
    group.addoption(
        "--timings",
        type=int,
        default=0,
        metavar="N",
        help="print the N costliest tests and the time per cost marker",
    )
    group.addoption(
        "--timings-json",
        default=None,
        metavar="PATH",
        help="write every test's wall and CPU seconds to PATH (JSON)",
    )
    group.addoption(
        "--timings-log",
        default=None,
        metavar="PATH",
        help="append each test's costs to PATH as it finishes (JSON lines)",
    )


# -- the clocks --------------------------------------------------------------------------------


def cpu_seconds() -> float:
    """CPU time of this process and of the child processes it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def machine_busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``), if known."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    values = [int(v) for v in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


@dataclass
class Clock:
    wall: float = field(default_factory=time.perf_counter)
    cpu: float = field(default_factory=cpu_seconds)
    busy: float | None = field(default_factory=machine_busy_seconds)

    def since(self) -> tuple[float, float, float | None]:
        """(wall, CPU of ours, CPU of everything else on the machine) since this clock."""
        wall = time.perf_counter() - self.wall
        cpu = cpu_seconds() - self.cpu
        busy = machine_busy_seconds()
        others = None if busy is None or self.busy is None else max(0.0, busy - self.busy - cpu)
        return wall, cpu, others


def calibration() -> float:
    """Thread CPU seconds of a fixed loop of Python (a few hundred microseconds at full speed)."""
    start = time.thread_time()
    total = 0
    for i in range(4000):
        total += i * i
    return time.thread_time() - start


@dataclass
class Cost:
    nodeid: str
    markers: list[str]
    wall: float
    cpu: float
    outcome: str
    #: how long the calibration loop took right after the test
    pace: float = 0.0


@dataclass
class Tiers:
    tier: str
    budget: float
    timings: int
    json_path: str | None
    log_path: str | None = None
    start: Clock = field(default_factory=Clock)
    costs: list[Cost] = field(default_factory=list)
    paces: list[float] = field(default_factory=list)
    shims: Path | None = None
    audit: Path | None = None
    verdict: list[str] = field(default_factory=list)
    over: bool = False


KEY = pytest.StashKey[Tiers]()
STARTED = pytest.StashKey[int]()


#: the tier of this session (set when pytest is configured, before tests are collected)
TIER = "all"


def examples(count: int) -> int:
    """A property test's examples in this tier: ``count``, a quarter of it in the fast tier::

    @settings(max_examples=examples(400))
    """
    return max(10, count // FAST_FUZZ_SHARE) if TIER == "fast" else count


def _state(config: pytest.Config) -> Tiers:
    return config.stash[KEY]


def last_cost(config: pytest.Config, nodeid: str) -> dict[str, Any] | None:
    """What the test ``nodeid`` cost, when it is the last test this session clocked."""
    costs = _state(config).costs
    return asdict(costs[-1]) if costs and costs[-1].nodeid == nodeid else None


def add_cost(config: pytest.Config, cost: Cost) -> None:
    """Count a test this session ran, or one another process ran for it (tests/beside.py)."""
    state = _state(config)
    state.costs.append(cost)
    state.paces.append(cost.pace)
    if state.log_path:
        with open(state.log_path, "a") as log:
            log.write(json.dumps(asdict(cost)) + "\n")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    state = Tiers(
        tier=config.getoption("--tier"),
        budget=config.getoption("--budget"),
        timings=config.getoption("--timings"),
        json_path=config.getoption("--timings-json"),
        log_path=config.getoption("--timings-log"),
    )
    for name, cost in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: costs {cost} (tests/tiers.py)")
    config.stash[KEY] = state
    global TIER
    TIER = state.tier
    state.paces = [calibration() for _ in range(50)]
    if state.tier == "fast":
        state.shims, state.audit = _shadow_costly_programs()
        fuzz = getattr(config.option, "fuzz_examples", None)
        if fuzz == 100:  # the safety suite's default, not one asked for
            config.option.fuzz_examples = fuzz // FAST_FUZZ_SHARE


def pytest_unconfigure(config: pytest.Config) -> None:
    global TIER
    state = config.stash.get(KEY, None)
    if state is not None and state.shims is not None:
        shutil.rmtree(state.shims, ignore_errors=True)
        shims = str(state.shims)
        path = os.environ.get("PATH", "").split(os.pathsep)
        os.environ["PATH"] = os.pathsep.join(p for p in path if p != shims)
    TIER = "all"


# -- markers from fixtures, and the tier's selection ----------------------------------------------


def cost_markers(item: pytest.Item) -> set[str]:
    """The cost markers of ``item``: its own, and those of the fixtures it uses."""
    found = {m.name for m in item.iter_markers() if m.name in MARKERS}
    for name in getattr(item, "fixturenames", ()):
        found.update(COSTS.get(name, ()))
    info = getattr(item, "_fixtureinfo", None)
    for name in info.argnames if info is not None else ():
        found.update(ASKED.get(name, ()))
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tier = _state(config).tier
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        costs = cost_markers(item)
        for name in sorted(costs):
            item.add_marker(name)
        if tier == "fast":
            selected = not costs
        elif tier == "eval":
            selected = "trial" in costs
        else:
            selected = True
        (keep if selected else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# -- the fast tier's guard: costly programs shadowed on PATH ---------------------------------------


def _shadow_costly_programs() -> tuple[Path, Path]:
    """A directory of stubs, first on PATH, each failing like a program that cannot start and
    writing its name to the audit file (read after each test)."""
    shims = Path(tempfile.mkdtemp(prefix="deskpilot-fast-tier-"))
    audit = shims / "started.log"
    audit.touch()
    for name in COSTLY_PROGRAMS:
        path = shims / name
        path.write_text(
            "#!/bin/sh\n"
            f"echo {name} >> '{audit}'\n"
            f"echo 'deskpilot fast tier: a fast test started {name}; give the test the fixture "
            "or marker of what it costs (tests/tiers.py)' >&2\n"
            "exit 97\n"
        )
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.environ["PATH"] = f"{shims}{os.pathsep}{os.environ.get('PATH', '')}"
    return shims, audit


def _started(state: Tiers, since: int) -> list[str]:
    if state.audit is None:
        return []
    with state.audit.open() as f:
        f.seek(since)
        return [line.strip() for line in f if line.strip()]


# -- per test: the clock, and the guard's verdict ----------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, Any, None]:
    state = _state(item.config)
    if state.audit is not None:
        item.stash[STARTED] = state.audit.stat().st_size
    clock = Clock(busy=None)
    yield
    wall, cpu, _ = clock.since()
    outcome = getattr(item, "_tier_outcome", "passed")
    markers = sorted(cost_markers(item))
    add_cost(
        item.config,
        Cost(item.nodeid, markers, round(wall, 3), round(cpu, 3), outcome, calibration()),
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    state = _state(item.config)
    if report.when == "teardown" and state.audit is not None:
        started = _started(state, item.stash.get(STARTED, 0))
        if started:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} is in the fast tier but started {', '.join(sorted(set(started)))}"
                ": give it the fixture (or the marker) of what it costs — sandbox, app, browser "
                "or trial (tests/tiers.py)"
            )
    if report.failed:
        item._tier_outcome = "failed"  # type: ignore[attr-defined]


# -- the end: totals, the budget, the report ----------------------------------------------------


def _by_marker(costs: list[Cost]) -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = {}
    for cost in costs:
        for key in cost.markers or ["fast"]:
            row = totals.setdefault(key, {"tests": 0, "wall": 0.0, "cpu": 0.0})
            row["tests"] += 1
            row["wall"] += cost.wall
            row["cpu"] += cost.cpu
    return {k: {n: round(v, 1) for n, v in row.items()} for k, row in sorted(totals.items())}


def full_speed(state: Tiers, cpu: float) -> float:
    """``cpu`` (the whole run's) as it would be at the machine's full speed: each test's CPU
    time scaled by its pace against the fastest pace seen; the rest (start-up, collection)
    by the median pace."""
    fastest = min(state.paces)
    if fastest <= 0:
        return cpu
    median = sorted(state.paces)[len(state.paces) // 2]
    tests = sum(c.cpu for c in state.costs)
    scaled = sum(c.cpu * fastest / max(c.pace, fastest) for c in state.costs)
    return scaled + max(0.0, cpu - tests) * fastest / max(median, fastest)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = _state(session.config)
    wall, cpu, others = state.start.since()
    cores = os.cpu_count() or 1
    load = "unknown" if others is None else f"{others / wall if wall else 0:.2f}"
    speed = full_speed(state, cpu)
    state.verdict.append(
        f"{state.tier} tier: {len(state.costs)} tests, {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"({speed:.1f} s at full speed); other processes kept {load} of {cores} cores busy"
    )
    if state.tier == "fast" and state.costs:
        busy = others is not None and others / max(wall, 1e-9) >= IDLE_OTHERS
        if speed > state.budget:
            state.over = True
            state.verdict.append(
                f"OVER BUDGET: the fast tier used {speed:.1f} s of CPU at full speed; its budget "
                f"is {state.budget:g} s. Make the costliest tests below cheaper, or give them the "
                "marker of what they cost (tests/tiers.py)."
            )
        elif wall > state.budget and not busy:
            state.over = True
            state.verdict.append(
                f"OVER BUDGET: the fast tier took {wall:.1f} s on an idle machine; its budget is "
                f"{state.budget:g} s (its tests wait {wall - cpu:.1f} s on something other than "
                "the CPU: a sleep, a timeout, a server)."
            )
        elif wall > state.budget:
            state.verdict.append(
                f"within budget: {speed:.1f} s of CPU at full speed of {state.budget:g} s (the "
                "wall time is over it, but the machine was busy with other work; not judged)"
            )
        else:
            state.verdict.append(f"within budget ({state.budget:g} s)")
        if state.over and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if state.json_path:
        data = {
            "tier": state.tier,
            "wall": round(wall, 1),
            "cpu": round(cpu, 1),
            "cpu_at_full_speed": round(speed, 1),
            "fastest_pace": min(state.paces),
            "others_cores": None if others is None else round(others / max(wall, 1e-9), 2),
            "cores": cores,
            "python": sys.version.split()[0],
            "by_marker": _by_marker(state.costs),
            "tests": [asdict(c) for c in sorted(state.costs, key=lambda c: -c.wall)],
        }
        Path(state.json_path).write_text(json.dumps(data, indent=1) + "\n")


def _rows(costs: list[Cost], limit: int) -> Iterator[str]:
    for cost in sorted(costs, key=lambda c: -c.wall)[:limit]:
        marks = ",".join(cost.markers) or "fast"
        yield f"{cost.wall:8.2f} {cost.cpu:8.2f}  {marks:22} {cost.nodeid}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = _state(config)
    if not state.verdict:
        return
    show = state.timings or (15 if state.over else 0)
    if show or state.tier != "fast":
        terminalreporter.section("what the tests cost")
    if show:
        terminalreporter.write_line(f"{'wall s':>8} {'CPU s':>8}  {'markers':22} test")
        for line in _rows(state.costs, show):
            terminalreporter.write_line(line)
        terminalreporter.write_line("")
    if show or state.tier != "fast":
        for key, row in _by_marker(state.costs).items():
            terminalreporter.write_line(
                f"{key:8} {int(row['tests']):5} tests {row['wall']:8.1f} s wall "
                f"{row['cpu']:8.1f} s CPU"
            )
    for line in state.verdict:
        terminalreporter.write_line(line, red=state.over, bold=state.over)
