"""``--backend ray`` on a Ray cluster the test starts: one node on loopback offering two
desktops. Same results as the local backend; a worker killed mid-trial costs one retry,
reported as such; every Ray process started here is gone afterwards.

One node, not a head without desktops and a worker beside it as docs/eval.md sets a cluster
up: deskpilot's code sees the same either way (slots found by the ``deskpilot_desktop``
resource, each an actor in a Ray worker process of its own, trial folders sent back as Ray
objects), and a second ``ray start`` cost each run seconds."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskpilot import _procfs
from deskpilot._wait import wait_for
from tests.eval_runs import Eval, statuses, trial_processes

pytest.importorskip("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_processes(marker: str) -> set[int]:
    """Processes of the cluster: their command line names its temp dir, and their children
    (workers, agents)."""
    links = _procfs.parents()
    roots = {pid for pid in links if marker.encode() in _procfs.read(f"/proc/{pid}/cmdline")}
    return {p for p in _procfs.descendants(roots, links) if not _procfs.is_zombie(p)}


PORT_OPTIONS = (
    "--node-manager-port",
    "--object-manager-port",
    "--dashboard-agent-listen-port",
    "--dashboard-agent-grpc-port",
    "--runtime-env-agent-port",
    "--metrics-export-port",
)


def _ports() -> list[str]:
    """Free ports for a node's services (Ray's fixed defaults clash with a second cluster on
    the same machine: other test runs may have one)."""
    return [f"{option}={_free_port()}" for option in PORT_OPTIONS]


@pytest.fixture(scope="module")
def cluster(deskpilot_eval: Eval) -> Iterator[Eval]:
    temp = tempfile.mkdtemp(prefix="dpray-", dir="/tmp")  # short: Ray's sockets live there
    port = _free_port()
    ray = str(Path(sys.executable).with_name("ray"))
    # TMPDIR: the slots' folders (and so their trials' command lines) are this cluster's own.
    # No prestarted Python workers: the slots are actors with workers of their own, and the
    # raylet's prestarted ones slowed its start past Ray's fixed 30 s on a busy machine
    env = {
        **deskpilot_eval.env,
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_enable_worker_prestart": "0",
        "TMPDIR": temp,
    }

    def kill() -> None:
        for pid in _ray_processes(temp):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not _ray_processes(temp), timeout=30, what="the Ray processes to end")

    def start(port: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                ray,
                "start",
                "--head",
                f"--port={port}",
                "--num-cpus=2",
                '--resources={"deskpilot_desktop": 2}',
                f"--temp-dir={temp}",
                "--node-ip-address=127.0.0.1",
                "--disable-usage-stats",
                "--include-dashboard=false",
                "--include-log-monitor=false",
                *_ports(),
            ],
            env=env,
            text=True,
            capture_output=True,
            timeout=300,
            check=False,
        )

    try:
        done = start(port)
        if "timed out during startup" in done.stderr:  # Ray waits 30 s, fixed: a busy machine
            kill()
            done = start(port := _free_port())
        assert done.returncode == 0, (
            f"ray start failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )
        yield Eval(deskpilot_eval.home, {**env, "RAY_ADDRESS": f"127.0.0.1:{port}"})
    finally:
        kill()
        shutil.rmtree(temp, ignore_errors=True)


#: one task of each family of the starter suite: each app kind (calculators, dialogs, Mousepad,
#: Chromium with its loopback server, LibreOffice, two apps, an OSWorld task file) on a Ray slot
RAY_TASKS = (
    "galculator.sqrt",
    "gcalc.multiply",
    "mousepad.append-line",
    "multi.web-to-note",
    "osworld.todo-append",
    "web.navigate",
    "writer.heading",
    "zenity.question",
)


def test_the_suite_on_a_ray_cluster_gives_the_local_results(cluster: Eval, tmp_path: Path) -> None:
    """One task of each family on the cluster (one trial of the oracle and of doing nothing
    each) gives the local results: the oracle passes and doing nothing fails, as the local
    proof of every starter task requires (test_proof; its -j 2 run is not needed here, so
    this module runs on its own in minutes)."""
    out = tmp_path / "ray"
    summary = cluster.run(
        "check",
        "starter",
        "--trials",
        "1",
        "--backend",
        "ray",
        "--tasks",
        ",".join(RAY_TASKS),
        "--out",
        str(out),
        check=False,
    )
    on_ray = {r["id"]: (r["oracle"], r["noop"]) for r in summary["tasks"]}
    assert on_ray == {t: (["passed"], ["failed"]) for t in RAY_TASKS}, summary["_stderr"][-3000:]
    assert summary["proved"] is True and summary["_code"] == 0
    assert "2 Ray desktop slot(s)" in summary["_stderr"]
    for policy, status in (("oracle", "passed"), ("noop", "failed")):
        rows = [json.loads(x) for x in (out / policy / "results.jsonl").read_text().splitlines()]
        assert sorted(r["task"] for r in rows) == sorted(RAY_TASKS)
        for row in rows:  # the trial's files came back from the node
            folder = out / policy / "trials" / row["task"] / "t1-a1"
            assert json.loads((folder / "result.json").read_text())["status"] == status
            assert (folder / "transcript.md").is_file()


def test_a_worker_killed_mid_trial_is_retried_once_and_reported(
    cluster: Eval, tmp_path: Path
) -> None:
    out = tmp_path / "killed"
    # a quick task (a dialog): the kill and the retry are the point, not the app
    args = [
        "starter",
        "--policy",
        "oracle",
        "--tasks",
        "zenity.question",
        "--backend",
        "ray",
        "--out",
        str(out),
        "--json",
    ]
    driver = subprocess.Popen(
        cluster.command(*args),
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    output: dict[str, str] = {}
    reader = threading.Thread(
        target=lambda: output.update(zip(("out", "err"), driver.communicate(), strict=True))
    )
    reader.start()
    try:
        slots = str(Path(cluster.env["TMPDIR"]) / "deskpilot-slots")
        trial = wait_for(
            lambda: trial_processes(slots) or None, timeout=120, what="the trial on a worker"
        )[0]
        worker = _procfs.parents()[trial]  # the Ray worker process of the desktop slot
        assert b"DesktopSlot" in _procfs.read(f"/proc/{worker}/cmdline")
        os.kill(worker, signal.SIGKILL)
        reader.join(timeout=300)
    finally:
        if driver.poll() is None:
            driver.kill()
        reader.join(timeout=30)
    assert driver.returncode == 0, output.get("err")
    assert output.get("out", "").startswith("{"), output.get("out", "")[:600]
    summary = json.loads(output["out"])
    assert statuses(summary) == {"zenity.question": ["passed"]}
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["attempt"], r["status"]) for r in rows] == [(1, "infra_error"), (2, "passed")]
    assert "Ray worker running it was lost" in rows[0]["detail"]
    assert "after 1 retry" in (out / "summary.md").read_text()
    # the killed worker's trial saw it die and took its desktop with it
    wait_for(lambda: trial not in _procfs.parents(), timeout=30, what="the orphaned trial")


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("127.0.0.1:1", "cannot reach the Ray cluster at 127.0.0.1:1"),
        ("not an address", "is malformed"),
        ("gopher://x:1", "is malformed"),
    ],
)
def test_an_unreachable_or_malformed_ray_address_ends_fast_naming_it(
    deskpilot_eval: Eval, address: str, message: str
) -> None:
    import time

    start = time.monotonic()
    done = subprocess.run(
        deskpilot_eval.command("starter", "--policy", "noop", "--backend", "ray"),
        env={**deskpilot_eval.env, "RAY_ADDRESS": address},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert time.monotonic() - start < 30
    assert done.returncode != 0 and message in done.stderr, done.stderr
