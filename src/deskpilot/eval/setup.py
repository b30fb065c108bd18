"""Running a task's setup in a trial's fresh sandbox desktop; waits on readiness, never sleeps.

Every failure becomes :class:`SetupFailed` (the trial is a *setup error*: the agent never
started, and it is never counted as the agent's failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import subprocess
from pathlib import Path

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, async_wait_for
from deskpilot.desktop.base import OpenedDesktop, WindowInfo
from deskpilot.desktop.ports.identity import is_new
from deskpilot.errors import DeskpilotError, SetupFailed
from deskpilot.eval.check_env import Captured, CheckEnv, sha256_file
from deskpilot.eval.osworld_chrome import free_port, open_tab
from deskpilot.eval.server import RequestLog, serve
from deskpilot.eval.task import (
    ActivateStep,
    CloseWindowStep,
    LaunchStep,
    MkdirStep,
    OpenTabStep,
    OpenUrlStep,
    RunStep,
    ServeStep,
    SetupStep,
    Task,
    WaitWindowStep,
    WriteStep,
)
from deskpilot.sandbox import Sandbox

#: the folders an OSWorld VM user's home has
VM_FOLDERS = (
    "Desktop",
    "Documents",
    "Downloads",
    "Music",
    "Pictures",
    "Public",
    "Templates",
    "Videos",
)


class Stage:
    """The trial's desktop being set up for one task; ``env`` is what the checks read."""

    def __init__(
        self,
        task: Task,
        sandbox: Sandbox,
        desktop: OpenedDesktop,
        out: Path,
        stack: contextlib.ExitStack,
        store: Path = Path("/nonexistent-osworld-store"),
        private_fds: tuple[int, ...] = (),
    ) -> None:
        assert sandbox.info is not None
        self.task, self.sandbox, self.desktop, self.out, self.stack = (
            task,
            sandbox,
            desktop,
            out,
            stack,
        )
        home = Path(sandbox.info.home)
        self.base = Path(task.base_dir)
        cache = out / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        self.env = CheckEnv(
            home=home,
            app_env=sandbox.app_env(),
            display=sandbox.info.display,
            backend=desktop.backend,
            variables={
                "home": str(home),
                "task_dir": str(self.base),
                "store": str(store),
                "cache": str(cache),
                "cdp_port": str(free_port()),
            },
            private_fds=private_fds,
        )
        #: the environment of the task's own commands (OSWorld's: with the VM's programs)
        self.cmd_env: dict[str, str] = dict(self.env.app_env)
        if "osworld" in task.tags:
            from deskpilot.desktop.a11yenv import chromium_flags
            from deskpilot.eval.vm_shims import make_shims, with_shims

            for folder in VM_FOLDERS:  # the VM user's usual folders
                (home / folder).mkdir(exist_ok=True)
            shims = Path(sandbox.info.runtime_dir) / "vm-bin"
            extra = make_shims(shims, chromium_flags())
            self.cmd_env = with_shims(self.cmd_env, shims, extra)
            self.env.app_env = with_shims(dict(self.env.app_env), shims, extra)

    def arg(self, text: str) -> str:
        """A command-line argument: variables expanded, ``~/`` in the sandbox's home."""
        text = self.env.expand(text)
        return str(self.env.path(text)) if text == "~" or text.startswith("~/") else text

    async def run(self) -> CheckEnv:
        await self._steps(self.task.setup_steps(), "setup")
        return self.env

    async def postconfig(self) -> None:
        """The steps the harness runs after the agent, before the checks (SetupFailed)."""
        await self._steps(self.task.postconfig_steps(), "postconfig")

    async def _steps(self, steps: list[SetupStep], where: str) -> None:
        for i, step in enumerate(steps):
            try:
                await self._step(step)
            except SetupFailed as exc:
                raise SetupFailed(f"{where}.{i}: {exc}") from None
            except (DeskpilotError, OSError, WaitTimeout, subprocess.SubprocessError) as exc:
                raise SetupFailed(f"{where}.{i}: {type(exc).__name__}: {exc}") from exc

    async def _step(self, step: SetupStep) -> None:
        if isinstance(step, WriteStep):
            self._write(step)
        elif isinstance(step, MkdirStep):
            self.env.path(step.mkdir).mkdir(parents=True, exist_ok=True)
        elif isinstance(step, ServeStep):
            self._serve(step)
        elif isinstance(step, LaunchStep):
            await self._launch(step)
        elif isinstance(step, OpenTabStep):
            port, url = self.env.variables["cdp_port"], self.env.expand(step.open_tab)

            async def opened() -> bool:
                return await asyncio.to_thread(open_tab, port, url)

            await async_wait_for(opened, timeout=step.timeout, what=f"a tab for {url}")
        elif isinstance(step, OpenUrlStep):
            await self.desktop.open_urls([self.env.expand(step.open_url)], browser="agent")
        elif isinstance(step, WaitWindowStep):
            await self._window(re.compile(self.env.expand(step.wait_window)), step.timeout)
        elif isinstance(step, RunStep):
            self._run(step)
        elif isinstance(step, ActivateStep):
            pattern = re.compile(self.env.expand(step.activate))
            try:
                window = await self._window(pattern, step.timeout)
            except WaitTimeout:
                if step.required:
                    raise
                return
            await self.desktop.activate(window)
        elif isinstance(step, CloseWindowStep):
            pattern = re.compile(self.env.expand(step.close_window))
            for w in await self.desktop.list_windows():
                if pattern.search(w.title):
                    await self.desktop.close_window(w)

    def _write(self, step: WriteStep) -> None:
        path = self.env.path(step.write)
        path.parent.mkdir(parents=True, exist_ok=True)
        if step.from_ is not None:
            src = Path(self.env.expand(step.from_))
            src = src if src.is_absolute() else self.base / src
            if not src.is_file():
                if step.from_.startswith("{store}"):
                    raise SetupFailed(
                        f"{src} is not in the OSWorld file store: fill it (deskpilot eval "
                        "osworld fetch-list SUITE)"
                    )
                raise SetupFailed(f"the fixture {src} does not exist")
            shutil.copyfile(src, path)
        else:
            path.write_text(self.env.expand(step.text or ""), encoding="utf-8")
        self.env.written[str(path)] = sha256_file(path)

    def _serve(self, step: ServeStep) -> None:
        if self.env.http is not None:
            raise SetupFailed("a task serves one directory")
        root = self.base / self.env.expand(step.serve)
        if not root.is_dir():
            raise SetupFailed(f"{root} is not a directory")
        self.env.http = RequestLog(self.out / "http.jsonl")
        url = self.stack.enter_context(serve(root, self.env.http))
        self.env.variables["server"] = url

    def _run(self, step: RunStep) -> None:
        argv = [self.arg(a) for a in step.run]
        try:
            done = subprocess.run(
                argv,
                env=self.cmd_env,
                pass_fds=self.env.private_fds,  # the harness's own command: {task_dir} too
                cwd=self.env.home,
                capture_output=True,
                text=True,
                timeout=step.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise SetupFailed(f"cannot run {argv[0]!r}: not installed") from None
        if step.stdout is not None:
            Path(self.env.variables["cache"], step.stdout).write_text(done.stdout)
        elif done.returncode != 0:  # a command whose output is kept may fail (diff, grep)
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
            raise SetupFailed(f"{argv[0]} exited with {done.returncode}: {tail[0][:200]}")

    async def _launch(self, step: LaunchStep) -> None:
        argv = [self.arg(a) for a in step.launch]
        if shutil.which(argv[0], path=self.cmd_env.get("PATH")) is None:
            raise SetupFailed(f"cannot run {argv[0]!r}: not installed")
        before = await self.desktop.window_handles()
        log = f"{Path(argv[0]).name}.log"
        if step.capture is not None:
            # absolute: the app starts in the task's home, and a run dir may be given relative
            stdout = (self.out / f"{step.capture}.stdout").resolve()
            if self.sandbox.user is not None and self.sandbox.info is not None:
                # a Wayland sandbox's apps run as its user, who may not reach the run dir (a
                # private one): the output goes where the user can write, read while it lasts
                stdout = Path(self.sandbox.info.runtime_dir, f"{step.capture}.stdout")
                stdout.touch()
                self.sandbox.user.own(str(stdout))
            # stdout to its own file (the check reads it); exec keeps the app's exit code
            argv = ["sh", "-c", 'exec "$@" >"$0"', str(stdout), *argv]
        extra = {"PATH": self.cmd_env["PATH"]} if "PATH" in self.cmd_env else None
        proc = self.sandbox.spawn(argv, env=extra, cwd=str(self.env.home), log=log)
        if step.capture is not None:
            self.env.captured[step.capture] = Captured(proc, stdout)
        if step.ready == "none":
            return
        pattern = re.compile(self.env.expand(step.window)) if step.window else None

        async def window() -> WindowInfo | None:
            if proc.poll() not in (None, 0):
                raise SetupFailed(f"{step.launch[0]} exited with code {proc.returncode}")
            family = _procfs.descendants([proc.pid])
            for w in await self.desktop.list_windows():
                if not is_new(before, w.handle, w.pid) or not w.title:
                    continue
                if pattern.search(w.title) if pattern else (w.pid in family or not w.pid):
                    return w
            return None

        what = f"a window of {step.launch[0]}" + (f" titled /{step.window}/" if step.window else "")
        try:
            found = await async_wait_for(window, timeout=step.timeout, what=what)
        except WaitTimeout as exc:
            raise SetupFailed(f"{exc}; its output: {self._tail(log)}") from None
        if step.ready == "tree":
            await self.desktop.wait_tree_ready(found, step.timeout)

    def _tail(self, log: str) -> str:
        assert self.sandbox.info is not None
        text = _procfs.read(str(Path(self.sandbox.info.runtime_dir) / log)).decode(errors="replace")
        return " | ".join(text.strip().splitlines()[-3:])[-300:] or "(none)"

    async def _window(self, pattern: re.Pattern[str], timeout: float) -> WindowInfo:
        async def window() -> WindowInfo | None:
            return next(
                (w for w in await self.desktop.list_windows() if pattern.search(w.title)), None
            )

        return await async_wait_for(window, timeout=timeout, what=f"a window /{pattern.pattern}/")
