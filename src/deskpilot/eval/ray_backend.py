"""The Ray backend: the same trial processes, on the desktops of a Ray cluster.

One *slot* is a Ray actor holding one desktop's worth of a worker node: it asks for one CPU
and one ``deskpilot_desktop`` (a custom resource only prepared nodes advertise, so the number
of desktops per node is the node's choice) and runs one trial process at a time, exactly as
the local backend does (:func:`deskpilot.eval.attempt.run_attempt`: its own sandbox desktop,
its process group killed at the deadline). The suite travels once, packed, through Ray's
object store; a trial's files come back packed with its result.

The driver owns retries: a slot restarts when its worker dies (``max_restarts=-1``) but never
re-runs a call (``max_task_retries=0``); the lost attempt is an infrastructure error, which the
driver retries. A slot silent past its attempt's deadline + 60 s is killed (and restarts).

Which cluster: ``--ray-address``, else ``RAY_ADDRESS``, else the latest ``ray start`` on this
machine; with none of them, a Ray instance local to this run with ``-j`` desktops.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import socket
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayError

from deskpilot.errors import EvalError
from deskpilot.eval.attempt import Attempt, base_result, run_attempt
from deskpilot.eval.store import trial_dir
from deskpilot.eval.suite import Suite

RESOURCE = "deskpilot_desktop"
#: a trial's files larger than this stay on the node (screens, big logs)
MAX_FILE_BYTES = 4 << 20
SILENT_GRACE_S = 60.0


def pack(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
                tar.add(path, arcname=str(path.relative_to(folder)))
    return buf.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")


#: how long the driver waits for a Ray head to accept a connection
CONNECT_TIMEOUT_S = 10.0


def reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse at once an address that is malformed or where nothing listens (Ray itself
    retries an unreachable head for minutes with only warnings)."""
    if address in ("auto", "local"):
        return
    rest = address.split("://", 1)[1] if "://" in address else address
    if "://" in address and not address.startswith(("ray://", "http://", "https://")):
        raise EvalError(f"Ray address {address!r} is malformed: use HOST:PORT or ray://HOST:PORT")
    host, sep, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise EvalError(
            f"Ray address {address!r} is malformed: use HOST:PORT (e.g. 10.0.0.5:6379), "
            "ray://HOST:10001 or auto"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise EvalError(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc} (is `ray start "
            "--head` running there, and is the port open?)"
        ) from None


class DesktopSlot:
    """One desktop on a worker node (a Ray actor; see the module docstring)."""

    def __init__(self, suite: bytes) -> None:
        root = Path(tempfile.gettempdir()) / "deskpilot-slots"
        root.mkdir(exist_ok=True)
        for old in root.iterdir():  # left by slots whose worker was killed
            pid = old.name.split("-", 1)[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                shutil.rmtree(old, ignore_errors=True)
        self.home = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root))
        self.suite = self.home / "suite"
        unpack(suite, self.suite)
        self.node = socket.gethostname()

    def where(self) -> dict[str, Any]:
        return {"node": self.node, "pid": os.getpid(), "home": str(self.home)}

    def cleanup(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    def run(self, attempt: Attempt) -> dict[str, Any]:
        spec = dict(attempt.spec)
        task = dict(spec["task"])
        rel = os.path.relpath(task["base_dir"], spec["suite_root"])
        task["base_dir"] = str((self.suite / rel).resolve())
        spec["task"] = task
        here = Attempt(attempt.key, attempt.number, spec)
        out = self.home / "trials" / attempt.key.task / f"t{attempt.key.trial}-a{attempt.number}"
        try:
            result = run_attempt(here, out)  # the node's own environment (apps, API keys)
            result["node"] = self.node
            return {"result": result, "files": pack(out)}
        finally:
            shutil.rmtree(out, ignore_errors=True)


class RayBackend:
    name = "ray"

    def __init__(
        self, run: Path, jobs: int | None, env: dict[str, str], suite: Suite, address: str | None
    ) -> None:
        del env  # trials on a node use the node's environment
        self.run = run
        self._connect(address, jobs)
        total = int(ray.cluster_resources().get(RESOURCE, 0))  # type: ignore[no-untyped-call]
        if total < 1:
            ray.shutdown()
            raise EvalError(
                f"no node of the Ray cluster offers the {RESOURCE!r} resource: start each "
                f"worker with ray start --address=HEAD:6379 --resources='{{\"{RESOURCE}\": 2}}'"
            )
        self.slots = min(total, jobs) if jobs else total
        root = suite.root if suite.root.is_dir() else suite.root.parent
        blob = pack(root)  # small: it travels with the actor (a restart needs it again)
        actor = ray.remote(DesktopSlot).options(
            num_cpus=1, resources={RESOURCE: 1}, max_restarts=-1, max_task_retries=0
        )
        self._idle: list[Any] = [actor.remote(blob) for _ in range(self.slots)]
        self._flying: dict[Any, tuple[Attempt, Any, float]] = {}
        #: slots whose worker died, each with a probe call that answers once it restarted
        self._recovering: dict[Any, Any] = {}

    def _connect(self, address: str | None, jobs: int | None) -> None:
        options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
        if address:
            reachable(address)
        try:
            if address:
                ray.init(address=address, **options)
                return
            try:  # RAY_ADDRESS, else the latest `ray start` on this machine
                ray.init(address="auto", **options)
            except ConnectionError:  # none: a Ray instance for this run alone
                ray.init(resources={RESOURCE: jobs or 1}, include_dashboard=False, **options)
        except (ConnectionError, RayError, ValueError, RuntimeError) as exc:
            raise EvalError(f"cannot reach the Ray cluster: {exc}") from exc

    def where(self) -> list[dict[str, Any]]:
        """Node and process of every slot (for tests and diagnostics)."""
        slots = self._idle + [s for _, s, _ in self._flying.values()]
        return list(ray.get([s.where.remote() for s in slots], timeout=60))

    @property
    def ready(self) -> int:
        """Slots able to take an attempt now."""
        self._recover()
        return len(self._idle)

    def submit(self, attempt: Attempt) -> None:
        self._recover()
        slot = self._idle.pop(0)
        ref = slot.run.remote(attempt)
        self._flying[ref] = (attempt, slot, time.monotonic() + attempt.deadline_s + SILENT_GRACE_S)

    def _recover(self) -> None:
        """Slots whose restarted worker answers its probe take attempts again."""
        if not self._recovering:
            return
        done, _ = ray.wait(list(self._recovering), num_returns=len(self._recovering), timeout=0)
        for probe in done:
            slot = self._recovering.pop(probe)
            try:
                ray.get(probe, timeout=10)
            except RayError:  # still restarting: ask again
                self._recovering[slot.where.remote()] = slot
                continue
            self._idle.append(slot)

    def wait(self, timeout: float) -> list[tuple[Attempt, dict[str, Any]]]:
        if not self._flying:
            if self._recovering:  # nothing runs: wait for a slot to come back
                ray.wait(list(self._recovering), num_returns=1, timeout=timeout)
            self._recover()
            return []
        self._recover()
        ready, _ = ray.wait(list(self._flying), num_returns=1, timeout=timeout)
        out = [self._collect(ref) for ref in ready]
        now = time.monotonic()
        for ref, (attempt, slot, deadline) in list(self._flying.items()):
            if now > deadline:  # a slot that cannot answer: kill it, it restarts
                ray.kill(slot, no_restart=False)
                del self._flying[ref]
                self._recovering[slot.where.remote()] = slot
                out.append((attempt, base_result(attempt, "infra_error", "the slot went silent")))
        return out

    def _collect(self, ref: Any) -> tuple[Attempt, dict[str, Any]]:
        attempt, slot, _ = self._flying.pop(ref)
        try:
            answer = ray.get(ref, timeout=60)
        except (RayActorError, GetTimeoutError, RayError) as exc:
            self._recovering[slot.where.remote()] = slot  # it restarts; used again once up
            why = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
            detail = f"the Ray worker running it was lost ({type(exc).__name__}: {why})"
            return attempt, base_result(attempt, "infra_error", detail)
        self._idle.append(slot)
        unpack(answer["files"], trial_dir(self.run, attempt.key, attempt.number))
        result: dict[str, Any] = answer["result"]
        return attempt, result

    def describe(self) -> str:
        nodes = sorted({w["node"] for w in self.where()})
        return f"{self.slots} Ray desktop slot(s) on {', '.join(nodes)}"

    def close(self, *, kill: bool = False) -> None:
        if not kill and self._idle:
            with contextlib.suppress(RayError):
                ray.get([s.cleanup.remote() for s in self._idle], timeout=30)
        slots = self._idle + [s for _, s, _ in self._flying.values()]
        for slot in slots + list(self._recovering.values()):
            ray.kill(slot, no_restart=True)
        self._idle.clear()
        self._flying.clear()
        self._recovering.clear()
        ray.shutdown()
