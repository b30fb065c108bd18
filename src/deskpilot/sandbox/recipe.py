"""The recipe of a sandbox desktop: what it needs installed, and the pieces of its start-up.

Xvfb, a minimal session bus (its only service dir is the sandbox's own, with the settings
services apps expect, :mod:`~deskpilot.sandbox.services`: no portals, gvfs or FUSE mounts), the
AT-SPI bus launcher and openbox; a private home with a LibreOffice profile that opens no
first-run dialogs; accessibility switched on on the bus (``tests/desktop/test_sandbox_services.py``
checks what apps get from it).
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from collections.abc import Mapping
from importlib import resources

from deskpilot.errors import SandboxError

REQUIRED_BINARIES = ("Xvfb", "dbus-daemon", "dbus-send", "openbox")
BUS_LAUNCHER_PATHS = (
    "/usr/libexec/at-spi-bus-launcher",
    "/usr/lib/at-spi2-core/at-spi-bus-launcher",
)


SESSION_BUS_CONFIG = """<busconfig>
  <type>session</type>
  <listen>unix:path={bus}</listen>
  <servicedir>{services}</servicedir>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def session_bus_argv(conf: str, address_fd: int) -> list[str]:
    """A dbus-daemon serving the session bus ``conf`` describes; it writes its address, one
    line, to ``address_fd`` once it answers (:func:`read_line`)."""
    return [
        "dbus-daemon",
        f"--config-file={conf}",
        "--nofork",
        "--nopidfile",
        f"--print-address={address_fd}",
    ]


def find_bus_launcher() -> str:
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
    find_bus_launcher()


def read_line(fd: int, timeout: float, what: str) -> str:
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


def prepare_home(runtime_dir: str) -> str:
    """Make the sandbox's private home and temp dir under ``runtime_dir``; return the home."""
    home = os.path.join(runtime_dir, "home")
    for sub in (".config", ".cache", ".local/share", ".local/state"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    os.makedirs(os.path.join(runtime_dir, "tmp"), exist_ok=True)
    lo_user = os.path.join(home, ".config", "libreoffice", "4", "user")
    os.makedirs(lo_user, exist_ok=True)
    # a fresh LibreOffice profile without Tip of the Day, first-run and recovery dialogs
    profile = resources.files("deskpilot") / "data" / "libreoffice-registrymodifications.xcu"
    with open(os.path.join(lo_user, "registrymodifications.xcu"), "w") as fh:
        fh.write(profile.read_text())
    return home


def enable_accessibility(env: Mapping[str, str], timeout: float) -> None:
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
        timeout=timeout,
    )


def log_tail(runtime_dir: str | None, name: str, lines: int = 5) -> str:
    """The last lines of one of the sandbox's daemon logs, for an error message."""
    if runtime_dir is None:
        return ""
    try:
        with open(os.path.join(runtime_dir, name), errors="replace") as fh:
            tail = fh.read().strip().splitlines()[-lines:]
    except OSError:
        return f"({name}: no log)"
    return f"{name}: " + " | ".join(tail) if tail else f"({name}: empty)"
