"""One trial = one process with its own sandbox desktop: setup, the policy, the checks.

::

    python -m deskpilot.eval.trial SPEC [--watch FD]

``SPEC`` (``/proc/self/fd/N``: the driver keeps the file out of the trial's sight) holds the
task (as data), the trial and attempt numbers, the policy and ``out``
(the trial's directory). The process writes ``phase`` as it goes (setup, agent, check), the
loopback server's ``http.jsonl``, captured stdout, ``transcript.md`` (the audit-log run) and,
last, ``result.json`` (written atomically). ``--watch FD`` is a pipe from the driver: when it
closes (the driver died) the trial exits and its sandbox is torn down by the sandbox's reaper.

Statuses: ``passed``/``failed`` (the checks), ``timeout`` (the agent's time ran out),
``setup_error``, ``checker_error``, ``infra_error`` (the sandbox, the provider or deskpilot
itself failed). Only the last is retried by the driver.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from deskpilot.audit import AuditLog
from deskpilot.audit.chain import new_run_id
from deskpilot.config import Settings, load_settings
from deskpilot.desktop.registry import sandbox_kind
from deskpilot.errors import DeskpilotError, ProviderError, SetupFailed
from deskpilot.eval.attempt import Attempt, base_result
from deskpilot.eval.check_env import CheckEnv
from deskpilot.eval.checks import evaluate_all
from deskpilot.eval.isolation import keep_private, map_vm_home
from deskpilot.eval.policies import Outcome, PolicySpec, run_policy, tokens
from deskpilot.eval.setup import Stage
from deskpilot.eval.store import TrialKey, write_json
from deskpilot.eval.task import Task
from deskpilot.eval.vm_shims import ISOLATED_VAR
from deskpilot.events import Event
from deskpilot.policy import AllowAll
from deskpilot.runtime import open_session
from deskpilot.sandbox import Sandbox
from deskpilot.sandbox.processes import processes_of
from deskpilot.session import Session

#: seconds the loop gets after its timeout for a last answer, before the trial stops it
GRACE_S = 60.0


class Counter:
    """Counts tool calls and tool errors from the event stream (what the ToolSet emits)."""

    def __init__(self) -> None:
        self.calls = 0
        self.errors = 0

    def __call__(self, event: Event) -> None:
        if event.kind == "tool.result":
            self.calls += 1
            self.errors += 0 if event.data.get("ok") else 1


class Trial:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.task = Task.model_validate(spec["task"])
        self.policy = PolicySpec.from_dict(spec["policy"])
        self.out = Path(spec["out"])
        self.out.mkdir(parents=True, exist_ok=True)
        key = TrialKey(self.task.id, spec["trial"])
        # the fields every result has, as the driver writes them for a trial without one
        self.result: dict[str, Any] = base_result(
            Attempt(key, spec["attempt"], spec), "infra_error", ""
        )
        self.result.update(
            version=self.task.version,
            family=self.task.family,
            policy=self.policy.label,
            node=socket.gethostname(),
            pid=os.getpid(),
            started_at=time.time(),
        )
        self.counter = Counter()
        self.times: dict[str, float] = {}

    def phase(self, name: str) -> None:
        (self.out / "phase").write_text(name)

    def finish(self, status: str, detail: str = "") -> None:
        self.result["status"], self.result["detail"] = status, detail[:2000]

    async def run(self) -> dict[str, Any]:
        start = time.perf_counter()
        base = load_settings()
        try:
            kind = sandbox_kind(base)  # a named backend's desktop ("wlroots": sway)
            self.result["sandbox"] = kind
            with (
                Sandbox(width=1280, height=800, kind=kind) as sandbox,
                contextlib.ExitStack() as stack,
            ):
                try:
                    await self._in_sandbox(base, sandbox, stack)
                finally:
                    _kill_all(sandbox)
        except DeskpilotError as exc:
            if self.result["status"] == "infra_error" and not self.result["detail"]:
                self.finish("infra_error", f"{type(exc).__name__}: {exc}")
        self.times["total"] = time.perf_counter() - start
        self.result["time"] = {k: round(v, 3) for k, v in self.times.items()}
        self.result["finished_at"] = time.time()
        return self.result

    async def _in_sandbox(
        self, base: Settings, sandbox: Sandbox, stack: contextlib.ExitStack
    ) -> None:
        assert sandbox.info is not None
        self.result["display"] = sandbox.info.display
        self.result["isolated"] = os.environ.get(ISOLATED_VAR) == "1"
        map_vm_home(Path(sandbox.info.home))
        settings = base.with_overrides(
            environ=sandbox.app_env(),
            display=sandbox.info.display,
            session_bus=sandbox.info.session_bus,
            sandbox_dir=sandbox.info.runtime_dir,
            confirm="none",  # nobody is there to approve: the sandbox is thrown away after
            # the trajectory: a frame of the window after every step
            step_frames=bool(self.spec.get("frames", True)),
        )
        run_id = new_run_id()
        self.result["audit_run"], self.result["audit_db"] = run_id, str(settings.audit_db)
        try:
            await self._phases(settings, sandbox, stack, run_id)
        finally:
            self._transcript(settings, run_id)

    async def _phases(
        self, settings: Settings, sandbox: Sandbox, stack: contextlib.ExitStack, run_id: str
    ) -> None:
        # the one door, as for every surface; nobody is there to approve and the desktop is
        # thrown away afterwards, so what needs a yes is allowed (and still recorded)
        async with open_session(
            settings,
            surface="eval",
            approver=AllowAll(),
            observe=self.counter,
            session=Session(name=settings.session),
            label=f"eval {self.task.id}",
        ) as ctx:
            ctx.run_id = run_id
            desktop: Any = ctx.desktop
            self.phase("setup")
            t0 = time.perf_counter()
            try:
                store = Path(self.spec.get("store") or settings.osworld_store)
                stage = Stage(
                    self.task,
                    sandbox,
                    desktop,
                    self.out,
                    stack,
                    store=store,
                    private_fds=tuple(self.spec.get("private_fds", ())),
                )
                env = await stage.run()
            except SetupFailed as exc:
                self.times["setup"] = time.perf_counter() - t0
                return self.finish("setup_error", str(exc))
            self.times["setup"] = time.perf_counter() - t0
            self.phase("agent")
            t0 = time.perf_counter()
            outcome = await self._agent(ctx, settings, env)
            self.times["agent"] = time.perf_counter() - t0
            self._record(outcome)
            env.answer = outcome.answer
            if self.task.postconfig:  # the harness's own steps (OSWorld's, e.g. save)
                self.phase("postconfig")
                t0 = time.perf_counter()
                try:
                    await stage.postconfig()
                except SetupFailed as exc:
                    self.times["postconfig"] = time.perf_counter() - t0
                    return self.finish("setup_error", str(exc))
                self.times["postconfig"] = time.perf_counter() - t0
            self.phase("check")
            self._check(env, outcome)

    async def _agent(self, ctx: Any, settings: Settings, env: CheckEnv) -> Outcome:
        limit = self.task.timeout + (GRACE_S if self.policy.kind == "model" else 0)
        try:
            async with asyncio.timeout(limit):
                return await run_policy(self.policy, self.task, ctx, settings, env.expand, env)
        except TimeoutError:
            return Outcome(reason="timeout", answer=f"stopped after {limit:g} s")
        except ProviderError as exc:
            return Outcome(reason="provider_error", answer=str(exc))

    def _record(self, outcome: Outcome) -> None:
        self.result["steps"] = outcome.steps
        self.result["reason"] = outcome.reason
        self.result["answer"] = outcome.answer[:1000]
        self.result["tokens_in"], self.result["tokens_out"] = tokens(outcome.usage)
        self.result["tool_calls"], self.result["tool_errors"] = (
            self.counter.calls,
            self.counter.errors,
        )

    def _check(self, env: CheckEnv, outcome: Outcome) -> None:
        t0 = time.perf_counter()
        try:
            ok, results, _ = evaluate_all(self.task.check, env, settle=self.task.settle)
        except Exception as exc:  # a checker that cannot read the state is the task's bug
            self.times["check"] = time.perf_counter() - t0
            logging.getLogger(__name__).exception("checker error")
            return self.finish("checker_error", f"{type(exc).__name__}: {exc}")
        self.times["check"] = time.perf_counter() - t0
        self.result["checks"] = [r.to_dict() for r in results]
        failed = "; ".join(r.detail for r in results if not r.ok)
        if outcome.reason == "provider_error":
            return self.finish("infra_error", f"the model provider failed: {outcome.answer}")
        if outcome.reason == "timeout":
            self.result["passed_late"] = ok
            return self.finish("timeout", outcome.answer)
        if ok:
            return self.finish("passed")
        why = (
            f" (the oracle stopped: {outcome.answer})" if outcome.reason == "oracle_failed" else ""
        )
        return self.finish("failed", failed + why)

    def _transcript(self, settings: Settings, run_id: str) -> None:
        with contextlib.suppress(DeskpilotError), AuditLog(settings.audit_db) as audit:
            # the trajectory: each step, with its screenshots written beside it
            text = audit.export_markdown(run_id, self.out / "screens", "screens/")
            (self.out / "transcript.md").write_text(text, encoding="utf-8")


def _kill_all(sandbox: Sandbox) -> None:
    """End the desktop's processes at once: the state is checked and the desktop is thrown
    away, so apps get no time to shut down (Chromium takes a second); stop() then finds
    only the dead."""
    info = sandbox.info
    if info is None:
        return
    for pid in processes_of(info.runtime_dir, info.pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _watch(fd: int) -> None:
    """Exit when the driver's end of the pipe closes (the driver died)."""

    def loop() -> None:
        with contextlib.suppress(OSError):
            while os.read(fd, 64):
                pass
        os._exit(75)

    threading.Thread(target=loop, name="driver-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deskpilot.eval.trial")
    parser.add_argument("spec", type=Path)
    parser.add_argument("--watch", type=int, default=None)
    args = parser.parse_args(argv)
    if args.watch is not None:
        _watch(args.watch)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    spec = json.loads(args.spec.read_text(encoding="utf-8"))
    keep_private(spec.get("private_fds", ()))
    trial = Trial(spec)
    try:
        result = asyncio.run(trial.run())
    except Exception as exc:  # a bug in deskpilot: recorded, never a model failure
        traceback.print_exc()
        trial.finish("infra_error", f"the trial crashed: {type(exc).__name__}: {exc}")
        result = trial.result
    write_json(trial.out / "result.json", result)
    trial.phase("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
