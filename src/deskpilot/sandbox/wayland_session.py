"""The start-up of a Wayland sandbox desktop (``kind`` "sway" or "gnome").

Same pieces as the X11 recipe — a minimal private session bus, the AT-SPI bus with
accessibility switched on, a private home — but every daemon runs as the sandbox's
unprivileged user (:mod:`~deskpilot.sandbox.user`), and a headless compositor
(:mod:`~deskpilot.sandbox.compositors`) replaces Xvfb and openbox. The session bus lets any uid
connect (``allow user="*"``): deskpilot, as root, reads the AT-SPI bus and calls Mutter from
outside the user's identity; the runtime dir (mode 0700, the user's) keeps everyone else out.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import Protocol

from deskpilot._wait import WaitTimeout, wait_for
from deskpilot.errors import SandboxError
from deskpilot.sandbox import services
from deskpilot.sandbox.compositors import Kind, start_compositor
from deskpilot.sandbox.info import SandboxInfo
from deskpilot.sandbox.recipe import (
    SESSION_BUS_CONFIG,
    enable_accessibility,
    find_bus_launcher,
    log_tail,
    read_line,
    session_bus_argv,
)
from deskpilot.sandbox.user import SandboxUser


class Host(Protocol):
    """What the session needs of its sandbox (:class:`~deskpilot.sandbox.lifecycle.Sandbox`)."""

    width: int
    height: int
    startup_timeout: float
    user: SandboxUser | None

    @property
    def runtime_dir(self) -> str: ...

    @property
    def pgid(self) -> int | None: ...

    def daemon(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        log: str,
        pass_fds: Sequence[int] = (),
    ) -> subprocess.Popen[bytes]: ...


def start_wayland(sb: Host, kind: Kind, base: dict[str, str]) -> SandboxInfo:
    """Start the session of a Wayland sandbox on ``sb``; ``base`` is the daemons' environment
    (private home and runtime dir already set). Returns the desktop's info."""
    run = sb.runtime_dir
    user = sb.user
    assert user is not None
    base.update(user.env())

    # 1. the session bus, as the user
    conf = os.path.join(run, "session.conf")
    with open(conf, "w") as fh:
        fh.write(
            SESSION_BUS_CONFIG.format(
                bus=os.path.join(run, "bus"), services=services.readable_service_dir(run)
            )
        )
    os.chmod(conf, 0o644)
    rfd, wfd = os.pipe()
    sb.daemon(session_bus_argv(conf, wfd), base, log="dbus.log", pass_fds=(wfd,))
    os.close(wfd)
    try:
        session_bus = read_line(rfd, sb.startup_timeout, "the session bus")
    except SandboxError as exc:
        raise SandboxError(f"{exc}; {log_tail(run, 'dbus.log')}") from exc
    finally:
        os.close(rfd)
    base["DBUS_SESSION_BUS_ADDRESS"] = session_bus

    # 2. the accessibility bus, switched on before any app starts
    sb.daemon([find_bus_launcher(), "--launch-immediately"], base, log="a11y.log")
    try:
        wait_for(
            lambda: _a11y_answers(base), timeout=sb.startup_timeout, what="the accessibility bus"
        )
    except WaitTimeout as exc:
        raise SandboxError(
            f"sandbox desktop did not come up: {exc}; {log_tail(run, 'a11y.log')}"
        ) from exc
    enable_accessibility(base, sb.startup_timeout)

    # 3. the compositor (and, for GNOME, PipeWire and WirePlumber)
    comp = start_compositor(kind, sb, base, sb.width, sb.height, sb.startup_timeout)
    assert sb.pgid is not None
    return SandboxInfo(
        display=comp.x_display,
        runtime_dir=run,
        session_bus=session_bus,
        pgid=sb.pgid,
        width=sb.width,
        height=sb.height,
        pids={"compositor": comp.pid},
        kind=kind,
        wayland_display=comp.wayland_display,
        xauthority=comp.xauthority,
        extra_env=dict(comp.env),
        uid=user.uid if user.switches else None,
    )


def _a11y_answers(env: dict[str, str]) -> bool:
    done = subprocess.run(
        [
            "dbus-send",
            "--session",
            "--print-reply",
            "--dest=org.a11y.Bus",
            "/org/a11y/bus",
            "org.a11y.Bus.GetAddress",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=5,
        check=False,
    )
    return done.returncode == 0 and "unix:" in done.stdout
