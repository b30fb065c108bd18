"""Headless Wayland compositors for sandbox desktops: sway (wlroots) and mutter (GNOME).

Each runs as the sandbox's unprivileged user (:mod:`~deskpilot.sandbox.user`: compositors
refuse root) on the sandbox's private session bus, with Xwayland for X11 apps. What was measured
(``tests/wayland/`` starts both):

- **sway** 1.7: ``WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1`` and a
  config that sizes the output ``HEADLESS-1``. Ready when its IPC socket answers. Xwayland is
  started on the first X client; its display is known at once from the X lock file sway writes
  (``/tmp/.XN-lock`` holds sway's PID). IPC, screencopy and the virtual keyboard/pointer
  protocols are what deskpilot drives it with.
- **mutter** 43: ``--headless --wayland --virtual-monitor WxH``, after PipeWire and WirePlumber
  (its ScreenCast streams are PipeWire nodes, and linking a reader to one needs the session
  manager). Ready when ``org.gnome.Mutter.ScreenCast`` is on the session bus; Xwayland's
  display is in mutter's lock file too, its cookie in ``.mutter-Xwaylandauth.*``.

:class:`Compositor` says what a started one offers; :func:`start_compositor` starts one with a
:class:`Spawner` (the sandbox's way to run a daemon as its user, in its process group).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

from deskpilot._wait import WaitTimeout, wait_for
from deskpilot.errors import SandboxError
from deskpilot.sandbox.recipe import log_tail

Kind = Literal["x11", "sway", "gnome"]
KINDS: tuple[Kind, ...] = ("x11", "sway", "gnome")
WAYLAND_KINDS: tuple[Kind, ...] = ("sway", "gnome")

#: binaries each Wayland kind needs, with the Debian package that brings them
REQUIREMENTS: dict[str, dict[str, str]] = {
    "sway": {"sway": "sway", "Xwayland": "xwayland"},
    "gnome": {
        "mutter": "mutter",
        "pipewire": "pipewire",
        "wireplumber": "wireplumber",
        "Xwayland": "xwayland",
    },
}
#: The process that holds a headless compositor's virtual keyboard and pointer; its arguments
#: follow (the compositor kind, then how to reach it).
SEAT_KEEPER = (sys.executable, "-m", "deskpilot.desktop.wayland.seat_keeper")


class Spawner(Protocol):
    """How a sandbox starts its daemons: as its user, in its process group, logged."""

    @property
    def runtime_dir(self) -> str: ...

    def daemon(
        self, argv: Sequence[str], env: Mapping[str, str], *, log: str
    ) -> subprocess.Popen[bytes]: ...


@dataclass(frozen=True)
class Compositor:
    """A running headless compositor: what its clients need to reach it."""

    kind: Kind
    pid: int
    wayland_display: str  # absolute path of the Wayland socket
    x_display: str = ""  # Xwayland's display (":N"), "" when there is none
    xauthority: str = ""
    env: dict[str, str] = field(default_factory=dict)  # more variables for clients


def check_kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise SandboxError(f"unknown sandbox kind {kind!r}: choose one of {', '.join(KINDS)}")
    return kind


def check_requirements(kind: Kind) -> None:
    needs = REQUIREMENTS.get(kind, {})
    missing = {b: p for b, p in needs.items() if shutil.which(b) is None}
    if missing:
        raise SandboxError(
            f"cannot start a {kind} sandbox: {', '.join(missing)} not installed — run "
            f"scripts/setup-system.sh (or: apt install {' '.join(sorted(set(missing.values())))})"
        )


def start_compositor(
    kind: Kind, spawner: Spawner, env: Mapping[str, str], width: int, height: int, timeout: float
) -> Compositor:
    """Start the compositor of ``kind`` and wait until it serves clients."""
    share_x_socket_dir()
    base = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    if kind == "sway":
        return _start_sway(spawner, base, width, height, timeout)
    if kind == "gnome":
        return _start_mutter(spawner, base, width, height, timeout)
    raise SandboxError(f"{kind} is not a Wayland sandbox kind")


#: Where every X server puts its socket: shared by all users, root's with mode 1777, as
#: systemd-tmpfiles makes it at boot.
X_SOCKET_DIR = "/tmp/.X11-unix"


def share_x_socket_dir(path: str = X_SOCKET_DIR) -> None:
    """Make the X socket directory everyone's before a compositor's Xwayland needs it.

    Xwayland runs as the sandbox's user and puts its socket in ``/tmp/.X11-unix``. Where no X
    server ran since boot the directory is missing, and the first Xwayland creates it as its
    user's, mode 0755; every later sandbox with another user then fails (measured: mutter 43
    exits with SIGTRAP, "Failed to start X Wayland: Directory "/tmp/.X11-unix" is not
    writable"; sway's Xwayland gives no display). As root, make it what tmpfiles would; as an
    ordinary user the compositor runs as that user and the directory is the system's affair.
    """
    if os.geteuid() != 0:
        return
    try:
        os.mkdir(path, 0o1777)
    except FileExistsError:
        pass
    except OSError as exc:
        raise SandboxError(f"cannot create {path} for Xwayland's sockets: {exc}") from exc
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise SandboxError(f"{path} is not a directory: X servers cannot put their sockets there")
    if info.st_uid != 0 or info.st_gid != 0:
        os.chown(path, 0, 0)
    if stat.S_IMODE(info.st_mode) != 0o1777:
        os.chmod(path, 0o1777)


# -- sway ------------------------------------------------------------------------------------

SWAY_CONFIG = """# deskpilot sandbox: one headless output, Xwayland for X11 apps
output HEADLESS-1 resolution {width}x{height} position 0 0
xwayland enable
focus_on_window_activation focus
"""


def _start_sway(
    spawner: Spawner, env: dict[str, str], width: int, height: int, timeout: float
) -> Compositor:
    run = spawner.runtime_dir
    conf = os.path.join(run, "sway.conf")
    with open(conf, "w") as fh:
        fh.write(SWAY_CONFIG.format(width=width, height=height))
    os.chmod(conf, 0o644)
    env = dict(env)
    env.update(
        {
            "WLR_BACKENDS": "headless",
            "WLR_RENDERER": "pixman",
            "WLR_LIBINPUT_NO_DEVICES": "1",
            "XDG_CURRENT_DESKTOP": "sway",
            "XDG_SESSION_TYPE": "wayland",
        }
    )
    proc = spawner.daemon(["sway", "--config", conf], env, log="sway.log")

    def ipc_ready() -> str | None:
        if proc.poll() is not None:
            raise SandboxError(f"sway exited ({proc.returncode}); {log_tail(run, 'sway.log')}")
        found = glob.glob(os.path.join(run, f"sway-ipc.*.{proc.pid}.sock"))
        if not found or not _answers(found[0]):
            return None
        return found[0]

    ipc = _wait(ipc_ready, timeout, "sway to serve its IPC socket", run, "sway.log")
    wayland = _wait(lambda: _wayland_socket(run), timeout, "sway's Wayland socket", run, "sway.log")
    # a headless sway has no input devices: hold a virtual keyboard and pointer from the start
    # (deskpilot.desktop.wayland.seat_keeper says why)
    keeper = spawner.daemon(
        [*SEAT_KEEPER, "wlr", wayland, str(width), str(height)], env, log="seat-keeper.log"
    )
    _wait(
        lambda: _seat_has_devices(ipc) or _dead(keeper, "seat-keeper", run),
        timeout,
        "the seat's virtual keyboard and pointer",
        run,
        "seat-keeper.log",
    )
    x_display = _wait_x_display(proc.pid, timeout)
    return Compositor(
        kind="sway",
        pid=proc.pid,
        wayland_display=wayland,
        x_display=x_display,
        env={"SWAYSOCK": ipc, "XDG_CURRENT_DESKTOP": "sway"},
    )


# -- mutter ----------------------------------------------------------------------------------


def _start_mutter(
    spawner: Spawner, env: dict[str, str], width: int, height: int, timeout: float
) -> Compositor:
    run = spawner.runtime_dir
    env = dict(env)
    env.update({"XDG_CURRENT_DESKTOP": "GNOME", "XDG_SESSION_TYPE": "wayland"})
    pipewire = spawner.daemon(["pipewire"], env, log="pipewire.log")
    _wait(
        lambda: _answers(os.path.join(run, "pipewire-0")) or _dead(pipewire, "pipewire", run),
        timeout,
        "PipeWire",
        run,
        "pipewire.log",
    )
    spawner.daemon(["wireplumber"], env, log="wireplumber.log")
    proc = spawner.daemon(
        ["mutter", "--headless", "--wayland", "--virtual-monitor", f"{width}x{height}"],
        env,
        log="mutter.log",
    )

    def ready() -> bool:
        _dead(proc, "mutter", run)
        return _has_name(env, "org.gnome.Mutter.ScreenCast") and _has_name(
            env, "org.gnome.Mutter.RemoteDesktop"
        )

    _wait(ready, timeout, "mutter's ScreenCast and RemoteDesktop services", run, "mutter.log")
    wayland = _wait(
        lambda: _wayland_socket(run), timeout, "mutter's Wayland socket", run, "mutter.log"
    )
    # a headless mutter has no input devices: a RemoteDesktop session held from the start
    # gives its seat a keyboard and a pointer (deskpilot.desktop.wayland.seat_keeper)
    keeper = spawner.daemon(
        [*SEAT_KEEPER, "mutter", env["DBUS_SESSION_BUS_ADDRESS"]], env, log="seat-keeper.log"
    )
    _wait(
        lambda: (
            "ready" in _read(os.path.join(run, "seat-keeper.log"))
            or _dead(keeper, "seat-keeper", run)
        ),
        timeout,
        "the seat's keyboard and pointer",
        run,
        "seat-keeper.log",
    )
    auth = sorted(glob.glob(os.path.join(run, ".mutter-Xwaylandauth.*")))
    return Compositor(
        kind="gnome",
        pid=proc.pid,
        wayland_display=wayland,
        x_display=_wait_x_display(proc.pid, timeout),
        xauthority=auth[0] if auth else "",
        env={"XDG_CURRENT_DESKTOP": "GNOME"},
    )


# -- helpers ---------------------------------------------------------------------------------


T = TypeVar("T")


def _wait(check: Callable[[], T | None], timeout: float, what: str, run: str, log: str) -> T:
    try:
        return wait_for(check, timeout=timeout, what=what)
    except WaitTimeout as exc:
        raise SandboxError(f"sandbox desktop did not come up: {exc}; {log_tail(run, log)}") from exc


def _dead(proc: subprocess.Popen[bytes], name: str, run: str) -> bool:
    if proc.poll() is not None:
        log = f"{name}.log"
        raise SandboxError(f"{name} exited ({proc.returncode}); {log_tail(run, log)}")
    return False


def _answers(path: str) -> bool:
    """Whether something listens on the unix socket at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        try:
            sock.connect(path)
        except OSError:
            return False
    return True


def _wayland_socket(run: str) -> str | None:
    for path in sorted(glob.glob(os.path.join(run, "wayland-*"))):
        if not path.endswith(".lock") and _answers(path):
            return path
    return None


def _wait_x_display(pid: int, timeout: float) -> str:
    """Xwayland's display: the compositor writes its X lock file just after it starts serving
    Wayland clients. "" if none comes (a compositor built without Xwayland)."""
    try:
        displays = wait_for(
            lambda: x_displays_of(pid) or None, timeout=min(timeout, 5.0), what="Xwayland's display"
        )
        return str(displays[0])
    except WaitTimeout:
        return ""


def x_displays_of(pid: int) -> list[str]:
    """The X displays whose lock files name ``pid`` (a compositor's Xwayland), lowest first."""
    found = []
    for lock in glob.glob("/tmp/.X*-lock"):
        number = re.fullmatch(r"/tmp/\.X(\d+)-lock", lock)
        if not number:
            continue
        try:
            with open(lock) as fh:
                owner = int(fh.read().strip("\x00 \n") or 0)
        except (OSError, ValueError):
            continue
        if owner == pid:
            found.append(int(number.group(1)))
    return [f":{n}" for n in sorted(found)]


def _has_name(env: Mapping[str, str], name: str) -> bool:
    done = subprocess.run(
        [
            "dbus-send",
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            f"string:{name}",
        ],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=5,
        check=False,
    )
    return "boolean true" in done.stdout


def _seat_has_devices(ipc_path: str) -> bool:
    """Whether sway's first seat has a keyboard and a pointer (capabilities 3)."""
    from deskpilot.desktop.wayland.sway import GET_SEATS, request_once

    seats = request_once(ipc_path, GET_SEATS)
    return isinstance(seats, list) and any(
        isinstance(s, dict) and int(s.get("capabilities", 0)) & 3 == 3 for s in seats
    )


def _read(path: str) -> str:
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""
