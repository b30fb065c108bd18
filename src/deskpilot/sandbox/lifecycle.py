"""A private headless desktop: Xvfb, a session bus, the AT-SPI bus, a window manager and audio —
or, for ``kind="sway"``/``"gnome"``, a headless Wayland compositor run as the sandbox's
unprivileged user (:mod:`~deskpilot.sandbox.wayland_session`).

The recipe's pieces are in :mod:`~deskpilot.sandbox.recipe`. Every process the
sandbox starts joins one fresh process group (not the caller's); ``stop()`` kills that group and
then sweeps any process whose environment carries the sandbox's private ``XDG_RUNTIME_DIR``
(D-Bus-activated services are re-parented to PID 1 and apps may call ``setsid``).

A *reaper* process (``python -m deskpilot._reaper``) holds a pipe to the owner: if the owner
dies without calling ``stop()`` (SIGKILL, crash), the reaper tears the desktop down. A sandbox
started with ``keep=True`` (``deskpilot sandbox up``) has no reaper and outlives its starter;
its :class:`SandboxInfo` is saved so that ``status``/``down`` can find it.

Usage::

    with Sandbox(width=1280, height=800) as sb:
        proc = sb.spawn(["gnome-calculator"])
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import IO

from deskpilot._wait import WaitTimeout, wait_for
from deskpilot.errors import SandboxError
from deskpilot.sandbox import services
from deskpilot.sandbox.app_user import claim_app_user, daemon_argv, open_sockets
from deskpilot.sandbox.compositors import check_kind
from deskpilot.sandbox.compositors import check_requirements as check_kind_requirements
from deskpilot.sandbox.info import DESKTOP_VARS, SandboxInfo, sandbox_app_env
from deskpilot.sandbox.processes import teardown
from deskpilot.sandbox.recipe import (
    SESSION_BUS_CONFIG,
    check_requirements,
    enable_accessibility,
    find_bus_launcher,
    log_tail,
    prepare_home,
    read_line,
    session_bus_argv,
)
from deskpilot.sandbox.user import SandboxUser, claim_user


class Sandbox:
    """A headless desktop (X11, sway or GNOME) with a working accessibility bus. Context
    manager."""

    def __init__(
        self,
        *,
        width: int = 1280,
        height: int = 800,
        depth: int = 24,
        display: int | None = None,
        base_env: Mapping[str, str] | None = None,
        keep: bool = False,
        audio: bool = True,
        startup_timeout: float = 15.0,
        kind: str = "x11",
    ) -> None:
        self.kind = check_kind(kind)
        if not (64 <= width <= 8192 and 64 <= height <= 8192):
            raise SandboxError(f"sandbox size {width}x{height} is out of range (64..8192)")
        if depth not in (16, 24):
            raise SandboxError(f"sandbox depth {depth} is not supported (16 or 24)")
        if display is not None and not (0 <= display <= 65535):
            raise SandboxError(f"display number {display} is out of range (0..65535)")
        self.width, self.height, self.depth = width, height, depth
        self.requested_display = display
        self.base_env: dict[str, str] = dict(base_env if base_env is not None else os.environ)
        self.keep = keep
        self.audio = audio  # a null audio output, when PipeWire is installed (sandbox.services)
        self.startup_timeout = startup_timeout
        self.info: SandboxInfo | None = None
        self._procs: list[subprocess.Popen[bytes]] = []
        self._pgid: int | None = None
        self._runtime_dir: str | None = None
        self._reaper_fd: int | None = None
        self._reaper: subprocess.Popen[bytes] | None = None
        #: who the desktop's programs run as (Wayland kinds; None on X11: deskpilot's own)
        self.user: SandboxUser | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> SandboxInfo:
        if self.info is not None:
            return self.info
        check_requirements()
        check_kind_requirements(self.kind)
        self._runtime_dir = tempfile.mkdtemp(prefix="deskpilot-sandbox-")
        os.chmod(self._runtime_dir, 0o700)
        try:
            return self._start()
        except BaseException:
            self._abort()
            raise

    def _start(self) -> SandboxInfo:
        assert self._runtime_dir is not None
        run = self._runtime_dir
        home = prepare_home(run)
        base = {k: v for k, v in self.base_env.items() if k not in DESKTOP_VARS}
        base["XDG_RUNTIME_DIR"] = run
        base["HOME"] = home
        if self.kind != "x11":
            from deskpilot.sandbox.wayland_session import start_wayland

            self.user = claim_user(run, home=home)
            self.user.own(run)
            self.info = start_wayland(self, self.kind, base)
            self.info.save()
            if not self.keep:
                self._start_reaper()
            return self.info
        base.update(services.private_dirs(home))  # activated services use the private home too
        # who apps that refuse root run as (None unless deskpilot is root): the buses must
        # admit it from the start (sandbox/app_user.py)
        app_user = claim_app_user(run)

        def bus_daemon(argv: list[str]) -> list[str]:
            return daemon_argv(argv, app_user, run) if app_user is not None else argv

        # 1. Xvfb; it writes the display number to -displayfd when it accepts clients.
        rfd, wfd = os.pipe()
        argv = ["Xvfb"]
        if self.requested_display is not None:
            argv.append(f":{self.requested_display}")
        argv += [
            "-displayfd",
            str(wfd),
            "-screen",
            "0",
            f"{self.width}x{self.height}x{self.depth}",
            "-nolisten",
            "tcp",
            "-noreset",
            "+extension",
            "Composite",
        ]
        xvfb = self._spawn_daemon(argv, base, pass_fds=(wfd,), log="xvfb.log")
        os.close(wfd)
        try:
            number = read_line(rfd, self.startup_timeout, "Xvfb to accept clients")
        except SandboxError as exc:
            raise SandboxError(f"{exc}; {log_tail(self._runtime_dir, 'xvfb.log')}") from exc
        finally:
            os.close(rfd)
        display = f":{number}"
        base["DISPLAY"] = display

        # 2. A minimal session bus (it starts only the settings services of sandbox.services).
        conf = os.path.join(run, "session.conf")
        bus_path = os.path.join(run, "bus")
        with open(conf, "w") as fh:
            fh.write(
                SESSION_BUS_CONFIG.format(bus=bus_path, services=services.write_service_dir(run))
            )
        rfd, wfd = os.pipe()
        self._spawn_daemon(
            bus_daemon(session_bus_argv(conf, wfd)), base, pass_fds=(wfd,), log="dbus.log"
        )
        os.close(wfd)
        try:
            session_bus = read_line(rfd, self.startup_timeout, "the session bus")
        finally:
            os.close(rfd)
        base["DBUS_SESSION_BUS_ADDRESS"] = session_bus

        # 3. The accessibility bus; it publishes AT_SPI_BUS on the root window when ready.
        self._spawn_daemon(
            bus_daemon([find_bus_launcher(), "--launch-immediately"]), base, log="a11y.log"
        )
        # 4. A window manager (EWMH: active window, client list, activation).
        self._spawn_daemon(["openbox", "--sm-disable"], base, log="openbox.log")
        # 5. An audio server whose only output is a null sink.
        audio = self.audio and services.audio_installed()
        if audio:
            services.prepare_audio(home)
            for daemon in services.AUDIO_DAEMONS:
                self._spawn_daemon([daemon], base, log=f"{daemon}.log")

        from deskpilot.desktop.x11 import probe as x11probe

        try:
            wait_for(
                lambda: x11probe.root_has_properties(display, ("AT_SPI_BUS",)),
                timeout=self.startup_timeout,
                what="the accessibility bus",
            )
            wait_for(
                lambda: x11probe.root_has_properties(display, ("_NET_SUPPORTING_WM_CHECK",)),
                timeout=self.startup_timeout,
                what="the window manager",
            )
            if audio:
                wait_for(
                    lambda: services.audio_ready(run),
                    timeout=self.startup_timeout,
                    what="the audio server (PipeWire)",
                )
        except WaitTimeout as exc:
            names = ["a11y.log", "openbox.log"]
            names += [f"{d}.log" for d in services.AUDIO_DAEMONS] if audio else []
            logs = "; ".join(log_tail(self._runtime_dir, n) for n in names)
            raise SandboxError(f"sandbox desktop did not come up: {exc}; {logs}") from exc
        enable_accessibility(base, self.startup_timeout)
        if app_user is not None:
            open_sockets(run)

        assert self._pgid is not None
        self.info = SandboxInfo(
            display=display,
            runtime_dir=run,
            session_bus=session_bus,
            pgid=self._pgid,
            width=self.width,
            height=self.height,
            pids={"xvfb": xvfb.pid},
        )
        self.info.save()
        if not self.keep:
            self._start_reaper()
        return self.info

    def _start_reaper(self) -> None:
        assert self.info is not None
        rfd, wfd = os.pipe()
        self._reaper = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "deskpilot._reaper",
                str(rfd),
                self.info.runtime_dir,
                str(self.info.pgid),
            ],
            pass_fds=(rfd,),
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            env={k: v for k, v in self.base_env.items() if k not in DESKTOP_VARS},
        )
        os.close(rfd)
        self._reaper_fd = wfd

    def stop(self) -> None:
        """Tear everything down: no process of this desktop is left, its files are removed."""
        if self._reaper_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._reaper_fd, b"x")  # "the owner is handling it": reaper exits
            os.close(self._reaper_fd)
            self._reaper_fd = None
        if self._reaper is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._reaper.wait(timeout=5)
            self._reaper = None
        self._abort()
        self.info = None

    def _abort(self) -> None:
        if self._runtime_dir is None:
            return
        left: list[int] = []
        if self._pgid is not None:
            left = teardown(self._runtime_dir, self._pgid)
        else:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)
        for proc in self._procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)
        self._procs.clear()
        self._runtime_dir = None
        self._pgid = None
        if left:
            raise SandboxError(f"sandbox processes survived teardown: {left}")

    # -- processes -------------------------------------------------------------------------

    @property
    def runtime_dir(self) -> str:
        if self._runtime_dir is None:
            raise SandboxError("the sandbox is not running")
        return self._runtime_dir

    @property
    def pgid(self) -> int | None:
        return self._pgid

    def daemon(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        log: str,
        pass_fds: Sequence[int] = (),
    ) -> subprocess.Popen[bytes]:
        """Start one of the desktop's own processes, as its user, logged to ``log``."""
        wrapped = self.user.wrap(argv) if self.user is not None else list(argv)
        return self._spawn_daemon(wrapped, env, pass_fds=pass_fds, log=log)

    def _spawn_daemon(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        pass_fds: Sequence[int] = (),
        log: str,
    ) -> subprocess.Popen[bytes]:
        assert self._runtime_dir is not None
        with open(os.path.join(self._runtime_dir, log), "ab") as out:
            return self._popen(argv, env, stdout=out, stderr=out, pass_fds=pass_fds)

    def _popen(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        stdout: IO[bytes] | int | None,
        stderr: IO[bytes] | int | None,
        pass_fds: Sequence[int] = (),
        cwd: str | None = None,
    ) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
                list(argv),
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                pass_fds=tuple(pass_fds),
                cwd=cwd,
                process_group=0 if self._pgid is None else self._pgid,
            )
        except FileNotFoundError as exc:
            raise SandboxError(f"cannot run {argv[0]!r}: not installed") from exc
        if self._pgid is None:
            self._pgid = proc.pid
        self._procs.append(proc)
        return proc

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        log: str | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` on this desktop, in its process group, with accessibility switched on."""
        if self.info is None:
            raise SandboxError("the sandbox is not running")
        full_env = sandbox_app_env(self.base_env, self.info)
        if self.user is not None:
            full_env.update(self.user.env())
            full_env["HOME"] = self.info.home
            argv = self.user.wrap(argv)
        if env:
            full_env.update(env)
        out: IO[bytes] | int = subprocess.DEVNULL
        if log is not None:
            out = open(os.path.join(self.info.runtime_dir, log), "ab")  # noqa: SIM115
        try:
            return self._popen(argv, full_env, stdout=out, stderr=out, cwd=cwd)
        finally:
            if not isinstance(out, int):
                out.close()

    def app_env(self) -> dict[str, str]:
        if self.info is None:
            raise SandboxError("the sandbox is not running")
        return sandbox_app_env(self.base_env, self.info)
