"""Finding the user's desktop when the environment does not name it.

MCP clients start stdio servers with a minimal environment (HOME, LOGNAME, PATH, SHELL, TERM,
USER): no ``DISPLAY``, no ``DBUS_SESSION_BUS_ADDRESS``, no ``XAUTHORITY``. :func:`discover`
looks where a desktop session leaves its traces, in this order, and stops at the first that
names a display:

1. the systemd user environment (``systemctl --user show-environment``: what the session
   exported for user services);
2. the user's graphical login session (``loginctl``: its ``Display``);
3. a sandbox kept with ``deskpilot sandbox up`` (its state file in the user's state dir);
4. the X sockets in ``/tmp/.X11-unix``, leaving out sockets nobody listens on, private
   sandboxes other deskpilot processes started (their X server runs with a
   ``deskpilot-sandbox-`` runtime dir) and bare X servers without a window manager (test
   servers such as ``xvfb-run``'s: nobody's desktop, and deskpilot needs EWMH). One left:
   that one. Several: no guess (operating the wrong desktop is worse than asking), the result
   names them.

The session bus comes from the same places (then ``/run/user/UID/bus``); the accessibility bus
itself is found on the display's root window (``AT_SPI_BUS``) when the desktop opens, so a
missing session bus costs nothing on X11. ``XAUTHORITY``, when unset, is the first cookie file
that exists where display managers put it.

Nothing here reads ``os.environ``: the caller (:func:`deskpilot.config.resolve_desktop`) passes
the environment. The probes are functions of :class:`Probes` so the logic is testable alone.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import re
import stat
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deskpilot._sockets import answers, listening_pid

X11_SOCKET_DIR = "/tmp/.X11-unix"
SANDBOX_MARK = "deskpilot-sandbox-"
#: Seconds a helper command (systemctl, loginctl) may take before it counts as absent.
COMMAND_TIMEOUT = 3.0


def _run(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """stdout of a helper command, or "" when it is missing, fails or hangs."""
    try:
        done = subprocess.run(
            list(argv),
            env=dict(env) if env is not None else None,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def _runtime_dir(uid: int) -> str:
    return f"/run/user/{uid}"


def systemd_environment(uid: int, env: Mapping[str, str]) -> dict[str, str]:
    """The systemd user manager's environment (empty without one)."""
    runtime = env.get("XDG_RUNTIME_DIR") or _runtime_dir(uid)
    if not os.path.isdir(runtime):
        return {}
    call_env = {"PATH": env.get("PATH", "/usr/bin:/bin"), "XDG_RUNTIME_DIR": runtime}
    out: dict[str, str] = {}
    for line in _run(["systemctl", "--user", "show-environment"], call_env).splitlines():
        key, sep, value = line.partition("=")
        if sep and key.isidentifier():
            out[key] = value
    return out


def login_display(uid: int, env: Mapping[str, str]) -> str | None:
    """The X display of the user's graphical login session, as logind knows it."""
    call_env = {"PATH": env.get("PATH", "/usr/bin:/bin")}
    session = _run(["loginctl", "show-user", str(uid), "-p", "Display", "--value"], call_env)
    session = session.strip()
    if not session:
        return None
    display = _run(["loginctl", "show-session", session, "-p", "Display", "--value"], call_env)
    return display.strip() or None


def x_socket_numbers(directory: str = X11_SOCKET_DIR) -> list[int]:
    """Display numbers with a socket in ``directory``, lowest first."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(int(n[1:]) for n in names if re.fullmatch(r"X\d+", n))


def socket_usable(number: int, uid: int, directory: str = X11_SOCKET_DIR) -> bool:
    """Whether display ``number``'s socket is ours (or root's) and something listens on it."""
    path = os.path.join(directory, f"X{number}")
    try:
        info = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid not in (uid, 0):
        return False
    return answers(path)


def has_window_manager(number: int) -> bool:
    """Whether display ``number`` runs an EWMH window manager: a desktop someone works on, not
    a bare X server (``xvfb-run`` test servers), and what deskpilot needs to list windows."""
    from deskpilot.desktop.x11 import probe as x11probe

    return x11probe.root_has_properties(f":{number}", ("_NET_SUPPORTING_WM_CHECK",))


def server_pid(number: int) -> int | None:
    """The X server's PID: from its lock file ``/tmp/.XN-lock`` (the X convention), else the
    process holding the display's listening socket (readable processes only)."""
    with contextlib.suppress(OSError, ValueError):
        text = Path(f"/tmp/.X{number}-lock").read_text().strip()
        return int(text)
    return listening_pid(f"{X11_SOCKET_DIR}/X{number}")


def process_environ(pid: int) -> dict[str, str]:
    """Another process's environment (empty when unreadable)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    out = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            out[key.decode(errors="replace")] = value.decode(errors="replace")
    return out


def process_args(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


@dataclass(frozen=True)
class KeptSandbox:
    name: str
    display: str
    session_bus: str
    runtime_dir: str


def kept_sandboxes(state_dir: Path) -> list[KeptSandbox]:
    """Sandboxes kept with ``deskpilot sandbox up`` that still run."""
    from deskpilot.sandbox.kept import is_alive, list_kept

    return [
        KeptSandbox(name, info.display, info.session_bus, info.runtime_dir)
        for name, info in list_kept(state_dir)
        if is_alive(info)
    ]


def root_a11y_bus(display: str) -> str | None:
    """The accessibility bus address the display's root window advertises (``AT_SPI_BUS``),
    or None (no such property, or the display cannot be opened)."""
    from deskpilot.desktop.x11 import probe as x11probe

    with contextlib.suppress(Exception):
        return x11probe.root_string_property(display, "AT_SPI_BUS")
    return None


@dataclass(frozen=True)
class Probes:
    """How :func:`discover` looks at the machine (replaceable in tests)."""

    systemd_environment: Callable[[int, Mapping[str, str]], dict[str, str]] = systemd_environment
    login_display: Callable[[int, Mapping[str, str]], str | None] = login_display
    kept_sandboxes: Callable[[Path], list[KeptSandbox]] = kept_sandboxes
    x_socket_numbers: Callable[[], list[int]] = x_socket_numbers
    socket_usable: Callable[[int, int], bool] = socket_usable
    has_window_manager: Callable[[int], bool] = has_window_manager
    server_pid: Callable[[int], int | None] = server_pid
    process_environ: Callable[[int], dict[str, str]] = process_environ
    process_args: Callable[[int], list[str]] = process_args
    exists: Callable[[str], bool] = os.path.exists
    glob: Callable[[str], list[str]] = glob.glob
    root_a11y_bus: Callable[[str], str | None] = root_a11y_bus


@dataclass(frozen=True)
class Found:
    """What :func:`discover` found. ``display`` None: nothing usable (``problem`` says why)."""

    display: str | None = None
    session_bus: str | None = None
    xauthority: str | None = None
    sandbox_dir: str | None = None  # the display is a kept deskpilot sandbox
    source: str = ""  # where the display came from, for logs ("the systemd user environment")
    problem: str = ""
    candidates: tuple[str, ...] = field(default_factory=tuple)


def display_number(display: str) -> int | None:
    """``:1`` / ``:1.0`` / ``unix:1`` → 1; remote (``host:1``) → None."""
    m = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", display.strip())
    return int(m.group(1)) if m else None


def xauthority_for(
    display: str | None, env: Mapping[str, str], uid: int, probes: Probes
) -> str | None:
    """A cookie file for ``display`` when XAUTHORITY is unset: the X server's own ``-auth``
    file when readable, else where display managers put the user's (GDM, mutter's Xwayland,
    SDDM/KDE, startx), else None (Xlib then tries ~/.Xauthority itself)."""
    if env.get("XAUTHORITY"):
        return env["XAUTHORITY"]
    number = display_number(display) if display else None
    if number is not None and (pid := probes.server_pid(number)) is not None:
        args = probes.process_args(pid)
        for flag, value in itertools.pairwise(args):
            if flag == "-auth" and os.access(value, os.R_OK):
                return value
    runtime = env.get("XDG_RUNTIME_DIR") or _runtime_dir(uid)
    home = env.get("HOME", "")
    fixed = [f"{runtime}/gdm/Xauthority", f"{home}/.Xauthority" if home else ""]
    for path in fixed:
        if path and probes.exists(path):
            return path
    for pattern in (f"{runtime}/.mutter-Xwaylandauth.*", f"{runtime}/xauth_*"):
        matches = sorted(probes.glob(pattern))
        if matches:
            return matches[0]
    return None


def _session_bus(env: Mapping[str, str], uid: int, probes: Probes) -> str | None:
    runtime = env.get("XDG_RUNTIME_DIR") or _runtime_dir(uid)
    path = f"{runtime}/bus"
    return f"unix:path={path}" if probes.exists(path) else None


def discover(
    env: Mapping[str, str],
    *,
    state_dir: Path,
    uid: int | None = None,
    probes: Probes | None = None,
) -> Found:
    """Find the display (and its session bus and cookie) for an environment that may lack them.

    A ``DISPLAY`` already in ``env`` is kept; only what is missing is looked for."""
    uid = os.getuid() if uid is None else uid
    probes = probes or Probes()
    bus = env.get("DBUS_SESSION_BUS_ADDRESS") or None
    if env.get("DISPLAY"):
        display = env["DISPLAY"]
        return Found(
            display=display,
            session_bus=bus or _session_bus(env, uid, probes),
            xauthority=xauthority_for(display, env, uid, probes),
            source="DISPLAY",
        )

    systemd = probes.systemd_environment(uid, env)
    if systemd.get("DISPLAY"):
        display = systemd["DISPLAY"]
        cookie_env = dict(env)
        if not env.get("XAUTHORITY") and systemd.get("XAUTHORITY"):
            cookie_env["XAUTHORITY"] = systemd["XAUTHORITY"]
        return Found(
            display=display,
            session_bus=bus
            or systemd.get("DBUS_SESSION_BUS_ADDRESS")
            or _session_bus(env, uid, probes),
            xauthority=xauthority_for(display, cookie_env, uid, probes),
            source="the systemd user environment",
        )

    login = probes.login_display(uid, env)
    if login:
        return Found(
            display=login,
            session_bus=bus or _session_bus(env, uid, probes),
            xauthority=xauthority_for(login, env, uid, probes),
            source="your graphical login session (loginctl)",
        )

    kept = probes.kept_sandboxes(state_dir)
    if len(kept) == 1:
        [box] = kept
        return Found(
            display=box.display,
            session_bus=box.session_bus,
            sandbox_dir=box.runtime_dir,
            source=f"the sandbox kept with `deskpilot sandbox up` ({box.name!r})",
        )
    if len(kept) > 1:
        shown = tuple(f"{b.display} (sandbox {b.name!r})" for b in kept)
        return Found(
            problem="several kept sandboxes run ("
            + ", ".join(shown)
            + "); stop the others with `deskpilot sandbox down --name NAME` or set DISPLAY",
            candidates=shown,
        )

    usable: list[str] = []
    private: list[str] = []
    bare: list[str] = []
    for number in probes.x_socket_numbers():
        if not probes.socket_usable(number, uid):
            continue
        pid = probes.server_pid(number)
        runtime = probes.process_environ(pid).get("XDG_RUNTIME_DIR", "") if pid else ""
        if SANDBOX_MARK in runtime:
            private.append(f":{number}")
        elif not probes.has_window_manager(number):
            bare.append(f":{number}")
        else:
            usable.append(f":{number}")
    if len(usable) == 1:
        display = usable[0]
        return Found(
            display=display,
            session_bus=bus or _session_bus(env, uid, probes),
            xauthority=xauthority_for(display, env, uid, probes),
            source=f"the only X server socket in {X11_SOCKET_DIR}",
        )
    if usable:
        return Found(
            problem=f"several X displays are running ({', '.join(usable)}) and nothing says "
            "which one is yours: set DISPLAY to the one to use",
            candidates=tuple(usable),
        )
    notes = []
    if private:
        notes.append(f"{', '.join(private)}: other deskpilot processes' private sandboxes")
    if bare:
        notes.append(f"{', '.join(bare)}: X servers without a window manager")
    skipped = f" (left out {'; '.join(notes)})" if notes else ""
    return Found(
        problem="DISPLAY is not set and no desktop was found: no DISPLAY in the systemd user "
        "environment, no graphical login session, no kept sandbox, no desktop among the X "
        f"servers in {X11_SOCKET_DIR}{skipped}"
    )
