"""A private headless desktop: Xvfb, a session bus, the AT-SPI bus and a window manager.

Recipe and measurements: ../shared/notes/linux-desktop.md ("The recipe"). Every process the
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
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Any

from deskpilot import _procfs
from deskpilot._wait import WaitTimeout, wait_for
from deskpilot.desktop.a11yenv import accessible_env
from deskpilot.errors import SandboxError

REQUIRED_BINARIES = ("Xvfb", "dbus-daemon", "dbus-send", "openbox")
BUS_LAUNCHER_PATHS = (
    "/usr/libexec/at-spi-bus-launcher",
    "/usr/lib/at-spi2-core/at-spi-bus-launcher",
)

#: Variables describing the caller's own desktop; never leaked into the sandbox.
_DESKTOP_VARS = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "AT_SPI_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_CURRENT_DESKTOP",
    "XAUTHORITY",
    "SESSION_MANAGER",
    "DESKPILOT_SANDBOX",
)

_SESSION_BUS_CONFIG = """<busconfig>
  <type>session</type>
  <listen>unix:path={bus}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@dataclass(frozen=True)
class SandboxInfo:
    """Where a running sandbox lives; enough to use it from another process or stop it."""

    display: str
    runtime_dir: str
    session_bus: str
    pgid: int
    width: int
    height: int
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def home(self) -> str:
        return os.path.join(self.runtime_dir, "home")

    def client_env(self) -> dict[str, str]:
        """Variables a client of this desktop needs (what ``sandbox up`` prints)."""
        return {
            "DISPLAY": self.display,
            "DBUS_SESSION_BUS_ADDRESS": self.session_bus,
            "DESKPILOT_SANDBOX": self.runtime_dir,
        }

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SandboxInfo:
        data: dict[str, Any] = json.loads(text)
        return cls(**data)


def sandbox_app_env(base: Mapping[str, str], info: SandboxInfo) -> dict[str, str]:
    """Environment for an app running on the sandbox: private home, accessibility on."""
    env = {k: v for k, v in base.items() if k not in _DESKTOP_VARS}
    home = info.home
    env.update(info.client_env())
    env.update(
        {
            "XDG_RUNTIME_DIR": info.runtime_dir,
            "HOME": home,
            "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "XDG_CACHE_HOME": os.path.join(home, ".cache"),
            "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
            "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
            # single-instance apps (KeePassXC, Qt's QLocalServer) lock in the temp dir: a
            # shared /tmp made an app on one sandbox hand its launch to another sandbox
            "TMPDIR": os.path.join(info.runtime_dir, "tmp"),
        }
    )
    return accessible_env(env, sandbox=True)


def sandbox_command_env(base: Mapping[str, str], info: SandboxInfo) -> dict[str, str]:
    """Environment for the command of ``sandbox run``: the caller's home, the sandbox's display."""
    env = {k: v for k, v in base.items() if k not in _DESKTOP_VARS}
    env.update(info.client_env())
    env["XDG_RUNTIME_DIR"] = info.runtime_dir  # so the final sweep finds what it left behind
    return accessible_env(env, sandbox=True)


def _find_bus_launcher() -> str:
    for path in BUS_LAUNCHER_PATHS:
        if os.access(path, os.X_OK):
            return path
    raise SandboxError(
        "at-spi-bus-launcher not found — install the system packages: scripts/setup-system.sh "
        "(Debian package at-spi2-core)"
    )


def check_requirements() -> None:
    """Fail with an actionable message when a binary the sandbox needs is missing."""
    missing = [b for b in REQUIRED_BINARIES if shutil.which(b) is None]
    if missing:
        raise SandboxError(
            f"cannot start a sandbox desktop: {', '.join(missing)} not installed — run "
            "scripts/setup-system.sh (or: apt install xvfb dbus openbox at-spi2-core)"
        )
    _find_bus_launcher()


def _read_line(fd: int, timeout: float, what: str) -> str:
    """Read one newline-terminated line from ``fd`` (a pipe), waiting at most ``timeout``."""
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise SandboxError(f"timed out after {timeout:.0f}s waiting for {what}")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 256)
        if not chunk:
            raise SandboxError(f"{what}: the process exited before it was ready")
        buf += chunk
    return buf.decode().strip()


#: Apps started on a sandbox by other processes (deskpilot's launcher) are listed here, one PID
#: per line, so that teardown finds them even when they left the process group and rewrote
#: their environment (Chromium does both).
SPAWNED_FILE = "spawned.pids"


def record_spawn(runtime_dir: str, pid: int) -> None:
    """Note a process started on the sandbox at ``runtime_dir`` (for teardown)."""
    with contextlib.suppress(OSError), open(os.path.join(runtime_dir, SPAWNED_FILE), "a") as fh:
        fh.write(f"{pid}\n")


def processes_of(runtime_dir: str, pgid: int | None = None) -> list[int]:
    """PIDs that belong to a sandbox: in its process group, with its XDG_RUNTIME_DIR in their
    environment or its directory on their command line, recorded as spawned on it, and all
    their descendants."""
    marker = f"XDG_RUNTIME_DIR={runtime_dir}".encode()
    path_mark = runtime_dir.encode()
    listed = _procfs.read(os.path.join(runtime_dir, SPAWNED_FILE)).split()
    spawned = {int(x) for x in listed if x.isdigit()}
    me = os.getpid()
    found: set[int] = set()
    links = _procfs.parents()
    for pid in links:
        if pid == me:
            continue
        try:
            in_group = pgid is not None and os.getpgid(pid) == pgid
        except OSError:
            continue
        if (
            in_group
            or pid in spawned
            or marker in _procfs.read(f"/proc/{pid}/environ").split(b"\0")
            or path_mark in _procfs.read(f"/proc/{pid}/cmdline")
        ):
            found.add(pid)
    # and their descendants (Chromium's helpers are children of its browser process)
    return sorted(_procfs.descendants(found, links) - {me})


def teardown(runtime_dir: str, pgid: int, *, grace: float = 1.0) -> list[int]:
    """Kill everything belonging to a sandbox; remove its files. Returns PIDs still alive."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    for pid in processes_of(runtime_dir):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)

    def all_gone() -> bool:
        return all(_procfs.is_zombie(p) for p in processes_of(runtime_dir, pgid))

    try:
        wait_for(all_gone, timeout=grace, what="sandbox processes to exit")
    except WaitTimeout:
        for pid in processes_of(runtime_dir, pgid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(WaitTimeout):
            wait_for(all_gone, timeout=2.0, what="sandbox processes to die")
    left = [p for p in processes_of(runtime_dir, pgid) if not _procfs.is_zombie(p)]
    shutil.rmtree(runtime_dir, ignore_errors=True)
    return left


class Sandbox:
    """A headless X11 desktop with a working accessibility bus. Context manager."""

    def __init__(
        self,
        *,
        width: int = 1280,
        height: int = 800,
        depth: int = 24,
        display: int | None = None,
        base_env: Mapping[str, str] | None = None,
        keep: bool = False,
        startup_timeout: float = 15.0,
    ) -> None:
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
        self.startup_timeout = startup_timeout
        self.info: SandboxInfo | None = None
        self._procs: list[subprocess.Popen[bytes]] = []
        self._pgid: int | None = None
        self._runtime_dir: str | None = None
        self._reaper_fd: int | None = None
        self._reaper: subprocess.Popen[bytes] | None = None

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
        home = os.path.join(run, "home")
        for sub in (".config", ".cache", ".local/share", ".local/state"):
            os.makedirs(os.path.join(home, sub), exist_ok=True)
        os.makedirs(os.path.join(run, "tmp"), exist_ok=True)
        lo_user = os.path.join(home, ".config", "libreoffice", "4", "user")
        os.makedirs(lo_user, exist_ok=True)
        # a fresh LibreOffice profile without Tip of the Day, first-run and recovery dialogs
        profile = resources.files("deskpilot") / "data" / "libreoffice-registrymodifications.xcu"
        with open(os.path.join(lo_user, "registrymodifications.xcu"), "w") as fh:
            fh.write(profile.read_text())
        base = {k: v for k, v in self.base_env.items() if k not in _DESKTOP_VARS}
        base["XDG_RUNTIME_DIR"] = run
        base["HOME"] = home

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
            number = _read_line(rfd, self.startup_timeout, "Xvfb to accept clients")
        except SandboxError as exc:
            raise SandboxError(f"{exc}; {self._log_tail('xvfb.log')}") from exc
        finally:
            os.close(rfd)
        display = f":{number}"
        base["DISPLAY"] = display

        # 2. A minimal session bus (no service dirs: no portals, gvfs, dconf or FUSE mounts).
        conf = os.path.join(run, "session.conf")
        bus_path = os.path.join(run, "bus")
        with open(conf, "w") as fh:
            fh.write(_SESSION_BUS_CONFIG.format(bus=bus_path))
        rfd, wfd = os.pipe()
        self._spawn_daemon(
            [
                "dbus-daemon",
                f"--config-file={conf}",
                "--nofork",
                "--nopidfile",
                f"--print-address={wfd}",
            ],
            base,
            pass_fds=(wfd,),
            log="dbus.log",
        )
        os.close(wfd)
        try:
            session_bus = _read_line(rfd, self.startup_timeout, "the session bus")
        finally:
            os.close(rfd)
        base["DBUS_SESSION_BUS_ADDRESS"] = session_bus

        # 3. The accessibility bus; it publishes AT_SPI_BUS on the root window when ready.
        self._spawn_daemon([_find_bus_launcher(), "--launch-immediately"], base, log="a11y.log")
        # 4. A window manager (EWMH: active window, client list, activation).
        self._spawn_daemon(["openbox", "--sm-disable"], base, log="openbox.log")

        from deskpilot.desktop import x11probe

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
        except WaitTimeout as exc:
            logs = "; ".join(self._log_tail(n) for n in ("a11y.log", "openbox.log"))
            raise SandboxError(f"sandbox desktop did not come up: {exc}; {logs}") from exc
        self._enable_accessibility(base)

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
        if not self.keep:
            self._start_reaper()
        return self.info

    def _enable_accessibility(self, env: Mapping[str, str]) -> None:
        """Set org.a11y.Status.IsEnabled=true (apps that ask the bus then turn a11y on)."""
        subprocess.run(
            [
                "dbus-send",
                "--session",
                "--print-reply",
                "--dest=org.a11y.Bus",
                "/org/a11y/bus",
                "org.freedesktop.DBus.Properties.Set",
                "string:org.a11y.Status",
                "string:IsEnabled",
                "variant:boolean:true",
            ],
            env=dict(env),
            check=False,
            capture_output=True,
            timeout=self.startup_timeout,
        )

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
            env={k: v for k, v in self.base_env.items() if k not in _DESKTOP_VARS},
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

    def _log_tail(self, name: str, lines: int = 5) -> str:
        if self._runtime_dir is None:
            return ""
        try:
            with open(os.path.join(self._runtime_dir, name), errors="replace") as fh:
                tail = fh.read().strip().splitlines()[-lines:]
        except OSError:
            return f"({name}: no log)"
        return f"{name}: " + " | ".join(tail) if tail else f"({name}: empty)"


# -- kept sandboxes (sandbox up / status / down) ------------------------------------------


def state_file(state_dir: Path, name: str) -> Path:
    return state_dir / "sandboxes" / f"{name}.json"


def save_info(state_dir: Path, name: str, info: SandboxInfo) -> Path:
    path = state_file(state_dir, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(info.to_json())
    tmp.replace(path)
    return path


def load_info(state_dir: Path, name: str) -> SandboxInfo | None:
    path = state_file(state_dir, name)
    try:
        return SandboxInfo.from_json(path.read_text())
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as exc:
        raise SandboxError(f"sandbox state file {path} is corrupt ({exc}); delete it") from exc


def is_alive(info: SandboxInfo) -> bool:
    xvfb = info.pids.get("xvfb")
    return xvfb is not None and not _procfs.is_zombie(xvfb) and os.path.isdir(info.runtime_dir)


def forget(state_dir: Path, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        state_file(state_dir, name).unlink()


def list_kept(state_dir: Path) -> Iterator[tuple[str, SandboxInfo]]:
    folder = state_dir / "sandboxes"
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        with contextlib.suppress(SandboxError):
            info = load_info(state_dir, path.stem)
            if info is not None:
                yield path.stem, info
